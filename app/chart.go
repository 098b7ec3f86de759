package app

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/inferlab/inferlab/scene"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// Series colours, in order: the articles' palette first.
var chartColours = opts.Colors{"#00e5ff", "#818cf8", "#10b981", "#ef4444", "#f59e0b", "#f472b6", "#a3e635", "#38bdf8"}

// ChartOptions turns a scene.Chart into ECharts option JSON, built with
// go-echarts (no JS functions, so JSON.parse in the browser keeps every
// option). animate=false turns ECharts' animation off (reduced motion). ARIA
// descriptions and decal patterns are on, so series differ by more than
// colour. The current step is marked by an element laid over the chart
// (chartView), so a step change does not make ECharts redo its layout.
func ChartOptions(c *scene.Chart, animate bool) ([]byte, error) {
	return ChartOptionsMarked(c, nil, animate)
}

// ChartOptionsMarked is ChartOptions with the scene's marks drawn: a marked
// point (point:SERIES:i) is enlarged, outlined and labelled with its mark's
// label, a marked guide (guide:ID) is drawn bolder. Point labels
// (Series.Labels), model curves without markers (Series.Curve), steps
// (Series.Step) and guides (Chart.Guides) are drawn whether marked or not.
func ChartOptionsMarked(c *scene.Chart, mks []scene.Mark, animate bool) ([]byte, error) {
	return chartOptionsAt(c, mks, animate, 0)
}

// Legend geometry, in px: ECharts' item (its 25 px icon, a 5 px gap, the
// name at 12 px) and the gap after it; its rows 24 px apart. The legend
// stops short of the toolbox's icon at the top right.
const (
	legendIcon     = 30.0
	legendGap      = 10.0
	legendRowH     = 19.0
	legendRight    = 32.0
	legendTextPx   = 12.0
	chartGridTop   = 56 // the plot's top under one row of legend and the y axis' name
	defaultChartPx = 640.0
)

// legendRows is how many rows ECharts lays a plain legend of these
// series' names out in, in a chart width px wide (it wraps items that
// would pass the right edge). The estimate of a name's width is generous
// (capitals and digits run wider than charWidth's mean).
func legendRows(series []scene.Series, width float64) int {
	if width <= 0 {
		width = defaultChartPx
	}
	room := width - legendRight
	rows, x := 1, 0.0
	for _, se := range series {
		w := legendIcon + 1.1*charWidth(legendTextPx)*float64(len([]rune(se.Name)))
		if x > 0 && x+w > room {
			rows++
			x = 0
		}
		x += w + legendGap
	}
	return rows
}

