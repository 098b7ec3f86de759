//go:build !wasm

package server

import (
	"net/http"
	"strings"

	"github.com/inferlab/inferlab/app"
)

// A lesson page carries two large JSON texts: its default script
// (script#script-data, what the app shows at once when it starts) and every
// step's markup (script#steps-data, what web/lab.js steps before the app
// runs). Inside the page they were most of its HTML (garage: 3.5 of 3.6 MB)
// and the browser parsed them before anything else, so they are served
// apart, once per lesson, as /data/SLUG.script.txt and /data/SLUG.steps.json
// (also written by GenerateStatic), and cut out of the lesson page and the
// embed: web/lab.js fetches the steps when the reader first steps (or the
// page is idle) and the script just before it starts the app, which finds
// it in the page as before. Both are revalidated like pages and cached by
// the service worker.

// pageData are the elements cut out of a lesson page, with the suffix of
// the document each becomes.
var pageData = []struct{ open, suffix, ctype string }{
	{`<script type="application/json" id="script-data">`, ".script.txt", "text/plain; charset=utf-8"},
	{`<script type="application/json" id="steps-data">`, ".steps.json", "application/json"},
}

// dataPaths are the documents of every lesson's data.
func dataPaths() []string {
	var out []string
	for _, p := range app.Paths() {
		if slug, ok := strings.CutPrefix(p, "/lesson/"); ok {
			for _, d := range pageData {
				out = append(out, "/data/"+slug+d.suffix)
			}
		}
	}
	return out
}

// dataOf is the lesson page whose data path names, and which element.
func dataOf(path string) (page string, which int, ok bool) {
	rest, ok := strings.CutPrefix(path, "/data/")
	if !ok {
		return "", 0, false
	}
	for i, d := range pageData {
		if slug, ok := strings.CutSuffix(rest, d.suffix); ok && slug != "" && !strings.Contains(slug, "/") {
			return "/lesson/" + slug, i, true
		}
	}
	return "", 0, false
}

// cutData removes the data elements from a rendered page and returns them
// (their text, "" for one the page lacks).
func cutData(page []byte) ([]byte, []string) {
	s := string(page)
	texts := make([]string, len(pageData))
	for i, d := range pageData {
		a := strings.Index(s, d.open)
		if a < 0 {
			continue
		}
		b := strings.Index(s[a+len(d.open):], "</script>")
		if b < 0 {
			continue
		}
		texts[i] = s[a+len(d.open) : a+len(d.open)+b]
		s = s[:a] + s[a+len(d.open)+b+len("</script>"):]
	}
	return []byte(s), texts
}

// encodeData encodes the data cut out of the document at path when it is
// a lesson page, whose data the /data/ documents serve (dataOf); an embed
// page's copy of the same data is dropped. Only the encodings are kept,
// not the texts: each text held its whole page alive (a substring of it),
// 14 MB over the lessons and their embeds.
func encodeData(path string, texts []string) []variants {
	if !strings.HasPrefix(path, "/lesson/") {
		return nil
	}
	out := make([]variants, len(texts))
	for i, t := range texts {
		if t != "" {
			out[i] = encodeAll([]byte(t), true)
		}
	}
	return out
}

// dataDoc is the document of one lesson's data: cut from its page.
func (s *site) dataDoc(path string) *doc {
	page, which, ok := dataOf(path)
	if !ok {
		return &doc{status: http.StatusNotFound}
	}
	d := s.doc(nil, page)
	if d == nil || d.status != http.StatusOK || d.data == nil || d.data[which] == nil {
		return &doc{status: http.StatusNotFound}
	}
	return &doc{status: http.StatusOK, ctype: pageData[which].ctype, vars: d.data[which]}
}
