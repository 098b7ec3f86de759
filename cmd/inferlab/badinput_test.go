package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/core/modelconfig"
)

// A knob that a trace replaces is refused with --trace, naming it (exit
// 2): `run sandbox --trace t.jsonl --set requests=4 --set rate=1000 --set
// workload=azure-conv` once exited 0 with requests 4 and azure-conv in the
// JSON of a run of the trace's own requests. The JSON of a trace run lists
// only the knobs the run read.
func TestRunTraceRefusesIgnoredKnobs(t *testing.T) {
	dir := t.TempDir()
	trace := writeFile(t, dir, "t.jsonl", `{"arrival_s": 0, "prompt_tokens": 512, "output_tokens": 16}
{"arrival_s": 0.2, "prompt_tokens": 600, "output_tokens": 16}
`)
	for _, kv := range []string{"requests=4", "rate=1000", "workload=azure-conv", "rate=8"} {
		k, v, _ := strings.Cut(kv, "=")
		code, out, errOut := run("run", "sandbox", "--trace", trace, "--set", kv, "--format", "json")
		if code != 2 || out != "" || !strings.Contains(errOut, k+` = "`+v+`" is not allowed: want no value with a trace`) {
			t.Errorf("--set %s with --trace: exit %d, stderr %q; want exit 2 naming %s", kv, code, errOut, k)
		}
	}
	code, out, errOut := run("run", "sandbox", "--trace", trace, "--seed", "7", "--format", "json")
	if code != 0 {
		t.Fatalf("--seed with --trace: exit %d: %s", code, errOut)
	}
	var got struct {
		Params map[string]any `json:"params"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"requests", "rate", "workload"} {
		if v, ok := got.Params[k]; ok {
			t.Errorf("a trace run's params list %s = %v, a knob it did not read", k, v)
		}
	}
	if got.Params["seed"] != 7.0 || got.Params["policy"] != "kv_aware" {
		t.Errorf("params %v: want the knobs the run read, seed 7 among them", got.Params)
	}
}

// A value that rounds to zero is refused where 0 is not that value: the
// seed and integer knobs (1e-400 became 0), the price and power per GPU
// (4.9e-324 priced every token at $0 and 0 J), each with the knob's
// range (exit 2).
func TestRunRefusesValuesThatRoundToZero(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "garage", "--seed", "1e-400"}, `seed = "1e-400" is not allowed: want an integer from 0 to 2147483648`},
		{[]string{"run", "garage", "--set", "block_size=16.0000000000000001"}, `block_size = "16.0000000000000001" is not allowed: want an integer`},
		{[]string{"run", "sandbox", "--set", "usd_per_gpu_hour=4.9e-324"}, `usd_per_gpu_hour = "4.9e-324" is not allowed: want 0 (the chosen GPU's cited price) or a number from 0.01 to 100`},
		{[]string{"run", "sandbox", "--set", "board_power_w=4.9e-324"}, `board_power_w = "4.9e-324" is not allowed: want 0 (the chosen GPU's board power) or a number from 1 to 2000`},
		{[]string{"run", "sandbox", "--set", "slo_ttft_ms=1e-400"}, `slo_ttft_ms = "1e-400" is not allowed: want 0 (none) or a number from 1 to 60000`},
	} {
		code, out, errOut := run(tc.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

// `list` takes --format text|json and nothing else: `list --bogus-flag`,
// `list --format json` (which printed text) and `list garage extra` once
// exited 0.
func TestListFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"list", "--bogus-flag"}, "flag provided but not defined: -bogus-flag"},
		{[]string{"list", "garage", "extra"}, `inferlab list: unexpected argument "garage"`},
		{[]string{"list", "--format", "yaml"}, `inferlab list: --format = "yaml" is not allowed: want text or json`},
		{[]string{"list", "--format", "json", "--format", "text"}, "given twice"},
	} {
		code, out, errOut := run(tc.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stdout %.60q, stderr %q; want exit 2 and %q", tc.args, code, out, errOut, tc.want)
		}
	}
	code, out, errOut := run("list", "--format", "json")
	var got []struct{ Slug, Title, Part, Summary string }
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil || len(got) < 10 || got[0].Slug == "" || got[0].Summary == "" {
		t.Errorf("list --format json: exit %d (%s), %.200s", code, errOut, out)
	}
	if code, text, _ := run("list"); code != 0 || len(got) == 0 || !strings.Contains(text, got[0].Slug+" ") {
		t.Errorf("list: exit %d, %.200s", code, text)
	}
}

// Every subcommand refuses an argument it does not take by naming it,
// with exit 2: `static --out d extra` printed its usage without saying
// what was wrong, and `help extra` exited 0.
func TestUnexpectedArguments(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"static", "--out", filepath.Join(dir, "d"), "extra"},
		{"help", "extra"},
		{"list", "extra"},
		{"health", "extra"},
		{"serve", "extra"},
		{"run", "garage", "extra"},
		{"diff", "garage", "--vs", "block_size=32", "extra"},
		{"bench", "extra"},
	} {
		code, _, errOut := run(args...)
		if code != 2 || !strings.Contains(errOut, `unexpected argument "extra"`) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 naming the argument", args, code, errOut)
		}
	}
}