// chartOptionsAt is ChartOptionsMarked for a chart width px wide (0:
// unknown): the legend wraps onto as many rows as its names need, and the
// plot starts under them, so no name is cut or hidden behind a pager.
func chartOptionsAt(c *scene.Chart, mks []scene.Mark, animate bool, width float64) ([]byte, error) {
	if c == nil {
		return nil, fmt.Errorf("chart: nil chart")
	}
	xType, yType := "value", "value"
	if c.XLog {
		xType = "log"
	}
	if c.YLog {
		yType = "log"
	}
	if c.Type == scene.Bar {
		xType = "category"
	}
	global := []charts.GlobalOpts{
		charts.WithInitializationOpts(opts.Initialization{AssetsHost: "/web/", BackgroundColor: "transparent"}),
		charts.WithAnimation(animate),
		charts.WithColorsOpts(chartColours),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Top: "0", Left: "0", Right: strconv.Itoa(int(legendRight)), Type: "plain"}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithXAxisOpts(opts.XAxis{Type: xType, Name: axisName(c.XLabel, c.XUnit), NameLocation: "middle", NameGap: 28}),
		charts.WithYAxisOpts(opts.YAxis{Type: yType, Name: axisName(c.YLabel, c.YUnit), NameLocation: "end"}),
		charts.WithGridOpts(opts.Grid{ContainLabel: opts.Bool(true), Left: "12", Right: "24",
			Top: strconv.Itoa(chartGridTop + int(legendRowH)*(legendRows(c.Series, width)-1)), Bottom: "36"}),
		charts.WithAriaOpts(&opts.Aria{Enabled: opts.Bool(true), Decal: &opts.AriaDecal{Show: opts.Bool(true)}}),
		// The toolbox's icon for pointer users; the figure's "PNG" button
		// (keyboard) does the same through getDataURL.
		charts.WithToolboxOpts(opts.Toolbox{Show: opts.Bool(true), Right: "0", Top: "0", Feature: &opts.ToolBoxFeature{
			SaveAsImage: &opts.ToolBoxFeatureSaveAsImage{Show: opts.Bool(true), Type: "png", Title: "Save as PNG", Name: "inferlab-chart"},
		}}),
	}

	var built interface {
		Validate()
		JSON() map[string]interface{}
	}
	switch c.Type {
	case scene.Bar:
		bar := charts.NewBar()
		bar.SetGlobalOptions(global...)
		bar.Assets.ClearPresetJSAssets()
		var cats []string
		if len(c.Series) > 0 {
			for i, x := range c.Series[0].X {
				cats = append(cats, c.CategoryName(i, x))
			}
		}
		bar.SetXAxis(cats)
		for _, s := range c.Series {
			data := make([]opts.BarData, len(s.Y))
			for i, y := range s.Y {
				data[i] = opts.BarData{Value: finite(y)}
			}
			bar.AddSeries(s.Name, data)
		}
		built = bar
	case scene.Scatter:
		sc := charts.NewScatter()
		sc.SetGlobalOptions(global...)
		sc.Assets.ClearPresetJSAssets()
		for _, s := range c.Series {
			data := make([]opts.ScatterData, 0, len(s.Y))
			for i := range s.Y {
				if i < len(s.X) {
					data = append(data, opts.ScatterData{Value: []any{finite(s.X[i]), finite(s.Y[i])}})
				}
			}
			sc.AddSeries(s.Name, data)
		}
		built = sc
	default:
		line := charts.NewLine()
		line.SetGlobalOptions(global...)
		line.Assets.ClearPresetJSAssets()
		for _, s := range c.Series {
			data := make([]opts.LineData, 0, len(s.Y))
			for i := range s.Y {
				if i < len(s.X) {
					data = append(data, opts.LineData{Value: []any{finite(s.X[i]), finite(s.Y[i])}})
				}
			}
			line.AddSeries(s.Name, data, charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(len(data) <= 40)}))
		}
		built = line
	}
	built.Validate()

	// Round-trip through a plain map to add what go-echarts has no option for.
	raw, err := json.Marshal(built.JSON())
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	m["textStyle"] = map[string]any{"fontFamily": "system-ui, sans-serif"}
	// A series may override the chart's type (a roofline with a scatter
	// point): both use [x, y] data (or per-category values), so only the
	// type changes.
	mk := marksOf(mks)
	if series, ok := m["series"].([]any); ok {
		for i, se := range c.Series {
			if i >= len(series) {
				continue
			}
			sm, ok := series[i].(map[string]any)
			if !ok {
				continue
			}
			if se.Type != "" && se.Type != c.Type {
				sm["type"] = string(se.Type)
				if se.Type == scene.Scatter {
					sm["symbolSize"] = 12
				}
			}
			styleSeries(sm, se, c.Type, mk, calloutBelow(c, mk), calloutBeside(c, mk), xSpan(c))
		}
		for i := range series {
			if sm, ok := series[i].(map[string]any); ok && i < len(c.Series) {
				// An id per series: a step that changes only the data
				// merges into the chart shown, and ECharts moves the
				// points (chartView.draw).
				sm["id"] = c.Series[i].Name
				// Always present, so a merge drops the guides of the
				// step before.
				sm["markLine"] = map[string]any{"data": []any{}}
				sm["markArea"] = map[string]any{"data": []any{}}
			}
		}
		if len(c.Guides) > 0 && len(series) > 0 {
			if sm, ok := series[0].(map[string]any); ok {
				addGuides(sm, c, mk, width)
			}
		}
	}
	// Axes stay at the plot's edges even when the other axis spans zero.
	if ys, ok := m["yAxis"].([]any); ok && len(ys) > 0 {
		if y0, ok := ys[0].(map[string]any); ok {
			// The y axis name sits above the axis, starting at it (centred,
			// a long name would be cut at the chart's left edge).
			y0["nameTextStyle"] = map[string]any{"align": "left"}
			y0["axisLine"] = map[string]any{"onZero": false}
			y0["axisLabel"] = axisLabels()
		}
	}
	if xs, ok := m["xAxis"].([]any); ok && len(xs) > 0 {
		if x0, ok := xs[0].(map[string]any); ok {
			x0["axisLine"] = map[string]any{"onZero": false}
			x0["axisLabel"] = axisLabels()
		}
	}
	return json.Marshal(m)
}

