package sim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/app/urlstate"
	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/modelconfig"
	"github.com/inferlab/inferlab/lessons"
)

// TestCustomRequest: an address carrying a model's and a GPU's tokens
// gives a request that carries them, and the worker, starting from no
// registration at all, runs it on them: the same metrics as the lesson run
// natively on the parsed config (what `inferlab run --model-config` does).
func TestCustomRequest(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "core", "modelconfig", "testdata", "gemma-2-9b.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := modelconfig.Parse(data, "gemma-2-9b")
	if err != nil {
		t.Fatal(err)
	}
	// A lesson whose model knob sizes any model, found by what it has.
	var l *lessons.Lesson
	for _, c := range lessons.All() {
		if p, ok := c.Param("model"); ok && p.Kind == lessons.Choice && urlstate.SizesAnyModel(p) {
			if _, gpu := c.Param("gpu"); gpu {
				l = c
				break
			}
		}
	}
	if l == nil {
		t.Skip("no lesson sizes any model on a GPU")
	}
	gpu := "v1_40_1555_312_0_300_small-a100"
	query := "step=2&model=custom:gemma-2-9b&gpu=custom:small-a100&mc=" + cfg.Token() + "&gc=" + gpu
	req, ok := ForAddress("/lesson/"+l.Slug, query)
	if !ok || req.Model != cfg.Token() || req.GPU != gpu || req.Params["model"] != "custom:gemma-2-9b" || req.Params["gpu"] != "custom:small-a100" {
		t.Fatalf("ForAddress: %+v", req)
	}
	hardware.UnregisterCustomModel("custom:gemma-2-9b")
	hardware.UnregisterCustomGPU("custom:small-a100")
	rep, s, err := Decode(Run(req))
	if err != nil || rep.Failure != nil || s == nil {
		t.Fatalf("Run: %v %+v", err, rep.Failure)
	}

	if err := hardware.RegisterCustomModel(cfg.Model); err != nil {
		t.Fatal(err)
	}
	spec, err := hardware.ParseGPUToken(gpu)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hardware.RegisterCustomGPU(spec); err != nil {
		t.Fatal(err)
	}
	lc := urlstate.WithChoices(l, map[string]string{"model": cfg.Model.ID, "gpu": "custom:small-a100"})
	native, _, err := lc.Run(req.Params)
	if err != nil {
		t.Fatal(err)
	}
	if len(native.Metrics) != len(s.Metrics) {
		t.Fatalf("%d metrics, %d natively", len(s.Metrics), len(native.Metrics))
	}
	for i, m := range native.Metrics {
		if s.Metrics[i] != m {
			t.Errorf("%s: %v from the request, %v natively", m.Key, s.Metrics[i].Value, m.Value)
		}
	}

	// A request whose token does not decode is a failure that says so.
	bad := req
	bad.Model = "v1.llama"
	rep, _, err = Decode(Run(bad))
	if err != nil || rep.Failure == nil || !strings.Contains(rep.Failure.Message, "mc: token") {
		t.Errorf("a bad token: %v %+v", err, rep.Failure)
	}
	// Without the tokens the custom ids are refused as any unknown choice.
	plain := req
	plain.Model, plain.GPU = "", ""
	rep, _, _ = Decode(Run(plain))
	if rep.Failure == nil || !strings.Contains(rep.Failure.Message, "custom:") {
		t.Errorf("no tokens: %+v", rep.Failure)
	}
}
