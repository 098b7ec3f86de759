package prefixcache

import (
	"testing"

	"github.com/inferlab/inferlab/core/radixcache"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/lessontest"
)

// TestLessonChecks runs the shared checks (lessontest.Checks) on the
// prefix-cache lesson. Its narration check: cached and reused tokens are the
// tree's.
func TestLessonChecks(t *testing.T) {
	lessontest.Run(t, lesson, lessontest.Checks{
		Systems:     true,
		SystemsSets: []map[string]string{{"capacity": "26"}, {"capacity": "400"}},
		Narration: func(v lessons.Values) ([]string, error) {
			r, err := runPrefixCache(v)
			if err != nil {
				return nil, err
			}
			return prefixCacheNarration(r), nil
		},
		Mismatches: []lessontest.Mismatch{
			{Name: "R2 narrated to match a token more than the tree held", Check: func(t *testing.T, v lessons.Values, alter bool) []string {
				r, err := runPrefixCache(v)
				lessontest.MustRun(t, err)
				if alter {
					r.r[1].Matched++
				}
				return prefixCacheNarration(r)
			}},
			{Name: "a frame narrating a token more cached than its tree", Check: func(t *testing.T, v lessons.Values, alter bool) []string {
				r, err := runPrefixCache(v)
				lessontest.MustRun(t, err)
				if alter {
					r.frames[5].total++
				}
				return prefixCacheNarration(r)
			}},
		},
	})
}

func prefixCacheNarration(r *prefixCacheRun) (out lessontest.Problems) {
	for i, f := range r.frames {
		total, protected := 0, 0
		for _, n := range f.nodes {
			if n.Parent < 0 {
				continue
			}
			total += len(n.Key)
			if n.LockRef > 0 {
				protected += len(n.Key)
			}
		}
		if f.total != total || f.protected != protected || total > r.capacity || f.nodeCount != len(f.nodes) {
			out.Addf("frame %d: narrated %d cached (%d protected, %d nodes) of %d; the tree holds %d (%d protected, %d nodes)",
				i, f.total, f.protected, f.nodeCount, r.capacity, total, protected, len(f.nodes))
		}
	}
	// Each of R1–R4 matched, in the tree as it stood before it, the longest
	// cached prefix of its tokens: what it reused was resident.
	reused := 0
	for i, s := range r.r {
		want := treeMatch(r.frames[i].nodes, r.voc.encode(r.requests[i]))
		if s.Matched != want {
			out.Addf("R%d: narrated %d tokens matched, the tree before it held a %d-token prefix of it", i+1, s.Matched, want)
		}
		if !s.Waits {
			reused += s.Matched
		}
	}
	if r.frames[4].reused != reused {
		out.Addf("after R4 the narration counts %d reused tokens, R1–R4 matched %d", r.frames[4].reused, reused)
	}
	return out
}

// treeMatch is the longest prefix of ids spelled by a path of the tree.
func treeMatch(nodes []radixcache.NodeView, ids []int) int {
	children := map[int][]radixcache.NodeView{}
	root := -1
	for _, n := range nodes {
		if n.Parent < 0 {
			root = n.ID
			continue
		}
		children[n.Parent] = append(children[n.Parent], n)
	}
	matched, at := 0, root
	for {
		next := -1
		for _, c := range children[at] {
			k := 0
			for k < len(c.Key) && matched+k < len(ids) && c.Key[k] == ids[matched+k] {
				k++
			}
			if k == 0 {
				continue
			}
			matched += k
			if k == len(c.Key) {
				next = c.ID
			}
			break
		}
		if next < 0 {
			return matched
		}
		at = next
	}
}
