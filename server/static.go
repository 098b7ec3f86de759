//go:build !wasm

package server

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/inferlab/inferlab/app"
	goapp "github.com/maxence-charriere/go-app/v10/pkg/app"
)

// GenerateStatic writes the whole site into outDir for a static host:
// index.html, one prerendered page per route (lesson/SLUG.html and also
// lesson/SLUG/index.html), go-app's app.js, app-worker.js, wasm_exec.js,
// app.css and manifest, a copy of webDir under web/, and 404.html (a copy of
// the index, so a host that serves it for unknown paths still boots the app).
//
// prefix is the sub-path the site will live under ("/repo" for
// https://user.github.io/repo/), or "" for the host's root.
//
// What a host must do:
//   - serve outDir as is. Pages are reachable as /lesson/SLUG (hosts that map
//     a path to PATH.html, like GitHub Pages), /lesson/SLUG/ (any plain file
//     server: the directory's index.html) and /lesson/SLUG.html;
//   - serve app.wasm as application/wasm (needed for streaming compilation),
//     ideally compressed;
//   - not set a Content-Security-Policy stricter than package server's CSP
//     (scripts need 'wasm-unsafe-eval'), and allow framing for /embed/ pages.
//
// On a static host the prerendered page is the query-less state: a link with
// ?step=3 shows step 1 until the wasm takes over (under a second).
func GenerateStatic(outDir, webDir, prefix string) error {
	dir, err := FindWebDir(webDir)
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, "app.wasm")); err != nil {
		return fmt.Errorf("static: %s: build it first (GOOS=js GOARCH=wasm go build -o web/app.wasm ./wasm)", filepath.Join(dir, "app.wasm"))
	}
	prefix = strings.TrimRight(prefix, "/")
	if prefix != "" && !strings.HasPrefix(prefix, "/") {
		prefix = "/" + prefix
	}
	registerRoutes()
	var res goapp.ResourceResolver
	if prefix != "" {
		res = goapp.PrefixedLocation(prefix)
	}
	h, err := newAppHandler(dir, "", res)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	if err := goapp.GenerateStaticWebsite(outDir, h, app.Paths()...); err != nil {
		return fmt.Errorf("static: generating pages: %w", err)
	}
	for _, p := range app.Paths() {
		if p == "/" {
			continue
		}
		src := filepath.Join(outDir, filepath.FromSlash(p)+".html")
		dst := filepath.Join(outDir, filepath.FromSlash(p), "index.html")
		if err := copyFile(src, dst); err != nil {
			return fmt.Errorf("static: %s: %w", p, err)
		}
	}
	if err := copyFile(filepath.Join(outDir, "index.html"), filepath.Join(outDir, "404.html")); err != nil {
		return err
	}
	return copyDir(dir, filepath.Join(outDir, "web"))
}

// copyDir copies the web directory, leaving out precompressed siblings
// (static hosts cannot negotiate Content-Encoding for them).
func copyDir(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if strings.HasSuffix(p, ".gz") || strings.HasSuffix(p, ".br") || !d.Type().IsRegular() {
			return nil
		}
		return copyFile(p, target)
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return errors.Join(out.Close())
}
