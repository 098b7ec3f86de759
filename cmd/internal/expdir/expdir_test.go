package expdir

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/replay"
)

var h100 = hardware.MustGPU("h100-sxm")

// TestWriteRead: every measured run written from the lab's table reads
// back as the experiment the table describes, with its measured stages.
func TestWriteRead(t *testing.T) {
	for _, run := range replay.Measured {
		dir := filepath.Join(t.TempDir(), run.Name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := Write(dir, run); err != nil {
			t.Fatal(err)
		}
		x, err := Read(dir, h100)
		if err != nil {
			t.Fatalf("%s: %v", run.Name, err)
		}
		want, err := run.Experiment(h100)
		if err != nil {
			t.Fatal(err)
		}
		if x.Name != run.Name || !reflect.DeepEqual(x.Workload, want.Workload) || x.Engine.TP != want.Engine.TP ||
			x.Engine.MaxNumSeqs != want.Engine.MaxNumSeqs || x.Engine.Model.Params != want.Engine.Model.Params || x.Engine.Model.Experts != want.Engine.Model.Experts {
			t.Errorf("%s: read %+v\nwant %+v", run.Name, x.Experiment, want)
		}
		if !x.KnownTokenizer || len(x.Measured) != len(run.Stages) {
			t.Fatalf("%s: tokenizer known %v, %d measured stages", run.Name, x.KnownTokenizer, len(x.Measured))
		}
		for k, s := range x.Measured {
			w := run.Stages[k]
			if s.Sent != w.Sent || s.Failed != w.Failed || math.Abs(s.TTFT.P90-w.TTFT.P90) > 1e-9 || math.Abs(s.E2E.Mean-w.E2E.Mean) > 1e-9 || s.Rate != w.Rate {
				t.Errorf("%s stage %d: read %+v, want %+v", run.Name, k, s, w)
			}
		}
	}
}

// TestReadPublished reads the published directories where they are
// present beside the repository and checks them against the lab's table.
func TestReadPublished(t *testing.T) {
	root := os.Getenv("INFERLAB_GROUNDTRUTH")
	if root == "" {
		t.Skip("INFERLAB_GROUNDTRUTH names no directory of the published runs")
	}
	for _, run := range replay.Measured {
		x, err := Read(filepath.Join(root, run.Name), h100)
		if err != nil {
			t.Fatalf("%s: %v", run.Name, err)
		}
		want, _ := run.Experiment(h100)
		if !reflect.DeepEqual(x.Workload, want.Workload) {
			t.Errorf("%s: workload %+v, the table's %+v", run.Name, x.Workload, want.Workload)
		}
		for k, s := range x.Measured {
			w := run.Stages[k]
			if s.Sent != w.Sent || math.Abs(s.TTFT.Mean-w.TTFT.Mean) > 0.01 || math.Abs(s.E2E.P99-w.E2E.P99) > 0.01 {
				t.Errorf("%s stage %d: published %+v, the table's %+v", run.Name, k, s, w)
			}
		}
		if len(x.Notes) == 0 || !strings.Contains(strings.Join(x.Notes, " "), "num_unique_system_prompts") {
			t.Errorf("%s: notes %q, want the ignored profile keys named", run.Name, x.Notes)
		}
	}
}

// TestReadRefuses names the file and the field of bad input.
func TestReadRefuses(t *testing.T) {
	run := replay.Measured[0]
	for _, c := range []struct {
		file, old, new string // replace old by new in file ("" new with "" old: delete the file)
		want           string
	}{
		{ExpConfig, "", "", "exp-config.yaml: missing"},
		{ModelConfig, "", "", "config.json: missing"},
		{ResultsConfig, "type: shared_prefix", "type: random", "results/config.yaml: data.type: \"random\" is not allowed"},
		{ResultsConfig, "type: constant", "type: poisson", "results/config.yaml: load.type: \"poisson\""},
		{ResultsConfig, "num_groups: 10", "num_groups: ten", "data.shared_prefix.num_groups: \"ten\" is not allowed: want an integer"},
		{ResultsConfig, "  - rate: 5", "  - rate: -5", "load.stages[0].rate: -5 is not allowed"},
		{ResultsConfig, "ignore_eos: true", "ignore_eos: false", "server.ignore_eos"},
		{ExpConfig, "tensor_parallelism: 1", "tensor_parallelism: 3", "exp-config.yaml"},
		{ExpConfig, "max_num_seqs: 128", "max_num_seqs: 0", "exp-config.yaml: max_num_seqs: 0 is not allowed"},
		{ModelConfig, `"model_type": "llama"`, `"model_type": "bert"`, "config.json: model_type"},
		{ModelConfig, `"num_hidden_layers": 32`, `"num_hidden_layers": -1`, "config.json: num_hidden_layers"},
		{StageFile(1), "", "", "results/stage_1_lifecycle_metrics.json: missing"},
		{StageFile(0), `"count": 3000`, `"count": "many"`, "results/stage_0_lifecycle_metrics.json:"},
		{ResultsConfig, "api:", "api: [", "results/config.yaml: not YAML"},
	} {
		dir := t.TempDir()
		if err := Write(dir, run); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, c.file)
		if c.old == "" {
			os.Remove(p)
		} else {
			b, _ := os.ReadFile(p)
			if !strings.Contains(string(b), c.old) {
				t.Fatalf("%s has no %q", c.file, c.old)
			}
			os.WriteFile(p, []byte(strings.Replace(string(b), c.old, c.new, 1)), 0o644)
		}
		_, err := Read(dir, h100)
		var fe *FieldError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %q→%q: %v, want a FieldError containing %q", c.file, c.old, c.new, err, c.want)
		}
	}
}
