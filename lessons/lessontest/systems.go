package lessontest

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/scene"
)

// systemsRefs lists the references the systems pictures draw for a scene
// (as app/sysfig.go and its renderers put them in data-ref), so a mark that
// names nothing on the figure is caught without a browser.
func systemsRefs(sc scene.Scene) map[string]bool {
	out := map[string]bool{}
	switch {
	case sc.Radix != nil:
		if sc.Radix.Capacity > 0 {
			out["cache:capacity"] = true
		}
		for _, n := range sc.Radix.Nodes {
			out["node:"+strconv.Itoa(n.ID)] = true
		}
	case sc.Cluster != nil:
		c := sc.Cluster
		if c.Router != "" {
			out["router:R"] = true
		}
		if c.Link != nil && len(c.Pools) >= 2 {
			out["link:KV"] = true
		}
		if c.Travel != nil {
			out[c.Travel.Ref] = true
		}
		for _, p := range c.Pools {
			out["pool:"+p.Label] = true
			for _, w := range p.Workers {
				out["worker:"+w.ID] = true
			}
		}
	case sc.Tiers != nil:
		for _, t := range sc.Tiers.Tiers {
			out["tier:"+t.ID] = true
		}
		for _, r := range sc.Tiers.Races {
			out[r.Ref] = true
		}
	case sc.Journey != nil:
		j := sc.Journey
		for _, l := range j.Lanes {
			key := l.Key
			if key == "" {
				key = l.Label
			}
			out["lane:"+key] = true
			for i, b := range l.Bars {
				if j.Zoom == nil || (b.End >= j.Zoom.Start && b.Start <= j.Zoom.End) {
					out["span:"+key+":"+strconv.Itoa(i)] = true
				}
			}
		}
	}
	return out
}

// checkSystems: the lessons drawn with the systems pictures
// (Checks.Systems), at their defaults and at the knob settings they name
// that change what happens (R4 and the long request wait; conditional
// disaggregation; another workload): each step's main figure is a systems
// picture, every mark names an element that picture draws, every step
// links at least one phrase of its narration to it, no step is a "Tick N",
// there are at most 20 steps, and the claims are left to the claims panel
// (no claims-table step repeats them).
func checkSystems(t *testing.T, l *lessons.Lesson, sets []map[string]string) {
	tick := regexp.MustCompile(`^Tick \d+`)
	for _, knobs := range append([]map[string]string{nil}, sets...) {
		checkSystemsPictures(t, tick, l, knobs)
	}
}

// checkSystemsPictures checks l's steps at knobs (checkSystems).
func checkSystemsPictures(t *testing.T, tick *regexp.Regexp, l *lessons.Lesson, knobs map[string]string) {
	t.Helper()
	s, _, err := l.Run(knobs)
	if err != nil {
		t.Fatalf("%s %v: %v", l.Slug, knobs, err)
	}
	if len(s.Steps) > 20 {
		t.Errorf("%s %v: %d steps, want at most 20", l.Slug, knobs, len(s.Steps))
	}
	for i, st := range s.Steps {
		where := l.Slug + " " + strconv.Itoa(i+1) + " (" + st.Title + ")"
		if tick.MatchString(st.Title) {
			t.Errorf("%s: titled like a tick", where)
		}
		var main *scene.Scene
		for k := range st.Scenes {
			sc := &st.Scenes[k]
			if sc.ID == "claims" {
				t.Errorf("%s: repeats the claims table", where)
			}
			if sc.Main && main == nil {
				main = sc
			}
			refs := systemsRefs(*sc)
			for _, m := range sc.Marks {
				if len(refs) > 0 && !refs[m.Ref] {
					t.Errorf("%s: scene %s marks %q, which it does not draw", where, sc.ID, m.Ref)
				}
			}
		}
		switch {
		case main == nil:
			t.Errorf("%s: no main figure", where)
		case main.Radix == nil && main.Cluster == nil && main.Tiers == nil && main.Journey == nil:
			t.Errorf("%s: the main figure %s is a %s, not a systems picture", where, main.ID, main.Kind)
		case len(main.Marks) == 0:
			t.Errorf("%s: the main figure marks nothing", where)
		}
		if len(st.Mentions) == 0 {
			t.Errorf("%s: the narration links nothing to the figure", where)
		}
	}
}
