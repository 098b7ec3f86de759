package lessons

import (
	"net/url"
	"sort"
	"strings"

	"github.com/agnivade/levenshtein"
)

// Term is a glossary entry of the series' vocabulary, declared in the Terms
// of the lesson that explains it. Lesson is that lesson's slug (register
// sets it); the step is found by searching that lesson's default run for
// Find (so links follow the lesson when its steps change).
type Term struct {
	Term       string
	Aliases    []string
	Definition string
	Lesson     string
	Find       string // text to look for in step titles and narrations; Term when empty
	Set        string // URL query of knobs the explaining run needs, e.g. "mode=prefix"
}

// find is the text that locates the term's step.
func (t Term) find() string {
	if t.Find != "" {
		return t.Find
	}
	return t.Term
}

// Link is the term's URL query on its lesson page: its knobs and a find=
// the player resolves to the first step mentioning the term.
func (t Term) Link() string {
	q := url.Values{}
	if t.Set != "" {
		if v, err := url.ParseQuery(t.Set); err == nil {
			q = v
		}
	}
	q.Set("find", t.find())
	return q.Encode()
}

// StepFor returns the 1-based step of s whose title or narration first
// mentions text (case-insensitive), or 0.
func StepFor(s *Script, text string) int {
	f := strings.ToLower(text)
	for i, st := range s.Steps {
		if strings.Contains(strings.ToLower(st.Title+" "+st.Narration), f) {
			return i + 1
		}
	}
	return 0
}

// Glossary lists the terms the search box knows: each lesson's Terms, in
// index order (All), so that terms the search ranks equally come in the
// order of the lessons explaining them.
func Glossary() []Term {
	var out []Term
	for _, l := range All() {
		out = append(out, l.Terms...)
	}
	return out
}

// Hit is one search result: a lesson (Term empty) or a glossary term, with
// the URL query that opens the lesson at the step explaining it.
type Hit struct {
	Lesson  string
	Title   string
	Term    string
	Snippet string
	Query   string
	score   int // lower is better
}

// maxQueryLen bounds what the search reads from the box.
const maxQueryLen = 64

// Search finds lessons and glossary terms matching query, tolerant of
// small typos (Levenshtein distance on words and phrases). It returns at
// most limit hits, best first.
func Search(query string, limit int) []Hit {
	q := normalizeTerm(query)
	if len(q) > maxQueryLen {
		q = q[:maxQueryLen]
	}
	if q == "" {
		return nil
	}
	var hits []Hit
	for _, t := range Glossary() {
		best := -1
		for _, name := range append([]string{t.Term}, t.Aliases...) {
			if d, ok := phraseDistance(q, normalizeTerm(name)); ok && (best < 0 || d < best) {
				best = d
			}
		}
		if best < 0 {
			if strings.Contains(normalizeTerm(t.Definition), q) && len(q) >= 4 {
				best = 10
			} else {
				continue
			}
		}
		hits = append(hits, Hit{Lesson: t.Lesson, Title: Get(t.Lesson).Title, Term: t.Term, Snippet: t.Definition, Query: t.Link(), score: best})
	}
	for _, l := range All() {
		text := normalizeTerm(l.Title + " " + l.Summary + " " + l.Slug)
		d, ok := phraseDistance(q, normalizeTerm(l.Title))
		switch {
		case ok:
			d += 1 // a term hit ranks above its lesson
		case strings.Contains(text, q):
			d = 5
		case wordsMatch(q, text):
			d = 8
		default:
			continue
		}
		hits = append(hits, Hit{Lesson: l.Slug, Title: l.Title, Snippet: l.Summary, score: d})
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].score < hits[j].score })
	if limit > 0 && len(hits) > limit {
		hits = hits[:limit]
	}
	return hits
}

// phraseDistance compares a query with a name: exact, prefix (the user is
// still typing), or within the typo budget of the whole name.
func phraseDistance(q, name string) (int, bool) {
	switch {
	case q == name:
		return 0, true
	case len(q) >= 3 && strings.HasPrefix(name, q):
		return 2, true
	}
	d := levenshtein.ComputeDistance(q, name)
	if d <= typoBudget(len([]rune(name))) {
		return 1 + d, true
	}
	return 0, false
}

// wordsMatch reports whether every word of q is within its typo budget of
// some word of text.
func wordsMatch(q, text string) bool {
	words := strings.Fields(text)
	for _, w := range strings.Fields(q) {
		found := false
		for _, t := range words {
			if levenshtein.ComputeDistance(w, t) <= typoBudget(len([]rune(t))) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
