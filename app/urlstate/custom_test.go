package urlstate

import (
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/modelconfig"
	"github.com/inferlab/inferlab/lessons"
)

func testConfig(t *testing.T, file string) *modelconfig.Config {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "core", "modelconfig", "testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	c, err := modelconfig.Parse(data, strings.TrimSuffix(file, ".json"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const gpuToken = "v1_79.19_3350_989.4_1979_450_my-h100"

// lessonWhere is the first lesson for which ok holds (found by what it
// has, never by name: a lesson's files are the only ones to name it).
func lessonWhere(t *testing.T, what string, ok func(*lessons.Lesson) bool) *lessons.Lesson {
	t.Helper()
	for _, l := range lessons.All() {
		if ok(l) {
			return l
		}
	}
	t.Skipf("no lesson %s", what)
	return nil
}

// sizingLesson has a model knob that sizes any model, and a gpu knob;
// pricedLesson one that takes only dense decoders; bareLesson neither knob.
func sizingLesson(t *testing.T) *lessons.Lesson {
	return lessonWhere(t, "sizing any model on a GPU", func(l *lessons.Lesson) bool {
		p, ok := l.Param("model")
		_, gpu := l.Param("gpu")
		return ok && gpu && p.Kind == lessons.Choice && SizesAnyModel(p)
	})
}

func pricedLesson(t *testing.T) *lessons.Lesson {
	return lessonWhere(t, "pricing steps", func(l *lessons.Lesson) bool {
		p, ok := l.Param("model")
		_, gpu := l.Param("gpu")
		return ok && gpu && p.Kind == lessons.Choice && !SizesAnyModel(p) && !l.MoE
	})
}

func bareLesson(t *testing.T) *lessons.Lesson {
	return lessonWhere(t, "without a model or gpu knob", func(l *lessons.Lesson) bool {
		_, m := l.Param("model")
		_, g := l.Param("gpu")
		return !m && !g
	})
}

// TestCustomInTheAddress: an address's mc= and gc= are read as the page's
// own keys (no "not a parameter" notice), offered by the lesson's model
// and gpu knobs, resolve model=custom:NAME and gpu=custom:NAME, and are
// written back as they came.
func TestCustomInTheAddress(t *testing.T) {
	mc := testConfig(t, "llama-3.1-8b.json").Token()
	l := sizingLesson(t)
	raw := "step=2&model=custom:llama-3.1-8b&gpu=custom:my-h100&mc=" + mc + "&gc=" + gpuToken
	st := ParseRawQuery(l, raw)
	if len(st.Notices) != 0 || st.Custom.Model == nil || st.Custom.GPU == nil {
		t.Fatalf("notices %v, custom %+v", st.Notices, st.Custom)
	}
	lc, took, why := st.Custom.For(l)
	if lc == l || len(why) != 0 || took.Query() != "&mc="+mc+"&gc="+gpuToken {
		t.Fatalf("For: same lesson %v, why %v, query %s", lc == l, why, took.Query())
	}
	if again, _, _ := st.Custom.For(l); again != lc {
		t.Error("the same tokens gave another copy of the lesson")
	}
	v, notices := ResolveParams(lc, st.Raw)
	if len(notices) != 0 || v.Choice("model") != "custom:llama-3.1-8b" || v.Choice("gpu") != "custom:my-h100" {
		t.Fatalf("resolved %v, notices %v", v.Text(), notices)
	}
	for _, key := range []string{"model", "gpu"} {
		own, _ := l.Param(key)
		p, _ := lc.Param(key)
		if len(p.Choices) != len(own.Choices)+1 || p.Default != own.Default || p.DefaultText() != own.DefaultText() {
			t.Errorf("%s: choices %v, want the lesson's %v and one more, the same default", key, p.Choices, own.Choices)
		}
	}
	if own, _ := l.Param("model"); slices.Contains(own.Choices, "custom:llama-3.1-8b") {
		t.Error("the registered lesson's own knob changed")
	}
	// The built-in lesson does not take them: the knob falls back.
	if _, notices := ResolveParams(l, st.Raw); len(notices) == 0 {
		t.Error("the lesson itself accepted model=custom:llama-3.1-8b")
	}
}

// TestCustomRefused: a bad token is a notice naming the part and the
// value, and the lesson keeps its own models (model=custom: then falls
// back to the default with its own notice); a mixture of experts is not
// offered by a lesson that prices steps, and the notice says why; a lesson
// without the knob takes nothing.
func TestCustomRefused(t *testing.T) {
	l := pricedLesson(t)
	own, _ := l.Param("model")
	st := ParseRawQuery(l, "model=custom:x&mc=v1.llama.32&gc=v1_4_3350_989_1979_450_g")
	joined := strings.Join(st.Notices, "\n")
	for _, want := range []string{"own model is not used (mc: token = ", "own GPU is not used (gc: memory_gib = 4 is not allowed"} {
		if !strings.Contains(joined, want) {
			t.Errorf("notices %q lack %q", joined, want)
		}
	}
	lc, took, _ := st.Custom.For(l)
	v, notices := ResolveParams(lc, st.Raw)
	if lc != l || took.Query() != "" || v.Choice("model") != own.DefaultText() || len(notices) != 1 || !strings.Contains(notices[0], `"custom:x" is not allowed`) {
		t.Errorf("with bad tokens: lesson copied %v, query %q, model %s, notices %v", lc != l, took.Query(), v.Choice("model"), notices)
	}

	moe := Custom{Model: testConfig(t, "mixtral-8x7b-v0.1.json")}
	lc, took, why := moe.For(l)
	sizing := sizingLesson(t)
	if lc != l || took.Model != nil || len(why) != 1 || !strings.Contains(why[0], "is a mixture of experts") || !strings.Contains(why[0], sizing.Slug) {
		t.Errorf("Mixtral in %s: copied %v, why %v", l.Slug, lc != l, why)
	}
	if lc, took, _ := moe.For(sizing); took.Model == nil || lc == sizing {
		t.Errorf("%s, which sizes any model, did not take Mixtral", sizing.Slug)
	}
	for _, slug := range MoELessons() {
		priced := lessons.Get(slug)
		if lc, took, why := moe.For(priced); took.Model == nil || lc == priced || len(why) != 0 {
			t.Errorf("%s, which prices a mixture of experts, did not take Mixtral: %v", slug, why)
		}
		if !strings.Contains(why[0], slug) {
			t.Errorf("the refusal in %s does not name %s, which takes Mixtral: %s", l.Slug, slug, why[0])
		}
	}
	if len(MoELessons()) == 0 {
		t.Error("no lesson takes a mixture of experts")
	}
	if _, err := hardware.AnyModelByID("custom:mixtral-8x7b-v0.1"); err != nil {
		t.Errorf("For did not register the model it took: %v", err)
	}
	g, err := hardware.ParseGPUToken(gpuToken)
	if err != nil {
		t.Fatal(err)
	}
	bare := bareLesson(t)
	if lc, took, why := (Custom{GPU: &g, Model: moe.Model}).For(bare); lc != bare || took.Query() != "" || len(why) != 0 {
		t.Errorf("%s, with no model or gpu knob: copied %v, took %q, why %v", bare.Slug, lc != bare, took.Query(), why)
	}
}

func TestWithChoices(t *testing.T) {
	l := pricedLesson(t)
	c := WithChoices(l, map[string]string{"gpu": "custom:a", "model": "", "nothing": "x"})
	gp, _ := c.Param("gpu")
	mp, _ := c.Param("model")
	own, _ := l.Param("model")
	if gp.Choices[len(gp.Choices)-1] != "custom:a" || len(mp.Choices) != len(own.Choices) {
		t.Errorf("gpu %v, model %v", gp.Choices, mp.Choices)
	}
	if again := WithChoices(c, map[string]string{"gpu": "custom:a"}); len(again.Params) != len(l.Params) {
		t.Error("params lost")
	} else if p, _ := again.Param("gpu"); len(p.Choices) != len(gp.Choices) {
		t.Errorf("an id already offered was added again: %v", p.Choices)
	}
	q, _ := url.ParseQuery("mc=" + url.QueryEscape(strings.Repeat("x", 400)))
	if st := ParseQuery(l, q); len(st.Notices) != 1 || !strings.Contains(st.Notices[0], "at most 320 characters") {
		t.Errorf("a long token: %v", st.Notices)
	}
}
