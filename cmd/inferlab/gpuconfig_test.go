package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/core/hardware"
)

// writeFile writes body to dir/name and returns its path.
func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// h100JSON is an H100 SXM's figures with the memory vLLM sees of it.
const h100JSON = `{"name": "My H100", "memory_gib": 79.19, "hbm_gbps": 3350, "bf16_tflops": 989.4, "fp8_tflops": 1979, "interconnect_gbps": 450}`

// An H100 SXM's figures in a --gpu-config file size kv-budget's pool
// exactly as the h100-sxm profile does (the same memory, as the engine
// sees it), and twice the memory gives more KV: the figure follows the
// file. The GPU is unregistered after the command.
func TestGPUConfigKVBudget(t *testing.T) {
	dir := t.TempDir()
	mine := runJSON(t, "run", "kv-budget", "--gpu-config", writeFile(t, dir, "h100.json", h100JSON), "--format", "json")
	builtin := runJSON(t, "run", "kv-budget", "--format", "json")
	if mine.Params["gpu"] != "custom:my-h100" {
		t.Errorf("gpu = %v, want custom:my-h100 (the file's name field, as a slug)", mine.Params["gpu"])
	}
	for _, k := range []string{"total_gib", "kv_tokens", "max_concurrency"} {
		if mine.Metrics[k] != builtin.Metrics[k] {
			t.Errorf("%s: %v with the H100's figures, %v on h100-sxm", k, mine.Metrics[k], builtin.Metrics[k])
		}
	}
	big := strings.Replace(h100JSON, `"memory_gib": 79.19`, `"memory_gib": 158.38`, 1)
	bigger := runJSON(t, "run", "kv-budget", "--gpu-config", writeFile(t, dir, "big.json", big), "--format", "json")
	if bigger.Metrics["kv_tokens"] <= 2*mine.Metrics["kv_tokens"] {
		t.Errorf("twice the memory: %v KV tokens, %v with 79.19 GiB: want more than twice (the weights stay)", bigger.Metrics["kv_tokens"], mine.Metrics["kv_tokens"])
	}
	if _, err := hardware.GPUByID("custom:my-h100"); err == nil {
		t.Error("the custom GPU is still registered after the command")
	}
	// A file without a name field is named after the file.
	noName := strings.Replace(h100JSON, `"name": "My H100", `, "", 1)
	if r := runJSON(t, "run", "kv-budget", "--gpu-config", writeFile(t, dir, "Lab GPU.json", noName), "--format", "json"); r.Params["gpu"] != "custom:lab-gpu" {
		t.Errorf("gpu = %v, want custom:lab-gpu", r.Params["gpu"])
	}
}

