package app

import (
	"errors"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/inferlab/inferlab/app/urlstate"
	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/modelconfig"
	"github.com/inferlab/inferlab/lessons"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// Bring your own model and GPU: in the parameters form of a lesson with a
// model knob, "Your model" takes a Hugging Face config.json (pasted or
// chosen as a file), read here with core/modelconfig; in one with a gpu
// knob, "Your GPU" takes five datasheet figures, checked with
// core/hardware. Either, once accepted, is offered by the knob as
// custom:NAME and selected, and the address carries it as a token (mc=,
// gc=; urlstate.Custom), which every request to the simulation worker
// carries too (sim.Request), so the worker registers it before it runs.
// The prerendered page draws the controls; reading a file, parsing and
// checking happen in the app, which a paste, a keystroke or a click there
// starts like any knob (web/lab.js).

// byoForm is what the two forms hold between renders.
type byoForm struct {
	name, text string   // the model's name and config.json as typed
	modelErrs  []string // why the last config was refused, one line per field
	modelNote  string   // the simplifications the last config accepted needed
	readSeq    int      // file reads, so a later choice wins

	gpu     map[string]string // the GPU's figures as typed, by CustomGPUFields key and "name"
	gpuErrs map[string]string // why, by field ("" for the form)

	// rev counts changes, so that the parameters form (its own component,
	// paramsPanel.BYO) is drawn again when one comes from elsewhere (a
	// file read, the address).
	rev int
}

// loadCustom takes the model and GPU the address carries (already offered
// by p.lesson, urlstate.Custom.For).
func (p *Player) loadCustom(c urlstate.Custom) {
	if c.Query() != p.custom.Query() {
		p.byo.rev++
	}
	p.custom = c
}

// hasKnob reports whether the lesson has a choice knob key.
func hasKnob(l *lessons.Lesson, key string) bool {
	pr, ok := l.Param(key)
	return ok && pr.Kind == lessons.Choice
}

// useModel reads a config.json and, when it is one the lesson takes,
// offers and selects it. A refusal names each field at fault
// (modelconfig.FieldError) in #byo-model-error and changes nothing else.
func (p *Player) useModel(ctx app.Context, text, fileName string) {
	if p.lesson == nil {
		return
	}
	p.byo.rev++
	p.byo.modelErrs, p.byo.modelNote = nil, ""
	name := strings.TrimSpace(p.byo.name)
	if name == "" && fileName != "" && !strings.EqualFold(strings.TrimSuffix(fileName, ".json"), "config") {
		name = strings.TrimSuffix(fileName, ".json")
	}
	cfg, err := modelconfig.Parse([]byte(text), name)
	if err != nil {
		p.byo.modelErrs = errorLines(err)
		return
	}
	base := lessons.Get(p.lesson.Slug)
	if ok, why := urlstate.TakesModel(base, cfg); !ok {
		p.byo.modelErrs = []string{why}
		return
	}
	// The model as a link will carry it, so this page and a reload of its
	// address run the same one.
	m, err := modelconfig.DecodeToken(cfg.Token())
	if err != nil {
		p.byo.modelErrs = []string{err.Error()}
		return
	}
	p.byo.modelNote = strings.Join(cfg.Notes, " ")
	c := p.custom
	c.Model = m
	if msg := p.setCustom(ctx, c, "model", m.Model.ID); msg != "" {
		p.byo.modelErrs = []string{msg}
	}
}

// useGPU checks the GPU form and, when every figure is allowed, offers and
// selects the GPU.
func (p *Player) useGPU(ctx app.Context) {
	if p.lesson == nil {
		return
	}
	form := p.gpuForm()
	p.byo.rev++
	p.byo.gpuErrs = nil
	spec := hardware.CustomGPUSpec{Name: gpuName(form["name"])}
	errs := map[string]string{}
	for _, f := range hardware.CustomGPUFields {
		text := strings.TrimSpace(form[f.Key])
		x, err := strconv.ParseFloat(text, 64)
		if err != nil || !plainNumber(text) {
			errs[f.Key] = strconv.Quote(text) + " is not allowed: want " + f.Allowed() + "."
			continue
		}
		spec.SetValue(f.Key, x)
	}
	if len(errs) == 0 {
		for _, e := range unjoin(spec.Check()) {
			var fe *hardware.GPUFieldError
			if errors.As(e, &fe) {
				errs[fe.Field] = fe.Error() + "."
			}
		}
	}
	if len(errs) > 0 {
		p.byo.gpuErrs = errs
		return
	}
	g, err := hardware.ParseGPUToken(spec.Token())
	if err != nil {
		p.byo.gpuErrs = map[string]string{"": err.Error()}
		return
	}
	c := p.custom
	c.GPU = &g
	if msg := p.setCustom(ctx, c, "gpu", hardware.CustomGPUPrefix+g.Name); msg != "" {
		p.byo.gpuErrs = map[string]string{"": msg}
	}
}

// setCustom offers c in the lesson and selects id on knob key, keeping the
// other knobs. When the lesson's checks refuse the selection (the model
// does not fit this GPU), the choice is offered but not selected, and the
// message says why.
func (p *Player) setCustom(ctx app.Context, c urlstate.Custom, key, id string) string {
	base := lessons.Get(p.lesson.Slug)
	lc, took, why := c.For(base)
	if (key == "model" && took.Model == nil) || (key == "gpu" && took.GPU == nil) {
		return strings.Join(why, " ")
	}
	p.lesson, p.custom = lc, took
	text := p.values.Text()
	text[key] = id
	v, errs := urlstate.KnobErrors(lc, text)
	msg := ""
	if errs != nil {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(errs)) {
			parts = append(parts, errs[k])
		}
		msg = id + " is offered by the " + key + " knob but not selected: " + strings.Join(parts, " ")
		v, _ = urlstate.ResolveParams(lc, p.values.Text())
	}
	p.dispatch(ctx, func(ctx app.Context) { p.setKnobs(ctx, v, false) })
	return msg
}

