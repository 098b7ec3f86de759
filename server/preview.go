//go:build !wasm

package server

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// Link previews. go-app writes a page's og:url and og:image as
// "https://" + Handler.Domain + path, so with no domain a shared lesson
// showed "https:///lesson/garage" and an image of "https://", and a
// sub-path or plain http could not be said at all. Every page's preview
// tags are written here instead, from the site's public address (the
// Options.BaseURL or StaticOptions.BaseURL it is served at, its sub-path
// included): og:url is that address and the page's path, og:image the
// lab's 512 px icon under it. Without a base they are left out (a preview
// then takes the address the link was shared with, and no picture), never
// written as an address that names no host.

// previewImage is the picture of every page's preview, under the base.
const previewImage = "/web/icon-512.png"

// CleanBaseURL checks the site's public address: an absolute http or https
// URL with a host, no query and no fragment. It returns it without a
// trailing slash ("" stays "": no base).
func CleanBaseURL(base string) (string, error) {
	if base == "" {
		return "", nil
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("--base-url = %q is not allowed: want the site's public address, http(s)://host[/sub-path], e.g. https://lab.example.org or https://user.github.io/repo", base)
	}
	return strings.TrimRight(u.Scheme+"://"+u.Host+u.EscapedPath(), "/"), nil
}

// previewTag matches a meta tag of go-app's head whose value must be an
// absolute address (go-app writes a tag's attributes in either order).
var previewTag = regexp.MustCompile(`<meta (?:property="og:(?:url|image)"|name="twitter:image") content="[^"]*">|<meta content="[^"]*" (?:property="og:(?:url|image)"|name="twitter:image")>`)

// withPreview writes page's link-preview tags for path under base (see
// above): each absolute, or none without a base.
func withPreview(page []byte, base, path string) []byte {
	first := true
	esc := strings.NewReplacer(`&`, "&amp;", `"`, "&quot;", "<", "&lt;").Replace
	return previewTag.ReplaceAllFunc(page, func([]byte) []byte {
		if base == "" || !first {
			return nil
		}
		first = false
		return []byte(`<meta property="og:url" content="` + esc(base+path) + `"><meta property="og:image" content="` + esc(base+previewImage) + `">`)
	})
}