// axisLabels has ECharts leave out a tick label that would overlap its
// neighbour (a log axis's "1,000" and "10,000" on a phone), measuring
// each one a line of 14 px (see calloutLineHeight).
func axisLabels() map[string]any {
	return map[string]any{"hideOverlap": true, "lineHeight": 14}
}

// CursorValue is the x value the step marker of a chart sits at (a string
// for bar charts, whose x axis is categorical), or nil for none.
func CursorValue(c *scene.Chart) any {
	if c == nil || c.Cursor == nil || math.IsNaN(*c.Cursor) || math.IsInf(*c.Cursor, 0) {
		return nil
	}
	if c.Type == scene.Bar {
		return trimFloat(*c.Cursor)
	}
	return *c.Cursor
}

func axisName(label, unit string) string {
	if unit == "" {
		return label
	}
	return label + " (" + unit + ")"
}

func trimFloat(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// finite keeps NaN and ±Inf out of the JSON (encoding/json rejects them).
func finite(x float64) any {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return x
}

// chartView renders a scene.Chart into an ECharts instance. The container
// (#chart-ID) is created by go-app and never changed by it afterwards; ECharts
// owns its children.
type chartView struct {
	app.Compo

	SceneID string
	Title   string
	Motion  bool
	Marks   []scene.Mark
	// Get returns the chart to show; a func so go-app does not deep-compare
	// series (see gridView.Get).
	Get func() *scene.Chart

	inst       app.Value
	alive      bool // mounted (the delayed start checks it)
	shown      *scene.Chart
	shownMarks []scene.Mark
	motion     bool        // the animation setting of the options shown
	legendRows int         // the rows the legend shown takes (legendRows)
	hidden     []app.Value // the point labels declutter hid
	finishedFn app.Func
	resizeFn   app.Func
	observer   app.Value
	themeFn    app.Func
}

func (c *chartView) CompoID() string { return "chart:" + c.SceneID }

func (c *chartView) chart() *scene.Chart {
	if c.Get == nil {
		return nil
	}
	return c.Get()
}

func (c *chartView) Render() app.UI {
	ch := c.chart()
	var desc, aria string
	if ch != nil {
		desc, aria = chartDescription(ch), chartAria(ch)
	}
	mk := c.Marks
	return app.Figure().Class("scene", "scene-chart").DataSet("kind", string(scene.KindChart)).DataSet("scene-id", c.SceneID).Body(
		app.FigCaption().Body(
			app.Span().Class("scene-title").Text(c.Title),
			app.Span().Class("scene-sub").Text(desc),
			app.Button().ID("png-"+c.SceneID).Type("button").Class("save-png ghost").
				Title("Save this chart as a PNG image").Aria("label", "Save the chart “"+c.Title+"” as PNG").
				OnClick(func(ctx app.Context, e app.Event) { c.savePNG() }).
				Body(app.Span().Aria("hidden", "true").Text("⤓ "), app.Text("PNG")),
		),
		app.Div().Class("chart-wrap").Body(
			c.container(ch, aria),
			// Positioned by web/lab.js (style set from JS only, never here).
			app.Div().ID("cursor-"+c.SceneID).Class("chart-cursor").Body(app.Span().Text("now")),
		),
		// The marked points and guides, named in words under the chart:
		// the canvas has no element per point, so these carry data-ref.
		app.Ul().Class("chart-marks").Body(
			app.Range(mk).Slice(func(i int) app.UI {
				return app.Li().Class("marked").DataSet("ref", mk[i].Ref).Text(chartMarkText(ch, mk[i]))
			}),
		),
	)
}

// container is #chart-ID, where ECharts draws. Prerendered, it holds the
// chart drawn as markup (chart_static.go), which ECharts replaces once the
// app runs.
func (c *chartView) container(ch *scene.Chart, aria string) app.UI {
	d := app.Div().ID("chart-"+c.SceneID).Class("chart").Role("img").Aria("label", c.Title+". "+aria)
	if app.IsServer && ch != nil {
		return d.DataSet("static", "true").Body(app.Raw(staticChart(ch, c.Marks)))
	}
	return d
}

// chartMarkText names a marked point or guide: its mark's label, else the
// point's own label or the guide's.
func chartMarkText(ch *scene.Chart, m scene.Mark) string {
	if m.Label != "" {
		return m.Label
	}
	if ch == nil {
		return m.Ref
	}
	if kind, key, ok := strings.Cut(m.Ref, ":"); ok {
		switch kind {
		case "point":
			if name, idx, ok := cutLast(key); ok {
				for _, se := range ch.Series {
					if se.Name == name && idx < len(se.Labels) && se.Labels[idx] != "" {
						return se.Labels[idx]
					}
				}
			}
		case "guide":
			for _, g := range ch.Guides {
				if g.ID == key {
					return g.Label
				}
			}
		}
	}
	return m.Ref
}

// cutLast splits "name:5" at its last colon into the name and the index.
func cutLast(s string) (string, int, bool) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(s[i+1:])
	return s[:i], n, err == nil
}

