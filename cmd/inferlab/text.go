package main

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/scene"
)

// writeText renders a script for a terminal: each step's narration and a
// compact text form of its scenes, then the final metrics.
func writeText(w io.Writer, l *lessons.Lesson, v lessons.Values, s *lessons.Script) {
	fmt.Fprintf(w, "%s — %s (%s)\n", l.Slug, l.Title, l.Part)
	keys := make([]string, 0)
	text := v.Text()
	for k := range text {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var ps []string
	for _, k := range keys {
		ps = append(ps, k+"="+text[k])
	}
	fmt.Fprintf(w, "params: %s\n\n", strings.Join(ps, " "))
	for i, st := range s.Steps {
		if q := st.Quiz; q != nil {
			fmt.Fprintf(w, "Checkpoint before step %d: %s\n", i+1, q.Question)
			if len(q.Choices) > 0 {
				fmt.Fprintf(w, "  choices: %s\n", strings.Join(q.Choices, " | "))
			}
			fmt.Fprintf(w, "  answer: %s\n\n", q.Answer)
		}
		fmt.Fprintf(w, "Step %d/%d: %s\n%s\n", i+1, len(s.Steps), st.Title, wrap(st.Narration, 100, "  "))
		for _, sc := range st.Scenes {
			if t := sceneText(sc); t != "" {
				fmt.Fprintf(w, "  [%s] %s\n", sc.Title, t)
			}
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "Metrics:")
	for _, m := range s.Metrics {
		fmt.Fprintf(w, "  %-32s %12s %-10s %s\n", m.Key, strconv.FormatFloat(m.Value, 'f', -1, 64), m.Unit, m.Label)
	}
	if len(s.Claims) > 0 {
		fmt.Fprintln(w, "\nArticle claim vs this model:")
		for _, c := range s.Claims {
			fmt.Fprintf(w, "  %s\n    article: %s\n    model:   %s\n%s\n", c.What, c.Article, c.Model, wrap("why: "+c.Why, 100, "    "))
		}
	}
}

// sceneText summarises a scene in one line; charts and tables are left to
// the metrics and claims printed at the end.
func sceneText(sc scene.Scene) string {
	switch sc.Kind {
	case scene.KindPools:
		if sc.Grid == nil || sc.Strip == nil {
			return ""
		}
		g, st := sc, sc
		g.Kind, st.Kind = scene.KindBlockGrid, scene.KindMemoryStrip
		out := "paged: " + sceneText(g) + "; contiguous: " + sceneText(st)
		for _, q := range sc.Queues {
			var names []string
			for _, it := range q.Items {
				n := it.Label
				if it.State != "" && it.State != "waiting" {
					n += " (" + it.State + ")"
				}
				names = append(names, n)
			}
			if q.More > 0 {
				names = append(names, fmt.Sprintf("+%d more", q.More))
			}
			if len(names) > 0 {
				out += "; waiting for " + q.Pool + ": " + strings.Join(names, " ")
			}
		}
		return out
	case scene.KindBlockGrid:
		var row strings.Builder
		used := 0
		for _, b := range sc.Grid.Blocks {
			if b.Owner == scene.Free {
				row.WriteByte('.')
			} else {
				used++
				row.WriteByte(ownerGlyph(b.Owner))
			}
		}
		g := row.String()
		if len(g) > 128 {
			g = g[:128] + "…"
		}
		return fmt.Sprintf("%d/%d blocks in use %s", used, len(sc.Grid.Blocks), g)
	case scene.KindMemoryStrip:
		var parts []string
		at := 0
		for _, seg := range sc.Strip.Segments {
			if seg.Start > at {
				parts = append(parts, fmt.Sprintf("hole %d", seg.Start-at))
			}
			parts = append(parts, fmt.Sprintf("%s %d/%d", seg.Label, seg.Used, seg.Len))
			at = seg.Start + seg.Len
		}
		if at < sc.Strip.Total {
			parts = append(parts, fmt.Sprintf("hole %d", sc.Strip.Total-at))
		}
		return strings.Join(parts, " | ")
	case scene.KindCards:
		var parts []string
		for _, c := range sc.Cards {
			parts = append(parts, fmt.Sprintf("%s %s%s", c.Label, strconv.FormatFloat(c.Value, 'f', -1, 64), c.Unit))
		}
		return strings.Join(parts, "; ")
	case scene.KindFormula:
		return sc.Formula.Expr + ": " + sc.Formula.Result
	case scene.KindMemoryStack, scene.KindSlots, scene.KindTokens:
		return figureText(sc)
	}
	return systemsText(sc)
}

func ownerGlyph(id int) byte {
	const glyphs = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	return glyphs[id%len(glyphs)]
}

func wrap(s string, width int, indent string) string {
	var out, line strings.Builder
	for _, word := range strings.Fields(s) {
		if line.Len() > 0 && line.Len()+1+len(word) > width {
			out.WriteString(indent + line.String() + "\n")
			line.Reset()
		}
		if line.Len() > 0 {
			line.WriteByte(' ')
		}
		line.WriteString(word)
	}
	if line.Len() > 0 {
		out.WriteString(indent + line.String())
	}
	return out.String()
}