// readModelFile reads the file chosen in input#byo-config-file into the
// text area and uses it. A file over modelconfig.MaxBytes is refused
// before it is read.
func (p *Player) readModelFile(ctx app.Context) {
	in := ctx.JSSrc()
	files := in.Get("files")
	if !files.Truthy() || files.Get("length").Int() == 0 {
		return
	}
	f := files.Index(0)
	name := f.Get("name").String()
	in.Set("value", "") // choosing the same file again reads it again
	p.byo.readSeq++
	gen := p.byo.readSeq
	if size := int64(f.Get("size").Float()); size > modelconfig.MaxBytes {
		p.byo.rev++
		p.byo.modelErrs = []string{lessons.PrintableName(name) + ": the file is " + comma(int(size)) + " bytes: want at most " + byteSize(modelconfig.MaxBytes) + " (published configs are a few kilobytes)"}
		return
	}
	var done, failed app.Func
	release := func() { done.Release(); failed.Release() }
	done = app.FuncOf(func(this app.Value, args []app.Value) any {
		u8 := app.Window().Get("Uint8Array").New(args[0])
		data := make([]byte, u8.Get("length").Int())
		app.CopyBytesToGo(data, u8)
		release()
		p.dispatch(ctx, func(ctx app.Context) {
			if gen != p.byo.readSeq {
				return
			}
			p.byo.text = string(data)
			p.useModel(ctx, p.byo.text, name)
		})
		return nil
	})
	failed = app.FuncOf(func(this app.Value, args []app.Value) any {
		release()
		p.dispatch(ctx, func(ctx app.Context) {
			if gen == p.byo.readSeq {
				p.byo.rev++
				p.byo.modelErrs = []string{lessons.PrintableName(name) + ": the browser could not read it"}
			}
		})
		return nil
	})
	f.Call("arrayBuffer").Call("then", done, failed)
}

// gpuForm is the GPU form's text, filled on first use from the GPU the
// lesson runs on (its datasheet figures, the memory as the engine sees it).
func (p *Player) gpuForm() map[string]string {
	if p.byo.gpu != nil {
		return p.byo.gpu
	}
	form := map[string]string{"name": "my-gpu"}
	if c := p.custom.GPU; c != nil {
		form["name"] = c.Name
		for _, f := range hardware.CustomGPUFields {
			form[f.Key] = figureText(c.Value(f.Key))
		}
		p.byo.gpu = form
		return form
	}
	id := "h100-sxm"
	if p.values.Has("gpu") {
		id = p.values.Choice("gpu")
	}
	if g, err := hardware.GPUByID(id); err == nil {
		mem, _ := hardware.EngineMemory(g)
		form["memory_gib"] = figureText(math.Round(float64(mem)/hardware.GiB*100) / 100)
		form["hbm_gbps"] = figureText(g.MemBandwidth / 1e9)
		form["bf16_tflops"] = figureText(g.PeakBF16 / 1e12)
		form["fp8_tflops"] = figureText(g.PeakFP8 / 1e12)
		form["interconnect_gbps"] = figureText(g.ScaleUpBW / 1e9)
	}
	p.byo.gpu = form
	return form
}