// A lesson that prices steps runs on the custom GPU, and with --model-config
// too; the text output says what was read and what was derived.
func TestGPUConfigText(t *testing.T) {
	path := writeFile(t, t.TempDir(), "h100.json", h100JSON)
	code, out, errOut := run("run", "roofline", "--gpu-config", path, "--model-config", configFile("qwen2.5-7b.json"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"gpu from " + path + ": custom:my-h100: 79.19 GiB (85,029,615,043 bytes), 3,350 GB/s, 989.4 dense BF16 TFLOP/s, 1,979 dense FP8 TFLOP/s, 450 GB/s per direction to its peers",
		"derived: Hopper's efficiency factors",
		"gpu=custom:my-h100", "model=custom:qwen2.5-7b",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%.900s", want, out)
		}
	}
	// The H100's figures by hand run a served load as the profile does:
	// diff finds nothing between the two.
	code, out, errOut = run("diff", "measuring", "--gpu-config", path, "--vs", "gpu=h100-sxm", "--set", "points=2", "--set", "duration_s=2", "--format", "json")
	if code != 0 {
		t.Fatalf("diff: exit %d: %s", code, errOut)
	}
	var d struct {
		Metrics []struct {
			Key  string  `json:"key"`
			Diff float64 `json:"diff"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil || len(d.Metrics) == 0 {
		t.Fatalf("diff JSON: %v: %.300s", err, out)
	}
	for _, m := range d.Metrics {
		if m.Diff != 0 {
			t.Errorf("measuring %s differs by %v between custom:my-h100 and h100-sxm", m.Key, m.Diff)
		}
	}
}

// Bad files and misuses exit 2 naming the field, the value and what is
// allowed.
func TestGPUConfigRefusals(t *testing.T) {
	dir := t.TempDir()
	with := func(name, from, to string) string {
		return writeFile(t, dir, name, strings.Replace(h100JSON, from, to, 1))
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"memory too small", []string{"run", "kv-budget", "--gpu-config", with("small.json", "79.19", "4")},
			[]string{"--gpu-config", "memory_gib = 4 is not allowed: want a number from 8 to 1,024 (GiB)"}},
		{"bandwidth too high", []string{"run", "measuring", "--gpu-config", with("fast.json", "3350", "60000")},
			[]string{"hbm_gbps = 60,000 is not allowed: want a number from 100 to 50,000 (GB/s)"}},
		{"fp8 below bf16", []string{"run", "kv-budget", "--gpu-config", with("fp8.json", "1979", "100")},
			[]string{"fp8_tflops = 100 is not allowed", "at least bf16_tflops (989.4)"}},
		{"a figure as text", []string{"run", "kv-budget", "--gpu-config", with("text.json", "3350", `"3350"`)},
			[]string{`hbm_gbps = "3350" is not allowed: want a number from 100`}},
		{"a figure missing", []string{"run", "kv-budget", "--gpu-config", with("missing.json", `"bf16_tflops": 989.4, `, "")},
			[]string{"bf16_tflops is missing: want a number from 10 to 20,000 (TFLOP/s)"}},
		{"an unknown field", []string{"run", "kv-budget", "--gpu-config", with("unknown.json", `"hbm_gbps"`, `"hbm_tbps"`)},
			[]string{`"hbm_tbps" is not a field of a GPU: want name, memory_gib, hbm_gbps`}},
		{"a field twice", []string{"run", "kv-budget", "--gpu-config", with("twice.json", `"hbm_gbps": 3350`, `"hbm_gbps": 3350, "hbm_gbps": 3000`)},
			[]string{"hbm_gbps is given twice"}},
		{"a name not a string", []string{"run", "kv-budget", "--gpu-config", with("name.json", `"My H100"`, "7")},
			[]string{"name = 7 is not allowed: want a non-empty string"}},
		{"not an object", []string{"run", "kv-budget", "--gpu-config", writeFile(t, dir, "list.json", "[1, 2]")},
			[]string{"not a JSON object"}},
		{"two objects", []string{"run", "kv-budget", "--gpu-config", writeFile(t, dir, "two.json", h100JSON+h100JSON)},
			[]string{"more follows the closing brace"}},
		{"a directory", []string{"run", "kv-budget", "--gpu-config", dir}, []string{"is a directory: want a regular file"}},
		{"no gpu knob", []string{"run", "garage", "--gpu-config", with("ok.json", "", "")}, []string{"lessons that pick a GPU", "kv-budget", "not garage"}},
		{"two GPUs", []string{"run", "kv-budget", "--gpu-config", with("ok2.json", "", ""), "--set", "gpu=b200"}, []string{"--set gpu=b200 and --gpu-config", "give one"}},
		{"the lesson's own checks", []string{"run", "kv-budget", "--gpu-config", with("tiny.json", "79.19", "8"), "--set", "model=llama-3.1-70b"},
			[]string{"custom:my-h100", "llama-3.1-70b"}},
		{"diff too", []string{"diff", "kv-budget", "--gpu-config", with("small2.json", "79.19", "4"), "--vs", "tp=2"}, []string{"inferlab diff kv-budget", "memory_gib = 4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(tc.args...)
			if code != 2 || out != "" {
				t.Errorf("exit %d, stdout %.100q; want 2 and nothing", code, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q lacks %q", errOut, w)
				}
			}
		})
	}
}

// The README's example GPU file is the one its command reads.
func TestReadmeGPUFile(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile("../../core/hardware/testdata/big-h100.json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```json\n"+string(file)+"```") {
		t.Errorf("README does not show core/hardware/testdata/big-h100.json as it is:\n%s", file)
	}
}
