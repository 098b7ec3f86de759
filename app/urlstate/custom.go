package urlstate

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/modelconfig"
	"github.com/inferlab/inferlab/lessons"
)

// A reader's own model and GPU travel in the address as two tokens, mc=
// (core/modelconfig's token: the shape of a parsed config.json) and gc=
// (core/hardware's: a GPU's five figures), beside the knobs that select
// them, model=custom:NAME and gpu=custom:NAME. The page and the
// simulation worker read them the same way: each token is decoded and
// checked (a bad one is a notice, and the lesson keeps its own models and
// GPUs), registered with core/hardware, and offered by a copy of the
// lesson whose knobs list it (Custom.For), so the knob's own check accepts
// it and the lesson's checks hold it to the rules of its built-in ones.

// Custom is the reader's own model and GPU, either nil when absent.
type Custom struct {
	Model *modelconfig.Config
	GPU   *hardware.CustomGPUSpec
}

// Page parameters of the custom model and GPU tokens.
const (
	ModelKey = "mc"
	GPUKey   = "gc"
)

// ModelToken and GPUToken are the canonical tokens ("" when absent).
func (c Custom) ModelToken() string {
	if c.Model == nil {
		return ""
	}
	return c.Model.Token()
}

// GPUToken: see ModelToken.
func (c Custom) GPUToken() string {
	if c.GPU == nil {
		return ""
	}
	return c.GPU.Token()
}

// ModelID and GPUID are the knob values that select them ("" when absent).
func (c Custom) ModelID() string {
	if c.Model == nil {
		return ""
	}
	return c.Model.Model.ID
}

// GPUID: see ModelID.
func (c Custom) GPUID() string {
	if c.GPU == nil {
		return ""
	}
	return hardware.CustomGPUPrefix + c.GPU.Name
}

// Query is the tokens as query parameters with a leading "&" ("" when
// there are none). A token is dots, digits, lower-case letters, dashes and
// underscores: it needs no escaping.
func (c Custom) Query() string {
	var b strings.Builder
	if t := c.ModelToken(); t != "" {
		b.WriteString("&" + ModelKey + "=" + url.QueryEscape(t))
	}
	if t := c.GPUToken(); t != "" {
		b.WriteString("&" + GPUKey + "=" + url.QueryEscape(t))
	}
	return b.String()
}

// ParseCustom reads the two tokens ("" for one absent). A token refused
// is left out, and its error (naming the part, the value and what is
// allowed) is returned as a notice.
func ParseCustom(model, gpu string) (Custom, []string) {
	var c Custom
	var notices []string
	if model != "" {
		m, err := modelconfig.DecodeToken(model)
		if err != nil {
			notices = append(notices, fmt.Sprintf("The address's own model is not used (%v); the lesson's models stay.", err))
		} else {
			c.Model = m
		}
	}
	if gpu != "" {
		g, err := hardware.ParseGPUToken(gpu)
		if err != nil {
			notices = append(notices, fmt.Sprintf("The address's own GPU is not used (%v); the lesson's GPUs stay.", err))
		} else {
			c.GPU = &g
		}
	}
	return c, notices
}

// parseCustom reads mc= and gc= from a query (the first of each).
func parseCustom(q url.Values) (Custom, []string) {
	first := func(k string) string {
		if vs := q[k]; len(vs) > 0 {
			return vs[0]
		}
		return ""
	}
	return ParseCustom(first(ModelKey), first(GPUKey))
}

// TakesModel reports whether a model can be offered by the lesson's model
// knob, and if not, why. A lesson whose knob lists only
// hardware.Models (the dense decoders the step-time model prices) takes
// a dense decoder, and a mixture of experts the step model prices
// (modelconfig.Config.Priced) when the lesson says it shows only priced
// figures (Lesson.MoE); one that lists other profiles too (kv-budget's
// MQA, MLA and mixture-of-experts sizing profiles) sizes memory for any.
func TakesModel(l *lessons.Lesson, c *modelconfig.Config) (bool, string) {
	p, ok := l.Param("model")
	if !ok || p.Kind != lessons.Choice {
		return false, fmt.Sprintf("%s has no model knob", l.Slug)
	}
	if c.Dense() || (l.MoE && c.Priced()) || SizesAnyModel(p) {
		return true, ""
	}
	what := "is a mixture of experts"
	if c.Experts == 0 {
		what = "uses multi-head latent attention"
	}
	also := ""
	if moe := MoELessons(); c.Experts > 0 && len(moe) > 0 {
		also = fmt.Sprintf(", or one that prices a mixture of experts with every layer sparse and no shared expert, as Mixtral (%s)", strings.Join(moe, ", "))
	}
	return false, fmt.Sprintf("%s %s, and %s prices each step with a model of Llama-like dense decoders: use a dense model here, a lesson that sizes memory for any model (%s)%s",
		c.Model.ID, what, l.Slug, strings.Join(ModelLessons(true), ", "), also)
}

