package app

import (
	"strconv"

	"github.com/inferlab/inferlab/lessons"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// searchLimit is the number of results the box lists.
const searchLimit = 8

// searchBox is the site header's search over lessons and glossary terms
// (lessons.Search, tolerant of typos). It follows the ARIA combobox pattern:
// the focus stays in input#search; ↑/↓ move the active option
// (aria-activedescendant), Enter opens it (or the first result), Escape
// closes the list (a second Escape clears the box). Each result is a link
// to /lesson/SLUG?QUERY; the player turns find= into the step it names.
type searchBox struct {
	app.Compo

	query  string
	hits   []lessons.Hit
	active int // index into hits, -1 for none
	open   bool
}

// HitHref is the in-app address of a search result.
func HitHref(h lessons.Hit) string {
	p := LessonPath(h.Lesson)
	if h.Query != "" {
		p += "?" + h.Query
	}
	return p
}

func (s *searchBox) search(q string) {
	s.query = q
	s.hits = lessons.Search(q, searchLimit)
	s.active = -1
	if len(s.hits) > 0 {
		s.active = 0
	}
	s.open = q != ""
}

func (s *searchBox) close() { s.open = false }

func (s *searchBox) go_(ctx app.Context, i int) {
	if i < 0 || i >= len(s.hits) {
		return
	}
	href := Link(HitHref(s.hits[i]))
	s.query, s.hits, s.active, s.open = "", nil, -1, false
	ctx.Navigate(href)
}

func (s *searchBox) onKey(ctx app.Context, e app.Event) {
	switch e.Get("key").String() {
	case "ArrowDown":
		e.PreventDefault()
		if !s.open && s.query != "" {
			s.open = true
			return
		}
		if n := len(s.hits); n > 0 {
			s.active = (s.active + 1) % n
		}
	case "ArrowUp":
		e.PreventDefault()
		if n := len(s.hits); n > 0 {
			s.active = (s.active - 1 + n) % n
		}
	case "Enter":
		e.PreventDefault()
		if s.open && len(s.hits) > 0 {
			i := s.active
			if i < 0 {
				i = 0
			}
			s.go_(ctx, i)
		}
	case "Escape":
		if s.open {
			e.PreventDefault()
			s.close()
		} else if s.query != "" {
			e.PreventDefault()
			s.query, s.hits, s.active = "", nil, -1
			ctx.JSSrc().Set("value", "")
		}
	}
}

func (s *searchBox) Render() app.UI {
	open := s.open && s.query != ""
	activeID := ""
	if open && s.active >= 0 && s.active < len(s.hits) {
		activeID = "search-hit-" + strconv.Itoa(s.active)
	}
	status := ""
	if open {
		switch n := len(s.hits); n {
		case 0:
			status = "No lesson or term matches."
		case 1:
			status = "1 result. Use the arrow keys and Enter."
		default:
			status = strconv.Itoa(n) + " results. Use the arrow keys and Enter."
		}
	}
	in := app.Input().ID("search").Type("search").Class("search-input").
		Placeholder("Search lessons and terms (/)").
		Role("combobox").Aria("autocomplete", "list").Aria("expanded", strconv.FormatBool(open)).
		Aria("controls", "search-results").Aria("keyshortcuts", "/").
		AutoComplete(false).Spellcheck(false).Attr("maxlength", "64").Attr("enterkeyhint", "go").
		Value(s.query).
		OnInput(func(ctx app.Context, e app.Event) { s.search(ctx.JSSrc().Get("value").String()) }).
		OnKeyDown(s.onKey).
		OnFocus(func(ctx app.Context, e app.Event) {
			if s.query != "" {
				s.open = true
			}
		}).
		OnBlur(func(ctx app.Context, e app.Event) { s.close() })
	if activeID != "" {
		in = in.Aria("activedescendant", activeID)
	}
	// data-query is the query these results answer: typing runs ahead of
	// the render, and scripts (and the e2e tests) must not read the
	// results of a prefix.
	list := app.Ul().ID("search-results").Class("search-results").Role("listbox").Aria("label", "Search results").
		DataSet("query", s.query).
		// Keep the focus in the box when a result is pressed, so blur does
		// not close the list before the click lands.
		On("mousedown", func(ctx app.Context, e app.Event) { e.PreventDefault() }).
		Body(
			app.Range(s.hits).Slice(func(i int) app.UI {
				h := s.hits[i]
				name, where := h.Title, "Lesson"
				if h.Term != "" {
					name, where = h.Term, "in "+h.Title
				}
				cls := "search-hit"
				if i == s.active {
					cls += " active"
				}
				return app.Li().ID("search-hit-"+strconv.Itoa(i)).Class(cls).Role("option").
					Aria("selected", strconv.FormatBool(i == s.active)).DataSet("lesson", h.Lesson).Body(
					app.A().Href(Link(HitHref(h))).TabIndex(-1).
						OnClick(func(ctx app.Context, e app.Event) { s.query, s.hits, s.open = "", nil, false }).Body(
						app.Span().Class("hit-name").Text(name),
						app.Span().Class("hit-where").Text(" · "+where),
						app.Span().Class("hit-snippet").Text(h.Snippet),
					),
				)
			}),
			app.If(len(s.hits) == 0, func() app.UI {
				return app.Li().Class("search-empty").Role("presentation").Text("No lesson or term matches “" + s.query + "”.")
			}),
		)
	if !open {
		list = list.Hidden(true)
	}
	return app.Div().ID("search-box").Class("search").Role("search").Body(
		app.Label().For("search").Class("sr-only").Text("Search lessons and terms"),
		in,
		list,
		app.Div().ID("search-status").Class("sr-only").Role("status").Aria("live", "polite").Text(status),
	)
}
