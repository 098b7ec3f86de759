package main

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/modelconfig"
	"github.com/inferlab/inferlab/lessons"
)

// The --model-config flag brings a reader's own model into any lesson that
// picks one. A lesson's "model" knob is a choice among profile ids, which
// it resolves with hardware.ModelByID; the parsed model is registered there
// under "custom:NAME" (hardware.RegisterCustomModel), and the lesson is run
// as a copy whose model knob lists that id too, so no lesson names the
// custom model and every lesson's own checks (does it fit, does TP split
// it) hold it to the same rules as its built-in models.

// customModel is a model read from --model-config and registered for one
// command; release unregisters it.
type customModel struct {
	config *modelconfig.Config
	path   string
}

// release unregisters the model; nil (no --model-config) does nothing.
func (c *customModel) release() {
	if c != nil {
		hardware.UnregisterCustomModel(c.config.Model.ID)
	}
}

// modelConfigUsage is the --model-config flag's help.
const modelConfigUsage = "lessons that pick a model: run it on the model of this Hugging Face config.json (llama, mistral, qwen2, qwen3, gemma, gemma2, mixtral, qwen2_moe, qwen3_moe, deepseek_v2, deepseek_v3), as model=custom:NAME"

// applyModelConfig handles --model-config for command cmd: when the flag
// is given, it loads the model (loadModelConfig), replaces *l by the copy
// that offers it, and sets the model knob to it. It refuses, on stderr, a
// --set model= naming another model. ok is false when the command must
// exit 2; custom is nil when the flag was not given.
func applyModelConfig(cmd string, l **lessons.Lesson, flag textFlag, sets setFlags, stderr io.Writer) (custom *customModel, ok bool) {
	if !flag.set {
		return nil, true
	}
	lc, custom, err := loadModelConfig(*l, flag.value)
	if err != nil {
		fmt.Fprintln(stderr, printable(fmt.Sprintf("%s %s: %v", cmd, (*l).Slug, err)))
		return nil, false
	}
	id := custom.config.Model.ID
	if v, given := sets["model"]; given && !strings.EqualFold(strings.TrimSpace(v), id) {
		custom.release()
		fmt.Fprintln(stderr, printable(fmt.Sprintf("%s %s: --set model=%s and --model-config %s both pick the model: give one", cmd, (*l).Slug, v, flag.value)))
		return nil, false
	}
	sets["model"] = id
	*l = lc
	return custom, true
}

// loadModelConfig reads, checks and registers the model of path for the
// lesson l and returns the lesson to run: a copy of l whose model knob
// also lists the custom id. It refuses, with a message for stderr, a
// lesson without a model knob, a file that is not a config the parser
// takes, and a mixture-of-experts or latent-attention model in a lesson
// that prices steps (see sizesOnly).
func loadModelConfig(l *lessons.Lesson, path string) (*lessons.Lesson, *customModel, error) {
	p, ok := l.Param("model")
	if !ok || p.Kind != lessons.Choice {
		return nil, nil, fmt.Errorf("--model-config works with the lessons that pick a model (%s), not %s", strings.Join(modelLessons(false), ", "), l.Slug)
	}
	data, err := readConfigFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("--model-config %s: %v", path, err)
	}
	cfg, err := modelconfig.Parse(data, configName(path))
	if err != nil {
		return nil, nil, fmt.Errorf("--model-config %s: %w", path, err)
	}
	if !cfg.Dense() && !sizesAnyModel(p) {
		what := "is a mixture of experts"
		if cfg.Experts == 0 {
			what = "uses multi-head latent attention"
		}
		return nil, nil, fmt.Errorf("--model-config %s: %s %s, and %s prices each step with a model of Llama-like dense decoders: use a dense model here, or a lesson that sizes memory for any model (%s)",
			path, cfg.Model.ID, what, l.Slug, strings.Join(modelLessons(true), ", "))
	}
	if err := hardware.RegisterCustomModel(cfg.Model); err != nil {
		return nil, nil, fmt.Errorf("--model-config %s: %v", path, err)
	}
	return withModelChoice(l, cfg.Model.ID), &customModel{config: cfg, path: path}, nil
}

// withModelChoice returns a copy of l whose model knob lists id after its
// own choices (the lesson's default stays its default). The copy shares
// l's simulation and checks; only its parameter list is its own.
func withModelChoice(l *lessons.Lesson, id string) *lessons.Lesson {
	c := *l
	c.Params = slices.Clone(l.Params)
	for i, p := range c.Params {
		if p.Key == "model" {
			p.Choices = append(slices.Clone(p.Choices), id)
			c.Params[i] = p
		}
	}
	return &c
}

// sizesAnyModel reports whether a lesson's model knob offers profiles
// beyond hardware.Models (the priced dense decoders): a lesson that lists
// the sizing profiles (MQA, MLA, mixtures of experts) only sizes memory,
// and takes any model; one that lists priced profiles only runs the
// step-time model, which prices dense decoders.
func sizesAnyModel(p lessons.Param) bool {
	priced := map[string]bool{}
	for _, m := range hardware.Models() {
		priced[m.ID] = true
	}
	for _, c := range p.Choices {
		if !priced[c] {
			return true
		}
	}
	return false
}

// modelLessons lists the lessons with a model knob; sizing, only those
// whose knob takes any model (sizesAnyModel).
func modelLessons(sizing bool) []string {
	var out []string
	for _, l := range lessons.All() {
		if p, ok := l.Param("model"); ok && p.Kind == lessons.Choice && (!sizing || sizesAnyModel(p)) {
			out = append(out, l.Slug)
		}
	}
	return out
}

// configName names the model after its file: "my-llama.json" gives
// "my-llama"; a file called config.json, as Hugging Face names it, takes
// its folder's name (models/Llama-3.1-8B/config.json gives "Llama-3.1-8B").
func configName(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	base := strings.TrimSuffix(filepath.Base(abs), filepath.Ext(abs))
	if strings.EqualFold(base, "config") {
		if dir := filepath.Base(filepath.Dir(abs)); dir != "." && dir != string(filepath.Separator) {
			return dir
		}
	}
	return base
}

// readConfigFile reads a regular file of at most modelconfig.MaxBytes, as
// readTrace reads a trace: checked before it is opened and again once
// open, without blocking, so a named pipe or a device cannot hang it.
func readConfigFile(path string) ([]byte, error) {
	f, err := openRegular(path, "a config.json")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, modelconfig.MaxBytes+1))
	if err != nil {
		return nil, err
	}
	return data, nil
}

// writeModelSummary prints, above a text run, what was read from the file.
func writeModelSummary(w io.Writer, c *customModel) {
	fmt.Fprintf(w, "model from %s: %s\n", c.path, c.config.Summary())
	for _, n := range c.config.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	fmt.Fprintln(w)
}
