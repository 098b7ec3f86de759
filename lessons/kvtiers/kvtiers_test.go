package kvtiers

import (
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/inferlab/inferlab/core/cluster"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/lessons/lessontest"
)

// Formulation 2 by hand from the lesson's own per-tier figures, and the
// fetch times from the cited links: 9,600 tokens × 131,072 B of
// Llama-3.1-8B KV = 1,258,291,200 B.
func TestKVTiersDefaults(t *testing.T) {
	s, _, err := lesson.Run(nil)
	if err != nil {
		t.Fatal(err)
	}
	get := func(k string) float64 { return lessontest.MetricOf(t, s, k) }
	const bytes = 9600 * 131072.0
	for _, c := range []struct {
		key  string
		want float64 // ms
	}{
		{"fetch_ms_host", 1000 * bytes / 52e9},              // PCIe Gen5, no α
		{"fetch_ms_nvme", 1000 * (1e-4 + bytes/6.8e9)},      // NVMe Gen4
		{"fetch_ms_object", 1000 * (0.020 + bytes/8.003e9)}, // S3, 100 Gb/s instance
		{"fetch_us_per_token_nvme", 1e6 * 131072 / 6.8e9},
	} {
		if got := get(c.key); math.Abs(got-c.want) > 1e-3 {
			t.Errorf("%s = %v, want %v", c.key, got, c.want)
		}
	}
	if got := get("prefix_mb"); math.Abs(got-bytes/1e6) > 0.005 {
		t.Errorf("prefix_mb = %v, want %v", got, bytes/1e6)
	}
	// E[TTFT] = T_rest + 0.4·0 + 0.3·T_host + 0.15·T_nvme + 0.05·T_object + 0.1·T_compute.
	want := get("ttft_gpu_hit_ms") + 0.3*get("fetch_ms_host") + 0.15*get("fetch_ms_nvme") + 0.05*get("fetch_ms_object") + 0.1*get("compute_prefix_ms")
	if got := get("ttft_expected_ms"); math.Abs(got-want) > 1e-3 {
		t.Errorf("E[TTFT] %v ms, by hand %v ms", got, want)
	}
	if got := get("ttft_recompute_ms"); math.Abs(got-(get("compute_prefix_ms")+get("ttft_gpu_hit_ms"))) > 1e-3 {
		t.Errorf("miss %v ms ≠ T_compute + T_rest", got)
	}
	if !(get("ttft_gpu_hit_ms") < get("ttft_expected_ms") && get("ttft_expected_ms") < get("ttft_recompute_ms")) {
		t.Error("expected TTFT should lie between a G1 hit and a miss")
	}
	quizzes := 0
	for _, st := range s.Steps {
		if st.Quiz != nil {
			quizzes++
		}
	}
	if quizzes == 0 || len(s.Claims) < 4 {
		t.Errorf("%d quizzes, %d claims", quizzes, len(s.Claims))
	}
}

// At a break-even length the faster option flips: recompute just below,
// fetch at it (object storage's 20 ms first byte on an 8B model).
func TestKVTiersBreakEven(t *testing.T) {
	s, v, err := lesson.Run(nil)
	if err != nil {
		t.Fatal(err)
	}
	n := int(lessontest.MetricOf(t, s, "breakeven_tokens_object"))
	if n <= 1 {
		t.Fatalf("object-storage break-even %d", n)
	}
	e, _ := kit.NewEngine(v, kvTiersBlock)
	timer := e.Timer(kvTiersMaxSeqs, kvTiersBudget)
	s3, _ := cluster.LinkByID("s3-100g")
	fetch := func(n int) float64 { return s3.Transfer(float64((n+15)/16*16) * 131072) }
	if !(fetch(n) < kit.PrefillSeconds(timer, n, kvTiersBudget) && fetch(n-1) >= kit.PrefillSeconds(timer, n-1, kvTiersBudget)) {
		t.Errorf("at %d tokens: fetch %v vs recompute %v; at %d: %v vs %v", n, fetch(n), kit.PrefillSeconds(timer, n, kvTiersBudget),
			n-1, fetch(n-1), kit.PrefillSeconds(timer, n-1, kvTiersBudget))
	}
	// Llama-2-7B has no grouped-query attention: 4× the KV bytes per token
	// of Llama-3.1-8B, so one NVMe drive loses to recomputing beyond a short prefix.
	s2, _, err := lesson.Run(map[string]string{"model": "llama-2-7b", "prompt_tokens": "4000", "prefix_tokens": "3840"})
	if err != nil {
		t.Fatal(err)
	}
	if b := lessontest.MetricOf(t, s2, "breakeven_tokens_nvme"); b < 2 || b > 3840 {
		t.Errorf("Llama-2-7B NVMe break-even %v tokens", b)
	}
	if lessontest.MetricOf(t, s2, "fetch_ms_nvme") <= lessontest.MetricOf(t, s2, "compute_prefix_ms") {
		t.Error("Llama-2-7B: fetching 3,840 tokens from NVMe Gen4 should be slower than recomputing them")
	}
}

func TestKVTiersBadInput(t *testing.T) {
	for _, c := range []struct {
		set map[string]string
		key string
	}{
		{map[string]string{"prefix_tokens": "10000"}, "prefix_tokens"},
		{map[string]string{"p_gpu": "60", "p_host": "30", "p_disk": "20"}, "p_disk"},
		{map[string]string{"p_object": "20"}, "p_object"},
		{map[string]string{"model": "mistral-7b-v0.1", "prompt_tokens": "40000"}, "prompt_tokens"},
		{map[string]string{"model": "llama-2-7b", "prompt_tokens": "33000", "prefix_tokens": "32000"}, "prompt_tokens"},                  // Llama-2-7B has 4,096 positions
		{map[string]string{"model": "llama-3.1-8b", "gpu": "l4", "prompt_tokens": "131071", "prefix_tokens": "131056"}, "prompt_tokens"}, // 17 GB of KV beside 16 GB of weights on 24 GB
		{map[string]string{"model": "llama-3.1-70b"}, "model"},                                                                           // BF16 weights do not fit one H100
		{map[string]string{"nvme": "floppy"}, "nvme"},
	} {
		_, _, err := lesson.Run(c.set)
		var pe *lessons.ParamError
		if !errors.As(err, &pe) || pe.Key != c.key {
			t.Errorf("%v: error %v, want one naming %s", c.set, err, c.key)
		}
	}
}

func TestKVTiersDeterministic(t *testing.T) {
	a, _, _ := lesson.Run(map[string]string{"gpu": "a100-80gb-sxm"})
	b, _, _ := lesson.Run(map[string]string{"gpu": "a100-80gb-sxm"})
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Fatal("same parameters gave different scripts")
	}
}

func TestKVTiersWorkBound(t *testing.T) { lessontest.CheckHeavyCorners(t, lesson) }
