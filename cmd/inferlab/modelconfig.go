package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/inferlab/inferlab/app/urlstate"
	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/modelconfig"
	"github.com/inferlab/inferlab/lessons"
)

// The --model-config flag brings a reader's own model into any lesson that
// picks one. A lesson's "model" knob is a choice among profile ids, which
// it resolves with hardware.ModelByID; the parsed model is registered there
// under "custom:NAME" (hardware.RegisterCustomModel), and the lesson is run
// as a copy whose model knob lists that id too (urlstate.WithChoices, as the
// page does), so no lesson names the custom model and every lesson's own
// checks (does it fit, does TP split it) hold it to the same rules as its
// built-in models.

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
// that prices steps (urlstate.TakesModel).
func loadModelConfig(l *lessons.Lesson, path string) (*lessons.Lesson, *customModel, error) {
	if p, ok := l.Param("model"); !ok || p.Kind != lessons.Choice {
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
	if ok, why := urlstate.TakesModel(l, cfg); !ok {
		return nil, nil, fmt.Errorf("--model-config %s: %s", path, why)
	}
	if err := hardware.RegisterCustomModel(cfg.Model); err != nil {
		return nil, nil, fmt.Errorf("--model-config %s: %v", path, err)
	}
	return urlstate.WithChoices(l, map[string]string{"model": cfg.Model.ID}), &customModel{config: cfg, path: path}, nil
}

// modelLessons lists the lessons with a model knob; sizing, only those
// whose knob takes any model (the page's rule too: urlstate.TakesModel).
func modelLessons(sizing bool) []string { return urlstate.ModelLessons(sizing) }

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
// open, without blocking, so a named pipe or a device cannot hang it; a
// larger file is refused by its size (a 10 MB one was once reported as
// "1048577 bytes", what was read of it).
func readConfigFile(path string) ([]byte, error) {
	return readBounded(path, "a config.json", modelconfig.MaxBytes)
}

// writeModelSummary prints, above a text run, what was read from the file.
func writeModelSummary(w io.Writer, c *customModel) {
	fmt.Fprintf(w, "model from %s: %s\n", c.path, c.config.Summary())
	for _, n := range c.config.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	fmt.Fprintln(w)
}