// styleSeries adds what go-echarts has no option for to one series' JSON:
// point labels and marks, model curves without markers, steps.
func styleSeries(sm map[string]any, se scene.Series, chartType scene.ChartType, mk marks, below map[string]bool, beside map[string]string, xFrac func(se scene.Series, i int) float64) {
	typ := se.Type
	if typ == "" {
		typ = chartType
	}
	if se.Curve {
		sm["showSymbol"] = false
		sm["symbol"] = "none"
		sm["lineStyle"] = map[string]any{"width": 2.5}
		sm["z"] = 1
	}
	if se.Step && typ == scene.Line {
		sm["step"] = "start"
		sm["showSymbol"] = false
	}
	data, ok := sm["data"].([]any)
	if !ok {
		return
	}
	labelled := false
	for i := range data {
		text := ""
		if i < len(se.Labels) {
			text = se.Labels[i]
		}
		ref := "point:" + se.Name + ":" + strconv.Itoa(i)
		marked := mk.has(ref)
		if text == "" && !marked {
			continue
		}
		item := map[string]any{"value": data[i]}
		if m, ok := data[i].(map[string]any); ok {
			item = m
		}
		if marked {
			text = mk.label(ref, text)
			item["symbol"] = "circle"
			item["symbolSize"] = 18
			item["itemStyle"] = map[string]any{"borderColor": "#f8fafc", "borderWidth": 3, "shadowBlur": 8, "shadowColor": "rgba(0,0,0,0.6)"}
			// lineHeight: ECharts measures a line as a CJK glyph's width,
			// which a browser without CJK fonts draws narrow, and then
			// misjudges overlaps (labelLayout hideOverlap).
			label := map[string]any{"show": true, "formatter": text, "position": "top", "distance": 10, "fontWeight": "bold", "fontSize": 13, "lineHeight": calloutLineHeight,
				"color": "#0f172a", "backgroundColor": "#fde68a", "padding": []int{3, 6}, "borderRadius": 4}
			switch {
			case beside[ref] != "" && typ == scene.Bar:
				// Beside the bar's top, not its middle.
				label["position"] = map[string]any{"left": []any{0, 0}, "right": []any{"100%", 0}}[beside[ref]]
				label["align"] = map[string]string{"left": "right", "right": "left"}[beside[ref]]
				label["offset"] = map[string][]int{"left": {-6, 0}, "right": {6, 0}}[beside[ref]]
			case beside[ref] != "":
				label["position"] = beside[ref]
			case typ != scene.Bar && below[ref]:
				label["position"] = "bottom"
			}
			// A point in the plot's outer fifths has its callout run
			// inwards, not centred off the canvas.
			switch f := xFrac(se, i); {
			case beside[ref] != "":
			case f < 0.2:
				label["align"] = "left"
				label["offset"] = []int{-9, 0}
			case f > 0.8:
				label["align"] = "right"
				label["offset"] = []int{9, 0}
			}
			item["label"] = label
		} else {
			// Beside the point, on the side with room: left of a point in
			// the plot's right fifth, where it would leave the canvas.
			pos := "right"
			if xFrac(se, i) > 0.8 {
				pos = "left"
			}
			item["label"] = map[string]any{"show": true, "formatter": text, "position": pos, "fontSize": 11, "lineHeight": pointLabelLineHeight, "color": "inherit"}
			if typ == scene.Line && !se.Curve {
				item["symbol"] = "circle"
			}
		}
		data[i] = item
		labelled = true
	}
	if labelled {
		sm["labelLayout"] = map[string]any{"hideOverlap": true}
		if typ == scene.Line {
			sm["showSymbol"] = true
		}
	}
}

// markedPoint is a marked point of a chart: its ref, value and place
// along the x axis (xSpan).
type markedPoint struct {
	ref     string
	x, y, f float64
}

