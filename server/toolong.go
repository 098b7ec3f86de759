//go:build !wasm

package server

import (
	"fmt"
	"html"
	"net/http"
	"strconv"

	"github.com/inferlab/inferlab/app/urlstate"
	"github.com/inferlab/inferlab/lessons"
)

// MaxRequestHeaderBytes bounds a request's line and headers, the address
// included: a lesson address with every knob is about 300 bytes. A longer
// request gets the lab's own 431 page (tooLong), not Go's bare 35 bytes;
// the http.Server in front must read up to HTTPMaxHeaderBytes for that.
const MaxRequestHeaderBytes = urlstate.MaxQueryBytes

// HTTPMaxHeaderBytes is the http.Server.MaxHeaderBytes to serve New's
// handler with: Go's default (1 MiB), so that a request between
// MaxRequestHeaderBytes and it reaches the handler, which answers it with
// the lab's 431 page. Past it Go answers on its own.
const HTTPMaxHeaderBytes = http.DefaultMaxHeaderBytes

// headerBytes is about what a request's line and headers took on the wire.
func headerBytes(r *http.Request) int {
	n := len(r.Method) + len(r.RequestURI) + len(r.Proto) + 4 + len("Host: \r\n") + len(r.Host)
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	return n
}

// limitHeaders answers a request whose line and headers pass
// MaxRequestHeaderBytes with tooLong, before anything else reads it.
func limitHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n := headerBytes(r); n > MaxRequestHeaderBytes {
			tooLong(w, r, n)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// tooLong is the 431 answer: a page in the lab's look (its stylesheet and
// header, no script) that says how long the request was and what the lab
// reads, and links the page asked for at its defaults and the index.
func tooLong(w http.ResponseWriter, r *http.Request, n int) {
	link := ""
	if slug, embed := urlstate.SlugFromPath(r.URL.Path); lessons.Get(slug) != nil {
		path := "/lesson/" + slug
		if embed {
			path = "/embed/" + slug
		}
		link = fmt.Sprintf(`<a class="primary-link" id="too-long-lesson" href="%s">Open “%s” at its defaults</a> · `, path, html.EscapeString(lessons.Get(slug).Title))
	}
	body := fmt.Sprintf(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Address too long · Inference Lab</title>
<link rel="icon" href="/web/icon.svg"><link rel="stylesheet" href="/web/lab.css">
</head><body>
<div class="page" id="too-long">
<header class="site-header"><a class="brand" href="/"><span class="brand-mark" aria-hidden="true">◧</span> Inference Lab</a>
<nav class="site-nav" aria-label="Site"><a href="/">All lessons</a></nav></header>
<main id="main" class="index-main not-found">
<h1>This address is too long</h1>
<div id="notice" class="notice"><p class="notice-msg" role="alert">The request's address and headers are %s bytes: the lab reads at most %s. Nothing of it was read; the lesson's knobs and step live in a short address, about 300 bytes with every knob.</p></div>
<p>%s<a id="too-long-home" href="/">All lessons</a></p>
</main></div>
</body></html>
`, comma(n), comma(MaxRequestHeaderBytes), link)
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Cache-Control", "no-store")
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	hd.Set("Connection", "close")
	w.WriteHeader(http.StatusRequestHeaderFieldsTooLarge)
	if r.Method != http.MethodHead {
		_, _ = w.Write([]byte(body))
	}
}

func comma(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
