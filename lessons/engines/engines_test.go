package engines

import (
	"testing"

	"github.com/inferlab/inferlab/core/hardware"
)

func enginesAt(t *testing.T, set map[string]string) *enginesRun {
	t.Helper()
	v, err := lesson.ResolveChecked(set)
	if err != nil {
		t.Fatal(err)
	}
	r, err := runEngines(v)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// At the defaults each engine's policy leads on some metric: SGLang's
// page-size-1 radix cache on hit rate (a 120-token prompt is 7.5 blocks of
// 16 and 3.75 of 32), vLLM's mixed chunked batches on TTFT, TensorRT-LLM's
// GUARANTEED_NO_EVICT on preemptions (none, where vLLM preempts).
func TestEnginesEachLeads(t *testing.T) {
	r := enginesAt(t, nil)
	want := map[string]string{"hit_rate": "sglang", "ttft_p50": "vllm"}
	for key, eng := range want {
		l := r.lead(key)
		if l.best < 0 || r.eng[l.best].key != eng {
			t.Errorf("%s: lead %+v, want %s", key, l, eng)
		}
	}
	if r.eng[2].sum.Preemptions != 0 || r.eng[0].sum.Preemptions == 0 {
		t.Errorf("preemptions: TensorRT-LLM %d (want 0 under GUARANTEED_NO_EVICT), vLLM %d (want some)", r.eng[2].sum.Preemptions, r.eng[0].sum.Preemptions)
	}
	led := map[string]bool{}
	for _, l := range r.leads {
		if l.best >= 0 {
			led[r.eng[l.best].key] = true
		}
	}
	if len(led) != 3 {
		t.Errorf("engines leading on something: %v, want all three", led)
	}
}

// The page-size advantage is the prefix's last partial block: with a
// prefix that is a whole number of 32-token blocks, the radix cache's lead
// on hit rate over vLLM is gone or reversed.
func TestEnginesHitRateFollowsPageSize(t *testing.T) {
	odd := enginesAt(t, map[string]string{"prefix": "120"})
	even := enginesAt(t, map[string]string{"prefix": "128"})
	gap := func(r *enginesRun) float64 { return r.eng[1].sum.PrefixHitRate - r.eng[0].sum.PrefixHitRate }
	if !(gap(odd) > gap(even)) {
		t.Fatalf("SGLang's hit-rate lead over vLLM: %.4f with a 120-token prefix, %.4f with 128; want it larger when the prefix ends inside a block", gap(odd), gap(even))
	}
}

// MAX_UTILIZATION packs more requests than GUARANTEED_NO_EVICT and pays
// with preemptions.
func TestEnginesTRTPolicies(t *testing.T) {
	gne := enginesAt(t, map[string]string{"trt_policy": "guaranteed-no-evict"})
	mu := enginesAt(t, map[string]string{"trt_policy": "max-utilization"})
	if gne.eng[2].sum.Preemptions != 0 || mu.eng[2].sum.Preemptions == 0 {
		t.Fatalf("preemptions: GUARANTEED_NO_EVICT %d, MAX_UTILIZATION %d; want 0 and some", gne.eng[2].sum.Preemptions, mu.eng[2].sum.Preemptions)
	}
	if !(mu.eng[2].peakHeld > gne.eng[2].peakHeld) {
		t.Fatalf("peak KV held: MAX_UTILIZATION %.3f, GUARANTEED_NO_EVICT %.3f; packing should fill more", mu.eng[2].peakHeld, gne.eng[2].peakHeld)
	}
}

// A trace preset keeps only requests TensorRT-LLM can take whole, in
// arrival order.
func TestEnginesTracePreset(t *testing.T) {
	r := enginesAt(t, map[string]string{"workload": "mooncake-conversation", "requests": "60"})
	if len(r.requests) != 60 {
		t.Fatalf("%d requests, want 60", len(r.requests))
	}
	for i, q := range r.requests {
		if q.Prompt+q.Output > engTRTTokens || q.ID != i || (i > 0 && q.Arrival < r.requests[i-1].Arrival) {
			t.Fatalf("request %d: %+v", i, q)
		}
	}
	if r.eng[0].sum.PrefixHitRate == 0 {
		t.Fatal("Mooncake conversations resend their history, yet vLLM found nothing cached")
	}
}

func TestSGLangChunkDefaults(t *testing.T) {
	for _, c := range []struct {
		gpu  string
		want int
	}{{"l4", 2048}, {"l40s", 4096}, {"h100-sxm", 8192}, {"h200-sxm", 8192}, {"b200", 16384}} {
		g := hardware.MustGPU(c.gpu)
		if got := sglangChunkedPrefill(g); got != c.want {
			t.Errorf("%s: chunked_prefill_size %d, want %d", c.gpu, got, c.want)
		}
	}
}