// markedPoints lists a chart's marked points in series order.
func markedPoints(c *scene.Chart, mk marks) []markedPoint {
	frac := xSpan(c)
	var pts []markedPoint
	for _, se := range c.Series {
		for i := range se.Y {
			if ref := "point:" + se.Name + ":" + strconv.Itoa(i); mk.has(ref) && i < len(se.X) {
				pts = append(pts, markedPoint{ref, se.X[i], se.Y[i], frac(se, i)})
			}
		}
	}
	return pts
}

// sharesX reports whether another of pts lies at p's x.
func sharesX(pts []markedPoint, p markedPoint) bool {
	for _, q := range pts {
		if q.ref != p.ref && q.x == p.x {
			return true
		}
	}
	return false
}

// calloutBelow lists the marked points whose callout goes under the
// point rather than above it: the lower ones of marked points at one x
// (the highest keeps its callout above, and they do not meet); a point
// alone at its x near the plot's top (above, its callout would rise into
// the y axis' name and the legend); and of two lone points close along x
// on the same side, the later one goes to the other (their callouts would
// cover each other).
func calloutBelow(c *scene.Chart, mk marks) map[string]bool {
	pts := markedPoints(c, mk)
	high := nearTop(c)
	out := map[string]bool{}
	for _, p := range pts {
		highest := true
		for _, q := range pts {
			if q.ref != p.ref && q.x == p.x {
				highest = highest && q.y <= p.y
			}
		}
		shared := sharesX(pts, p)
		out[p.ref] = (shared && !highest) || (!shared && high(p.y))
	}
	for i, p := range pts {
		for _, q := range pts[:i] {
			if p.x != q.x && math.Abs(p.f-q.f) < 0.25 && out[p.ref] == out[q.ref] && !sharesX(pts, p) && !sharesX(pts, q) {
				out[p.ref] = !out[q.ref]
			}
		}
	}
	return out
}

// calloutBeside gives the marked points whose callout goes beside the
// point its side ("left" or "right"): the highest of marked points at one
// x when it lies near the plot's top (above, it would rise into the y
// axis' name; under, onto the others' callouts), and a bar near the top
// (a bar's callout under it would sit at its foot). The side is away from
// the nearest other marked point within a quarter of the axis, else
// toward the plot's middle.
func calloutBeside(c *scene.Chart, mk marks) map[string]string {
	high := nearTop(c)
	below := calloutBelow(c, mk)
	pts := markedPoints(c, mk)
	bars := map[string]bool{}
	for _, se := range c.Series {
		if typeOf(se, c) == scene.Bar {
			for i := range se.Y {
				bars["point:"+se.Name+":"+strconv.Itoa(i)] = true
			}
		}
	}
	out := map[string]string{}
	for _, p := range pts {
		if !high(p.y) || (!bars[p.ref] && (!sharesX(pts, p) || below[p.ref])) {
			continue
		}
		side, near := "right", 2.0
		if p.f > 0.5 {
			side = "left"
		}
		for _, q := range pts {
			if d := q.f - p.f; q.ref != p.ref && q.x != p.x && math.Abs(d) < 0.25 && math.Abs(d) < near {
				near = math.Abs(d)
				side = map[bool]string{true: "left", false: "right"}[d > 0] // away from it
			}
		}
		out[p.ref] = side
	}
	return out
}

