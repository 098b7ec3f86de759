//go:build !wasm

package server

import (
	"regexp"
	"strings"
	"testing"
)

// TestLinkPreview: with a public address, a lesson page's og:url is that
// address and the page's path, and its og:image an absolute address under
// it; without one, neither tag is written (go-app alone wrote
// "https:///lesson/garage" and "https://"). A bad address is refused.
func TestLinkPreview(t *testing.T) {
	web := fakeWeb(t)
	meta := regexp.MustCompile(`<meta (?:property|name)="(og:url|og:image|twitter:image)" content="([^"]*)">|<meta content="([^"]*)" (?:property|name)="(og:url|og:image|twitter:image)">`)
	for _, c := range []struct {
		base      string
		url, img  string
		wantNoTag bool
	}{
		{base: "https://lab.example.org", url: "https://lab.example.org/lesson/garage", img: "https://lab.example.org/web/icon-512.png"},
		{base: "http://127.0.0.1:8080/sub/", url: "http://127.0.0.1:8080/sub/lesson/garage", img: "http://127.0.0.1:8080/sub/web/icon-512.png"},
		{base: "", wantNoTag: true},
	} {
		h, err := New(web, Options{BaseURL: c.base})
		if err != nil {
			t.Fatalf("New(BaseURL %q): %v", c.base, err)
		}
		page := body(t, get(t, h, "/lesson/garage"))
		got := map[string][]string{}
		for _, m := range meta.FindAllStringSubmatch(page, -1) {
			if m[1] != "" {
				got[m[1]] = append(got[m[1]], m[2])
			} else {
				got[m[4]] = append(got[m[4]], m[3])
			}
		}
		if i := strings.Index(page, `"https:///`); i >= 0 {
			t.Errorf("base %q: the page names an address without a host: …%s…", c.base, page[max(0, i-80):min(len(page), i+60)])
		} else if i := strings.Index(page, `content="https://"`); i >= 0 {
			t.Errorf("base %q: the page names an address without a host: …%s…", c.base, page[max(0, i-80):min(len(page), i+60)])
		}
		if c.wantNoTag {
			if len(got) > 0 {
				t.Errorf("no base: the page has preview tags %v, want none", got)
			}
			continue
		}
		if u := got["og:url"]; len(u) != 1 || u[0] != c.url {
			t.Errorf("base %q: og:url %v, want [%s]", c.base, u, c.url)
		}
		if u := got["og:image"]; len(u) != 1 || u[0] != c.img {
			t.Errorf("base %q: og:image %v, want [%s]", c.base, u, c.img)
		}
	}
	for _, bad := range []string{"lab.example.org", "ftp://x/", "https://x/?a=1", "https:///lesson"} {
		if _, err := New(web, Options{BaseURL: bad}); err == nil || !strings.Contains(err.Error(), "--base-url") {
			t.Errorf("BaseURL %q: err %v, want a refusal naming --base-url", bad, err)
		}
	}
}