// health refuses a port serve refuses, with exit 2 as serve does; it
// tried 127.0.0.1:99999 and exited 1 as if the server were down.
func TestHealthRefusesBadPort(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:99999", "127.0.0.1:0", "127.0.0.1:-1", "localhost:http", "127.0.0.1:"} {
		code, _, errOut := run("health", "--addr", addr)
		if code != 2 || !strings.Contains(errOut, `--addr = "`+addr+`" is not allowed: want a loopback host:port with a port from 1 to 65535`) {
			t.Errorf("health --addr %s: exit %d, stderr %q; want exit 2", addr, code, errOut)
		}
	}
	if code, _, errOut := run("serve", "--addr", "127.0.0.1:99999"); code != 2 {
		t.Errorf("serve --addr 127.0.0.1:99999: exit %d (%s); want 2, as health", code, errOut)
	}
}

// A config.json over the bound is refused by its size, not by what was
// read of it ("1048577 bytes" for a 10 MB file), and one that opens with a
// UTF-8 byte-order mark is read (it was refused as invalid character 'ï',
// where a trace with one is read); so is a --gpu-config file.
func TestConfigFilesSizeAndByteOrderMark(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, []byte(strings.Repeat(" ", 10<<20)), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := run("run", "kv-budget", "--model-config", big)
	if code != 2 || !strings.Contains(errOut, "--model-config "+big+": is 10,485,760 bytes: want a regular file of at most 1,048,576 bytes holding a config.json") {
		t.Errorf("a 10 MB config.json: exit %d, stderr %q", code, errOut)
	}
	if modelconfig.MaxBytes != 1<<20 {
		t.Fatalf("modelconfig.MaxBytes is %d: the message above states 1,048,576", modelconfig.MaxBytes)
	}
	llama, err := os.ReadFile(filepath.Join("..", "..", "core", "modelconfig", "testdata", "llama-3.1-8b.json"))
	if err != nil {
		t.Fatal(err)
	}
	bom := writeFile(t, dir, "bom.json", "\ufeff"+string(llama))
	if code, _, errOut := run("run", "kv-budget", "--model-config", bom, "--format", "json"); code != 0 {
		t.Errorf("a config.json with a byte-order mark: exit %d, %s", code, errOut)
	}
	gpu := writeFile(t, dir, "gpu.json", "\ufeff"+h100JSON)
	if code, _, errOut := run("run", "kv-budget", "--gpu-config", gpu, "--format", "json"); code != 0 {
		t.Errorf("a --gpu-config file with a byte-order mark: exit %d, %s", code, errOut)
	}
	bigGPU := filepath.Join(dir, "big-gpu.json")
	os.WriteFile(bigGPU, []byte(strings.Repeat(" ", 1<<20)), 0o600)
	if code, _, errOut := run("run", "kv-budget", "--gpu-config", bigGPU); code != 2 || !strings.Contains(errOut, "is 1,048,576 bytes: want a regular file of at most 65,536 bytes") {
		t.Errorf("a 1 MB --gpu-config: exit %d, stderr %q", code, errOut)
	}
}

// A GPU figure given as null, or as a number that a float64 reads as 0
// (1e-400), is refused: both read as 0, silently "no FP8 tensor cores" or
// "no link". A figure that three decimals round to 0 is written as given:
// "fp8_tflops = 1e-300" was reported as "= 0 is not allowed: want 0 (…)".
func TestGPUConfigNullAndZeroRounding(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ field, value, want string }{
		{"fp8_tflops", "null", "fp8_tflops = null is not allowed: want 0 (no FP8 tensor cores) or a number from 10 to 40,000 (TFLOP/s)"},
		{"interconnect_gbps", "null", "interconnect_gbps = null is not allowed: want 0 (no scale-up link: collectives over PCIe) or a number from 10 to 10,000"},
		{"fp8_tflops", "1e-400", "fp8_tflops = 1e-400 is not allowed: want 0 (no FP8 tensor cores)"},
		{"fp8_tflops", "1e-300", "fp8_tflops = 1e-300 is not allowed: want 0 (no FP8 tensor cores)"},
		{"memory_gib", "null", "memory_gib = null is not allowed: want a number from 8 to 1,024 (GiB)"},
	} {
		body := h100JSON
		i := strings.Index(body, `"`+tc.field+`": `) + len(tc.field) + 4
		j := i + strings.IndexAny(body[i:], ",}")
		body = body[:i] + tc.value + body[j:]
		code, _, errOut := run("run", "kv-budget", "--gpu-config", writeFile(t, dir, "g.json", body))
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: %s: exit %d, stderr %q; want exit 2 and %q", tc.field, tc.value, code, errOut, tc.want)
		}
	}
}