// figureText writes a figure for a number field: at most 4 decimals.
func figureText(x float64) string {
	return strconv.FormatFloat(math.Round(x*1e4)/1e4, 'f', -1, 64)
}

// figureShown writes a figure for reading: thousands separated (3,350;
// 158.38).
func figureShown(x float64) string {
	whole, frac, _ := strings.Cut(figureText(x), ".")
	n, err := strconv.Atoi(whole)
	if err != nil {
		return figureText(x)
	}
	if frac != "" {
		return comma(n) + "." + frac
	}
	return comma(n)
}

// plainNumber reports whether s is digits with at most one decimal point
// (what a number field gives; no exponent, sign or spaces).
func plainNumber(s string) bool {
	return s != "" && strings.Trim(s, "0123456789.") == "" && strings.Count(s, ".") <= 1 && s != "."
}

// gpuName is the slug of a typed GPU name (modelconfig.Name), "" when it
// has nothing usable (the spec's check names the field then).
func gpuName(s string) string {
	if strings.TrimSpace(s) == "" {
		return ""
	}
	id, _ := modelconfig.Name(s)
	return id
}

// errorLines splits a joined error into its lines (errors.Join's).
func errorLines(err error) []string {
	var out []string
	for _, e := range unjoin(err) {
		out = append(out, strings.Split(e.Error(), "\n")...)
	}
	return out
}

// unjoin lists the errors errors.Join combined (err itself otherwise).
func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// pasting reports whether an input event put text in at once (a paste, a
// drop, or the page handing a field's text to the app, web/lab.js), not
// keystroke by keystroke.
func pasting(e app.Event) bool {
	t := e.Get("inputType")
	if !t.Truthy() {
		return true
	}
	switch t.String() {
	case "insertFromPaste", "insertFromDrop", "insertReplacementText", "":
		return true
	}
	return false
}

// renderYourModel is details#byo-model in the parameters form: a name, a
// text area and a file input for a config.json, what is in use, and why a
// config was refused.
func (f *paramsPanel) renderYourModel() app.UI {
	p := f.P
	status := "Not in use: the lesson's own models."
	if c := p.custom.Model; c != nil {
		status = "In use: " + c.Summary() + "."
		if p.byo.modelNote != "" {
			status += " " + p.byo.modelNote
		}
	}
	errs := p.byo.modelErrs
	return openIf(app.Details().ID("byo-model").Class("byo"), p.custom.Model != nil || len(errs) > 0).Body(
		app.Summary().Text("Your model (config.json)"),
		app.P().Class("help").Text("Paste a Hugging Face config.json or choose the file ("+strings.Join(modelconfig.Supported, ", ")+
			"): it is read in this browser, added to the Model knob as custom:NAME and selected. A link to this page carries its shape, not the file."),
		app.Div().Class("byo-row").Body(
			app.Label().For("byo-config-name").Text("Name"),
			app.Input().ID("byo-config-name").Type("text").Value(p.byo.name).Placeholder("the file's name, else _name_or_path, else model").
				Attr("maxlength", "64").Attr("spellcheck", "false").
				OnInput(func(ctx app.Context, e app.Event) { p.byo.name = ctx.JSSrc().Get("value").String() }),
		),
		app.Label().For("byo-config").Text("config.json"),
		app.Textarea().ID("byo-config").Rows(6).Attr("spellcheck", "false").Attr("autocomplete", "off").
			Aria("describedby", "byo-model-error").Text(p.byo.text).
			OnInput(func(ctx app.Context, e app.Event) {
				p.byo.text = ctx.JSSrc().Get("value").String()
				if pasting(e) && strings.TrimSpace(p.byo.text) != "" {
					p.useModel(ctx, p.byo.text, "")
				}
			}),
		app.Div().Class("byo-actions").Body(
			app.Button().ID("byo-config-use").Type("button").
				OnClick(func(ctx app.Context, e app.Event) { p.useModel(ctx, p.byo.text, "") }).Text("Use this model"),
			app.Label().For("byo-config-file").Class("byo-file").Body(
				app.Span().Text("or choose a file "),
				app.Input().ID("byo-config-file").Type("file").Accept(".json,application/json").
					OnChange(func(ctx app.Context, e app.Event) { p.readModelFile(ctx) }),
			),
		),
		app.P().ID("byo-model-status").Role("status").DataSet("model", p.custom.ModelID()).Text(status),
		app.Div().ID("byo-model-error").Role("alert").Hidden(len(errs) == 0).Body(
			app.Range(errs).Slice(func(i int) app.UI { return app.P().Class("notice-msg").Text(errs[i]) }),
		),
	)
}