// MoELessons lists the lessons that take a mixture of experts the step
// model prices (Lesson.MoE).
func MoELessons() []string {
	var out []string
	for _, l := range lessons.All() {
		if l.MoE {
			out = append(out, l.Slug)
		}
	}
	return out
}

// SizesAnyModel reports whether a lesson's model knob offers profiles
// beyond hardware.Models (see TakesModel).
func SizesAnyModel(p lessons.Param) bool {
	priced := map[string]bool{}
	for _, m := range hardware.Models() {
		priced[m.ID] = true
	}
	for _, c := range p.Choices {
		if !priced[c] && !strings.HasPrefix(c, hardware.CustomModelPrefix) {
			return true
		}
	}
	return false
}

// ModelLessons lists the lessons with a model knob; sizing, only those
// whose knob takes any model (SizesAnyModel).
func ModelLessons(sizing bool) []string {
	var out []string
	for _, l := range lessons.All() {
		if p, ok := l.Param("model"); ok && p.Kind == lessons.Choice && (!sizing || SizesAnyModel(p)) {
			out = append(out, l.Slug)
		}
	}
	return out
}

// For returns the lesson as it offers the custom model and GPU, the part
// of c it takes, and why it leaves out the rest: l itself when it takes
// neither (no model or gpu knob, or a model it cannot price), else a copy
// whose knobs list them after their own choices (the defaults stay). It
// registers what it takes with core/hardware (RegisterCustomModel,
// RegisterCustomGPU), so the lesson's lookups find it. The same lesson
// and tokens give the same copy, so a page can compare lessons.
func (c Custom) For(l *lessons.Lesson) (*lessons.Lesson, Custom, []string) {
	var took Custom
	var why []string
	if c.Model != nil {
		if ok, reason := TakesModel(l, c.Model); !ok {
			if _, has := l.Param("model"); has {
				why = append(why, "Your own model is not offered here: "+reason+".")
			}
		} else if err := hardware.RegisterCustomModel(c.Model.Model); err != nil {
			why = append(why, "Your own model is not offered here: "+err.Error()+".")
		} else {
			took.Model = c.Model
		}
	}
	if p, ok := l.Param("gpu"); c.GPU != nil && ok && p.Kind == lessons.Choice {
		if _, err := hardware.RegisterCustomGPU(*c.GPU); err != nil {
			why = append(why, "Your own GPU is not offered here: "+err.Error()+".")
		} else {
			took.GPU = c.GPU
		}
	}
	if took.Model == nil && took.GPU == nil {
		return l, took, why
	}
	return copies.get(l, took), took, why
}

// copies keeps the lesson copies For made, so the same lesson and tokens
// give the same pointer. A page makes a few (one per model or GPU the
// reader brings); past maxCopies the oldest are forgotten.
var copies = copyCache{byKey: map[string]*lessons.Lesson{}}

const maxCopies = 32

type copyCache struct {
	sync.Mutex
	byKey map[string]*lessons.Lesson
	order []string
}

func (cc *copyCache) get(l *lessons.Lesson, c Custom) *lessons.Lesson {
	key := l.Slug + c.Query()
	cc.Lock()
	defer cc.Unlock()
	if lc, ok := cc.byKey[key]; ok && lc.Slug == l.Slug {
		return lc
	}
	lc := WithChoices(l, map[string]string{"model": c.ModelID(), "gpu": c.GPUID()})
	if len(cc.order) >= maxCopies {
		delete(cc.byKey, cc.order[0])
		cc.order = cc.order[1:]
	}
	cc.byKey[key] = lc
	cc.order = append(cc.order, key)
	return lc
}

// WithChoices returns a copy of l whose choice knobs list the given ids
// (by knob key; "" adds nothing) after their own choices. The copy shares
// l's simulation and checks; only its parameter list is its own.
func WithChoices(l *lessons.Lesson, add map[string]string) *lessons.Lesson {
	c := *l
	c.Params = slices.Clone(l.Params)
	for i, p := range c.Params {
		if id := add[p.Key]; id != "" && p.Kind == lessons.Choice && !slices.Contains(p.Choices, id) {
			p.Choices = append(slices.Clone(p.Choices), id)
			c.Params[i] = p
		}
	}
	return &c
}