// xSpan places a point along the x axis, 0 at its left and 1 at its right
// (the data's range, from 0 on a linear axis; a category's index on a bar
// chart).
func xSpan(c *scene.Chart) func(se scene.Series, i int) float64 {
	if c.Type == scene.Bar {
		return func(se scene.Series, i int) float64 {
			if len(se.X) <= 1 {
				return 0.5
			}
			return float64(i) / float64(len(se.X)-1)
		}
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	at := func(x float64) float64 {
		if c.XLog {
			return math.Log(x)
		}
		return x
	}
	for _, se := range c.Series {
		for _, x := range se.X {
			if math.IsNaN(x) || math.IsInf(x, 0) || (c.XLog && x <= 0) {
				continue
			}
			lo, hi = min(lo, at(x)), max(hi, at(x))
		}
	}
	if !c.XLog && lo > 0 {
		lo = 0 // a linear value axis starts at 0 (ECharts' scale: false)
	}
	return func(se scene.Series, i int) float64 {
		if i >= len(se.X) || hi <= lo || (c.XLog && se.X[i] <= 0) {
			return 0.5
		}
		return (at(se.X[i]) - lo) / (hi - lo)
	}
}

// nearTop reports whether a value lies in the top eighth of the chart's
// y range (from its data; a linear axis from 0 when the data are
// positive, as ECharts draws it).
func nearTop(c *scene.Chart) func(float64) bool {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, se := range c.Series {
		for _, y := range se.Y {
			if math.IsNaN(y) || math.IsInf(y, 0) || (c.YLog && y <= 0) {
				continue
			}
			lo, hi = min(lo, y), max(hi, y)
		}
	}
	if hi <= lo {
		return func(float64) bool { return false }
	}
	if c.YLog {
		return func(y float64) bool { return y > 0 && math.Log(y) >= math.Log(lo)+0.875*(math.Log(hi)-math.Log(lo)) }
	}
	lo = min(lo, 0)
	return func(y float64) bool { return y >= lo+0.875*(hi-lo) }
}

// addGuides draws the chart's guides on a series: lines as markLine,
// bands as markArea, a marked one bolder.
func addGuides(sm map[string]any, c *scene.Chart, mk marks, width float64) {
	var lines, areas []any
	for _, g := range c.Guides {
		axis := "xAxis"
		if g.Axis == "y" {
			axis = "yAxis"
		}
		val := func(v float64) any {
			if axis == "xAxis" && c.Type == scene.Bar {
				return trimFloat(v)
			}
			return finite(v)
		}
		marked := mk.has("guide:" + g.ID)
		colour, width := "#94a3b8", 1.5
		if marked {
			colour, width = "#fbbf24", 3
		}
		if g.From == g.To {
			pos := "insideEndTop"
			lines = append(lines, map[string]any{axis: val(g.From), "name": g.Label,
				"lineStyle": map[string]any{"color": colour, "width": width, "type": "dashed"},
				"label":     guideLabel(g.Label, pos, colour, width)})
			continue
		}
		fill := "rgba(16,185,129,0.10)"
		if marked {
			fill = "rgba(251,191,36,0.18)"
		}
		areas = append(areas, []any{
			map[string]any{axis: val(g.From), "name": g.Label, "itemStyle": map[string]any{"color": fill},
				"label": guideLabel(g.Label, "insideTopLeft", colour, width)},
			map[string]any{axis: val(g.To)},
		})
	}
	if len(lines) > 0 {
		sm["markLine"] = map[string]any{"symbol": "none", "silent": true, "animation": false, "data": lines}
	}
	if len(areas) > 0 {
		sm["markArea"] = map[string]any{"silent": true, "animation": false, "data": areas}
	}
}

// guideLabel is a guide's label: bold, in its colour, cut with an
// ellipsis at 0.6 of the chart's width when that is known (an SLO's words
// ran past a phone's chart).
func guideLabel(text, pos, colour string, width float64) map[string]any {
	l := map[string]any{"show": true, "formatter": text, "position": pos, "color": colour, "fontWeight": "bold", "lineHeight": guideLabelLineHeight}
	if width > 0 {
		l["width"] = int(0.6 * width)
		l["overflow"] = "truncate"
	}
	return l
}

// chartDescription is the chart's subtitle: its Note, in plain words, or
// what it plots against what.
func chartDescription(ch *scene.Chart) string {
	if ch.Note != "" {
		return ch.Note
	}
	return axisName(ch.YLabel, ch.YUnit) + " against " + axisName(ch.XLabel, ch.XUnit)
}

// chartAria is the chart's accessible description: the subtitle and each
// series with its points' labels.
func chartAria(ch *scene.Chart) string {
	s := chartDescription(ch) + "."
	for _, se := range ch.Series {
		s += " " + se.Name
		if n := len(se.Y); n > 0 && !se.Curve {
			s += ": " + strconv.Itoa(n) + " points, from " + formatNumber(se.Y[0]) + " to " + formatNumber(se.Y[n-1])
		}
		s += "."
	}
	return s
}

// echartsTheme is the ECharts theme of the page's colour theme (web/lab.js
// sets <html data-theme>): "dark", or nil for ECharts' light default.
func echartsTheme() any {
	if h := app.Window().Get("inferlab"); h.Truthy() && h.Call("theme").String() == "light" {
		return nil
	}
	return "dark"
}

func (c *chartView) init() {
	el := app.Window().GetElementByID("chart-" + c.SceneID)
	ec := app.Window().Get("echarts")
	if el.IsNull() || !ec.Truthy() {
		return
	}
	c.inst = ec.Call("init", el, echartsTheme(), map[string]any{"renderer": "canvas"})
	c.hidden = nil
	if c.finishedFn == nil {
		c.finishedFn = app.FuncOf(func(this app.Value, args []app.Value) any {
			c.declutter()
			return nil
		})
	}
	c.inst.Call("on", "finished", c.finishedFn)
	c.draw(true)
	if !chartMarked {
		chartMarked = true
		mark("chart") // the first chart drawn (interactive-time profile)
	}
}

// chartMarked: the first chart of the page load was marked.
var chartMarked bool

// savePNG downloads the chart as an image (ECharts getDataURL, drawn on the
// page's background so it reads outside the page too).
func (c *chartView) savePNG() {
	if c.inst == nil || !c.inst.Truthy() {
		return
	}
	labJS("savePNG", c.inst, c.SceneID)
}

// OnMount draws the chart a moment after the page has rendered: the first
// ECharts draw of a page load (library warm-up, canvas, text measurement)
// took 0.2–1.3 s on the loaded 2-vCPU machine, and the page can step and
// paint its other figures meanwhile (#chart-ID[data-ready] says when it is
// drawn).
func (c *chartView) OnMount(ctx app.Context) {
	c.alive = true
	ctx.After(chartDelay, func(ctx app.Context) {
		if c.alive && c.inst == nil {
			c.start(ctx)
		}
	})
}

// chartDelay leaves the render that mounted the chart time to paint.
const chartDelay = 16 * time.Millisecond

// echartsWait is how often a chart looks again for ECharts while it loads.
const echartsWait = 40 * time.Millisecond

func (c *chartView) start(ctx app.Context) {
	c.init()
	if c.inst == nil {
		// ECharts is loaded on demand (web/lab.js loadCharts): ask, and
		// look again a little later, for as long as the chart is shown.
		if !app.Window().Get("echarts").Truthy() && c.alive {
			labJS("loadCharts")
			ctx.After(echartsWait, func(ctx app.Context) {
				if c.alive && c.inst == nil {
					c.start(ctx)
				}
			})
		}
		return
	}
	el := app.Window().GetElementByID("chart-" + c.SceneID)
	// A theme switch re-creates the chart with the other ECharts theme.
	c.themeFn = app.FuncOf(func(this app.Value, args []app.Value) any {
		ctx.Dispatch(func(app.Context) {
			if c.inst != nil && c.inst.Truthy() {
				c.inst.Call("dispose")
			}
			c.init()
		})
		return nil
	})
	app.Window().Call("addEventListener", "inferlab:theme", c.themeFn)
	c.resizeFn = app.FuncOf(func(this app.Value, args []app.Value) any {
		if c.inst != nil && c.inst.Truthy() {
			c.inst.Call("resize")
			c.fitLegend()
			c.placeCursor()
		}
		return nil
	})
	if ro := app.Window().Get("ResizeObserver"); ro.Truthy() {
		c.observer = ro.New(c.resizeFn)
		c.observer.Call("observe", el)
	} else {
		app.Window().Call("addEventListener", "resize", c.resizeFn)
	}
}

func (c *chartView) OnUpdate(ctx app.Context) {
	ctx.Defer(func(app.Context) { c.draw(false) })
}

// draw sets the chart's options when its series changed (a rebuild) and
// moves the step marker otherwise.
func (c *chartView) draw(full bool) {
	ch := c.chart()
	if ch == nil || c.inst == nil || !c.inst.Truthy() {
		return
	}
	same := sameMarks(c.Marks, c.shownMarks)
	if ch == c.shown && !full && c.motion == c.Motion && same {
		return
	}
	if full || c.shown == nil || !same || !sameSeries(ch, c.shown) || c.motion != c.Motion {
		width := c.width()
		c.setLegendRows(legendRows(ch.Series, width))
		js, err := chartOptionsAt(ch, c.Marks, c.Motion, width)
		if err != nil {
			app.Log("chart", c.SceneID, err)
			return
		}
		// The same series with other data (a point moving along as the
		// batch grows): merge, so that ECharts animates the change.
		// lazyUpdate: ECharts draws in its own next frame, so a step change
		// renders its frame without waiting for the chart.
		how := map[string]any{"notMerge": true, "lazyUpdate": !full}
		if !full && c.shown != nil && c.motion == c.Motion && sameSeriesNames(ch, c.shown) {
			how = map[string]any{"replaceMerge": []any{"series"}, "lazyUpdate": true}
		}
		c.inst.Call("setOption", app.Window().Get("JSON").Call("parse", string(js)), how)
		c.motion = c.Motion
	}
	c.shown, c.shownMarks = ch, c.Marks
	c.placeCursor()
	el := app.Window().GetElementByID("chart-" + c.SceneID)
	if !el.IsNull() {
		el.Call("setAttribute", "data-ready", "true")
	}
}

// width is the chart container's width in px (0 before it is laid out).
func (c *chartView) width() float64 {
	el := app.Window().GetElementByID("chart-" + c.SceneID)
	if el.IsNull() {
		return 0
	}
	return el.Get("clientWidth").Float()
}

// fitLegend moves the plot's top when a new width wraps the legend onto
// another number of rows.
func (c *chartView) fitLegend() {
	if c.shown == nil {
		return
	}
	rows := legendRows(c.shown.Series, c.width())
	if rows == c.legendRows {
		return
	}
	c.setLegendRows(rows)
	c.inst.Call("setOption", map[string]any{"grid": map[string]any{"top": chartGridTop + int(legendRowH)*(rows-1)}})
}

// setLegendRows records the legend's rows and grows the chart's box by
// as many (lab.css --legend-rows), so the plot keeps its height.
func (c *chartView) setLegendRows(rows int) {
	c.legendRows = rows
	if el := app.Window().GetElementByID("chart-" + c.SceneID); !el.IsNull() {
		el.Get("style").Call("setProperty", "--legend-rows", strconv.Itoa(rows))
	}
}

func (c *chartView) placeCursor() {
	helper := app.Window().Get("inferlab")
	marker := app.Window().GetElementByID("cursor-" + c.SceneID)
	if !helper.Truthy() || marker.IsNull() || c.shown == nil {
		return
	}
	helper.Call("cursor", c.inst, marker, CursorValue(c.shown))
}

// sameSeries reports whether two charts draw the same series (lessons copy
// a chart per step and only move the cursor). Steps built in this process
// share the series' slices; steps decoded from the simulation worker hold
// equal copies, compared value by value (a few thousand numbers at most,
// far cheaper than ECharts redrawing the chart).
func sameSeries(a, b *scene.Chart) bool {
	if len(a.Series) != len(b.Series) || a.Type != b.Type {
		return false
	}
	if len(a.Series) == 0 || &a.Series[0] == &b.Series[0] {
		return true
	}
	for i := range a.Series {
		x, y := &a.Series[i], &b.Series[i]
		if x.Name != y.Name || x.Type != y.Type || !sameFloats(x.X, y.X) || !sameFloats(x.Y, y.Y) {
			return false
		}
	}
	return true
}

// sameSeriesNames reports whether two charts of the same type draw series
// of the same names and types, in the same order, on the same axes.
func sameSeriesNames(a, b *scene.Chart) bool {
	if a.Type != b.Type || len(a.Series) != len(b.Series) || a.XLog != b.XLog || a.YLog != b.YLog {
		return false
	}
	for i := range a.Series {
		if a.Series[i].Name != b.Series[i].Name || a.Series[i].Type != b.Series[i].Type {
			return false
		}
	}
	return true
}

// sameMarks reports whether two lists of marks are equal.
func sameMarks(a, b []scene.Mark) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// sameFloats compares bit patterns, so NaN equals NaN and the answer is
// whether the chart would draw the same thing.
func sameFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

func (c *chartView) OnDismount() {
	c.alive = false
	if c.themeFn != nil {
		app.Window().Call("removeEventListener", "inferlab:theme", c.themeFn)
		c.themeFn.Release()
		c.themeFn = nil
	}
	if c.observer != nil && c.observer.Truthy() {
		c.observer.Call("disconnect")
	} else if c.resizeFn != nil {
		app.Window().Call("removeEventListener", "resize", c.resizeFn)
	}
	if c.resizeFn != nil {
		c.resizeFn.Release()
		c.resizeFn = nil
	}
	if c.inst != nil && c.inst.Truthy() {
		c.inst.Call("dispose")
	}
	if c.finishedFn != nil {
		c.finishedFn.Release()
		c.finishedFn = nil
	}
	c.inst, c.shown, c.shownMarks, c.observer, c.hidden = nil, nil, nil, nil, nil
}
