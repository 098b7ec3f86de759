package prefixcache

import (
	"fmt"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/lessontest"
)

func runPrefixCacheWith(t *testing.T, set map[string]string) *prefixCacheRun {
	t.Helper()
	v, errs := lesson.Resolve(set)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	r, err := runPrefixCache(v)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestPrefixCacheLesson(t *testing.T) {
	r := runPrefixCacheWith(t, nil)
	// R2 splits R1's edge, R3 splits the system-prompt node, R4 splits R1's tail.
	if r.splits != 3 || r.r[1].Splits != 1 || r.r[2].Splits != 1 || r.r[3].Splits != 1 {
		t.Errorf("splits = %d (R2 %d, R3 %d, R4 %d), want one each for R2, R3 and R4", r.splits, r.r[1].Splits, r.r[2].Splits, r.r[3].Splits)
	}
	if r.r[1].Matched != r.predicted {
		t.Errorf("R2 matched %d tokens, the quiz predicts %d", r.r[1].Matched, r.predicted)
	}
	small, large := r.twist[0], r.twist[1]
	if small.shared != 0 || small.distance >= large.distance || large.shared <= small.shared {
		t.Errorf("the twist: small distance %d shares %d, large distance %d shares %d", small.distance, small.shared, large.distance, large.shared)
	}
	if r.evicted == 0 {
		t.Error("the memory-pressure step evicted nothing")
	}
}

// A request must not evict the prefix it has just matched
// (SGLang locks it: PrefillAdder.add_one_req under _lock_node), so at every
// step and for every allowed capacity and system prompt the cache stays
// within its capacity, and every admitted request's reused tokens were
// still resident when it was inserted (it adds exactly its unmatched
// tokens). Before the fix, capacity 24 cached 28 tokens at step 5 and
// counted 4 evicted tokens as reused.
func TestPrefixCacheNeverOverCapacity(t *testing.T) {
	p, _ := lesson.Param("capacity")
	for _, sys := range systemKnob(t).Choices {
		for c := int(p.Min); c <= int(p.Max); c++ {
			set := map[string]string{"capacity": fmt.Sprint(c), "system": sys}
			s, _, err := lesson.Run(set)
			if err != nil {
				t.Fatalf("%v: %v", set, err)
			}
			for i, st := range s.Steps {
				for _, sc := range st.Scenes {
					if sc.ID == "tree" && (sc.Radix.Cached > c || sc.Radix.Capacity != c) {
						t.Errorf("%v: step %d (%s) holds %d cached tokens of %d", set, i+1, st.Title, sc.Radix.Cached, sc.Radix.Capacity)
					}
				}
			}
			r := runPrefixCacheWith(t, set)
			for i, f := range r.frames {
				if f.total > c {
					t.Errorf("%v: frame %d holds %d tokens", set, i, f.total)
				}
			}
			admitted := append(r.r[:], r.long)
			for _, w := range r.retried {
				admitted = append(admitted, w.Served)
			}
			for i, a := range admitted {
				if !a.Waits && a.Matched+a.Inserted != a.Tokens {
					t.Errorf("%v: request %d matched %d and inserted %d of its %d tokens: part of its match was evicted first", set, i+1, a.Matched, a.Inserted, a.Tokens)
				}
			}
			// Whatever waited is admitted once R3 is done, and the
			// narration says which.
			if waited := len(r.retried); waited != boolCount(r.r[3].Waits, r.long.Waits) {
				t.Errorf("%v: %d retries for %d waits", set, waited, boolCount(r.r[3].Waits, r.long.Waits))
			}
			if r.long.Waits != strings.Contains(s.Steps[5].Narration, "waits until R3 finishes") {
				t.Errorf("%v: the long request waits = %v, narration %q", set, r.long.Waits, s.Steps[5].Narration)
			}
			if r.hitRate() > 1 || r.prompted != r.r[0].Tokens+r.r[1].Tokens+r.r[2].Tokens+r.r[3].Tokens+r.long.Tokens {
				t.Errorf("%v: %d prompt tokens counted, hit rate %v", set, r.prompted, r.hitRate())
			}
		}
	}
}

func systemKnob(t *testing.T) lessons.Param {
	p, ok := lesson.Param("system")
	if !ok {
		t.Fatal("no system knob")
	}
	return p
}

func boolCount(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// The capacity's minimum admits the longest request into an empty cache,
// and every system prompt is a value the knob accepts (URL values are cut
// at 64 characters).
func TestPrefixCacheKnobs(t *testing.T) {
	for _, sys := range systemKnob(t).Choices {
		if _, _, err := lesson.Run(map[string]string{"system": sys}); err != nil {
			t.Errorf("system %q: %v", sys, err)
		}
		var voc vocab
		for _, tail := range prefixCacheTails {
			if n := len(voc.encode(sys + tail)); n > prefixCacheMinCapacity {
				t.Errorf("%q: a %d-token request exceeds the minimum capacity %d", sys, n, prefixCacheMinCapacity)
			}
		}
	}
	var voc vocab
	if n := len(voc.encode(prefixCacheLong)); n != prefixCacheMinCapacity {
		t.Errorf("the long request has %d tokens, the minimum capacity is %d", n, prefixCacheMinCapacity)
	}
}

func TestPrefixCacheWorkBound(t *testing.T) { lessontest.CheckHeavyCorners(t, lesson) }
