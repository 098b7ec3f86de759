package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/inferlab/inferlab/scene"
)

// figureText summarises a memory stack, slot chart or token strip (the
// figures of kv-budget, batching and speculative-decoding) in a line or a
// few: what the figure's marks name.
func figureText(sc scene.Scene) string {
	switch {
	case sc.Kind == scene.KindMemoryStack && sc.Memory != nil:
		return memoryText(sc.Memory)
	case sc.Kind == scene.KindSlots && sc.Slots != nil:
		return slotsText(sc.Slots)
	case sc.Kind == scene.KindTokens && sc.Tokens != nil:
		return tokensText(sc.Tokens)
	}
	return ""
}

func num(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

func memoryText(ms *scene.MemoryStack) string {
	var parts []string
	for _, p := range ms.Parts {
		if p.Size > 0 {
			parts = append(parts, p.Label)
		}
	}
	out := strings.Join(parts, " | ") + " (of " + num(ms.Total) + " " + ms.Unit + ")"
	for _, c := range ms.PerToken {
		out += fmt.Sprintf("\n    %s %s: %s B per token", c.Kind, c.Label, num(c.Bytes))
	}
	if ms.Fit != nil {
		out += "\n    " + ms.Fit.Label
	}
	return out
}

func slotsText(sc *scene.SlotChart) string {
	var lines []string
	for _, l := range sc.Lanes {
		busy, pad, idle := 0.0, 0.0, 0.0
		for _, b := range l.Bars {
			d := b.End - b.Start
			switch b.Class {
			case "padding":
				pad += d
			case "idle":
				idle += d
			default:
				busy += d
			}
		}
		line := fmt.Sprintf("%s: %d slots, %d bars; slot-%s working %.2f, padding %.2f, idle %.2f", l.Label, l.Slots, len(l.Bars), sc.Unit, busy, pad, idle)
		if l.Note != "" {
			line += " (" + l.Note + ")"
		}
		lines = append(lines, line)
	}
	return fmt.Sprintf("%s–%s %s\n    %s", num(sc.From), num(sc.To), sc.Unit, strings.Join(lines, "\n    "))
}

// tokenGlyph marks a token's state in text: accepted as is, rejected
// struck with ~, discarded in parentheses, the target's own token in [].
func tokenGlyph(t scene.Token) string {
	switch t.State {
	case "rejected":
		return "~" + t.Text + "~"
	case "discarded":
		return "(" + t.Text + ")"
	case "bonus", "resampled":
		return "[" + t.Text + "]"
	}
	return t.Text
}

func tokensText(ts *scene.TokenStrip) string {
	var lines []string
	for _, r := range ts.Rows {
		var toks []string
		for _, t := range r.Tokens {
			toks = append(toks, tokenGlyph(t))
		}
		line := r.Label + ": " + strings.Join(toks, " ")
		if r.Note != "" {
			line += "  — " + r.Note
		}
		lines = append(lines, line)
	}
	return "\n    " + strings.Join(lines, "\n    ")
}