// renderYourGPU is details#byo-gpu in the parameters form: a name and the
// five figures, each checked against its bounds at its field.
func (f *paramsPanel) renderYourGPU() app.UI {
	p := f.P
	form, errs := p.gpuForm(), p.byo.gpuErrs
	status := "Not in use: the lesson's own GPUs."
	if g := p.custom.GPU; g != nil {
		status = "In use: " + p.custom.GPUID() + ": " + figureShown(g.MemoryGiB) + " GiB, " + figureShown(g.HBMGBps) + " GB/s, " +
			figureShown(g.BF16TFLOPS) + " BF16 and " + figureShown(g.FP8TFLOPS) + " FP8 TFLOP/s, " + figureShown(g.InterconnectGBps) +
			" GB/s to its peers; Hopper's efficiency factors, PCIe Gen5 to the host."
	}
	fields := hardware.CustomGPUFields
	return openIf(app.Details().ID("byo-gpu").Class("byo"), p.custom.GPU != nil || len(errs) > 0).Body(
		app.Summary().Text("Your GPU"),
		app.P().Class("help").Text("Five datasheet figures (dense, not sparse; memory as the engine sees it): the GPU is added to the GPU knob as custom:NAME and selected. What a datasheet does not give is the lab's default for a part it has no measurements of: Hopper's efficiency factors, NCCL at the fraction of the link an 8×H100 node reaches, PCIe Gen5 to the host."),
		app.Div().Class("fields byo-fields").Body(
			f.gpuField("name", "Name", "", "Lower-case letters, digits, dots and dashes.", "text", form, errs),
			app.Range(fields).Slice(func(i int) app.UI {
				fd := fields[i]
				return f.gpuField(fd.Key, fd.Label, fd.Unit, fd.Help+" Allowed: "+fd.Allowed()+".", "number", form, errs)
			}),
		),
		app.Div().Class("byo-actions").Body(
			app.Button().ID("byo-gpu-use").Type("button").
				OnClick(func(ctx app.Context, e app.Event) { p.useGPU(ctx) }).Text("Use this GPU"),
		),
		app.P().ID("byo-gpu-status").Role("status").DataSet("gpu", p.custom.GPUID()).Text(status),
		app.P().ID("byo-gpu-error").Class("notice-msg").Role("alert").Hidden(errs[""] == "").Text(errs[""]),
	)
}

// gpuField is one field of the GPU form: #byo-gpu-KEY, its error under it.
func (f *paramsPanel) gpuField(key, label, unit, help, kind string, form, errs map[string]string) app.UI {
	p := f.P
	id, errID, helpID := "byo-gpu-"+key, "byo-gpu-error-"+key, "byo-gpu-help-"+key
	msg := errs[key]
	described := helpID
	if msg != "" {
		described = errID + " " + helpID
	}
	in := app.Input().ID(id).Type(kind).Value(form[key]).Aria("describedby", described).Aria("invalid", strconv.FormatBool(msg != "")).
		OnInput(func(ctx app.Context, e app.Event) { p.gpuForm()[key] = ctx.JSSrc().Get("value").String() })
	if kind == "number" {
		in = in.Attr("step", "any").Attr("inputmode", "decimal")
	} else {
		in = in.Attr("maxlength", "64").Attr("spellcheck", "false")
	}
	return app.Div().Class("field").DataSet("invalid", msg != "").Body(
		app.Label().For(id).Body(
			app.Span().Class("field-label").Text(label),
			app.If(unit != "", func() app.UI { return app.Span().Class("unit").Text(" (" + unit + ")") }),
		),
		in,
		app.P().ID(errID).Class("field-error").Hidden(msg == "").Text(msg),
		app.P().ID(helpID).Class("help").Text(help),
	)
}

// openIf sets the open attribute only when open is true (see button).
func openIf(d app.HTMLDetails, open bool) app.HTMLDetails {
	if open {
		return d.Open(true)
	}
	return d
}

// inGPUForm reports whether the focus is in the GPU form (Enter there
// submits the parameters form: it applies the GPU instead).
func inGPUForm() bool {
	if !app.IsClient {
		return false
	}
	ae := app.Window().Get("document").Get("activeElement")
	return ae.Truthy() && strings.HasPrefix(ae.Get("id").String(), "byo-gpu-")
}
