//go:build !wasm

package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/inferlab/inferlab/app"
)

// GenerateStatic writes the whole site into outDir for a static host:
// index.html, one prerendered page per route (lesson/SLUG.html and also
// lesson/SLUG/index.html), go-app's app.js, app-worker.js, wasm_exec.js,
// app.css and manifest, a copy of webDir under web/, and 404.html (a copy of
// the index, so a host that serves it for unknown paths still boots the app).
// It is WriteStatic with the default options but the prefix.
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
// On a static host the prerendered page is the query-less state, as on the
// live server: a link with ?step=3 shows step 1 until the wasm takes over.
func GenerateStatic(outDir, webDir, prefix string) error {
	return WriteStatic(outDir, webDir, StaticOptions{Prefix: prefix})
}

// StaticOptions tunes WriteStatic.
type StaticOptions struct {
	// Prefix is the sub-path the site lives under ("" or "/" for the root);
	// see CleanPrefix.
	Prefix string
	// BaseURL is the site's public address, its sub-path included, for
	// link previews (Options.BaseURL).
	BaseURL string
	// Log receives one line for each directory an earlier run left beside
	// outDir that this run could not remove either, saying where it is;
	// nil discards.
	Log io.Writer
}

// staticMarker is the file WriteStatic leaves in its output, so that a later
// run knows the directory is its own and may replace it.
const staticMarker = ".inferlab-static"

// workMarker is the file WriteStatic writes first into each directory it
// makes beside outDir (the output being written, the previous output moved
// aside), holding its process id: a later run removes such a directory
// left by a run that was killed (SIGKILL cannot be caught), and only such
// a directory.
const workMarker = ".inferlab-static-work"

// StaticRefusal is WriteStatic's error for an outDir it will not write
// (the refusals listed at WriteStatic), as opposed to a failure to write:
// a refusal of the caller's input (`inferlab static` exits 2).
type StaticRefusal struct{ Msg string }

func (e *StaticRefusal) Error() string { return e.Msg }

// WriteStatic writes the site (see GenerateStatic) without ever touching a
// file outside outDir, and all or nothing:
//
//   - it refuses (a *StaticRefusal) an outDir that is, contains or lies
//     inside webDir (the files it reads), that contains the working
//     directory, that is a file or a symbolic link, or whose parent
//     directory does not exist;
//   - it refuses a non-empty outDir that it did not write (no marker file),
//     whatever the caller wants: it never deletes someone else's files;
//   - it writes into a fresh directory beside outDir, .NAME.tmp-…, and
//     renames that into place only when every file is written; a failure,
//     or ctx's end (an interrupt), removes it and leaves the previous outDir
//     as it was;
//   - it first removes the directories beside outDir that an earlier run
//     killed before it could clean up left behind (their workMarker names
//     a process that is gone), or that it could not remove (o.Log names
//     those it cannot remove either);
//   - it removes the previous output once the new one is in place, making
//     the directories it owns writable first (a read-only lesson/ in it
//     once left a 32 MB .NAME.old-… behind, named only by a permission
//     error); if it still cannot, its error says the new site is in place
//     and where the previous one is, and the next run tries again.
func WriteStatic(outDir, webDir string, o StaticOptions) error {
	return WriteStaticContext(context.Background(), outDir, webDir, o)
}

// WriteStaticContext is WriteStatic, stopped when ctx ends: `inferlab
// static` ends it on SIGINT and SIGTERM, so that an interrupted run leaves
// nothing beside --out.
func WriteStaticContext(ctx context.Context, outDir, webDir string, o StaticOptions) error {
	prefix, err := CleanPrefix(o.Prefix)
	if err != nil {
		return &StaticRefusal{Msg: err.Error()}
	}
	base, err := CleanBaseURL(o.BaseURL)
	if err != nil {
		return &StaticRefusal{Msg: "static: " + err.Error()}
	}
	dir, err := FindWebDir(webDir)
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, "app.wasm")); err != nil {
		return fmt.Errorf("static: %s: build it first (make build, or GOOS=js GOARCH=wasm go build -o web/app.wasm ./wasm)", filepath.Join(dir, "app.wasm"))
	}
	out, err := checkOut(outDir, dir)
	if err != nil {
		return err
	}
	for _, err := range removeLeftovers(out) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, "static: %v\n", err)
		}
	}
	tmp, err := workDir(out, ".tmp-")
	if err != nil {
		return fmt.Errorf("static: --out %s: cannot write beside it: %w", outDir, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil { // MkdirTemp makes it 0700: hosts must read it
		os.RemoveAll(tmp)
		return err
	}
	if err := writeSite(ctx, tmp, dir, prefix, base); err != nil {
		os.RemoveAll(tmp)
		if ctx.Err() != nil {
			return fmt.Errorf("static: interrupted: removed the partial output; --out %s is as it was", outDir)
		}
		return err
	}
	if err := os.Remove(filepath.Join(tmp, workMarker)); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	if err := replaceDir(out, tmp); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("static: --out %s: %w", outDir, err)
	}
	return nil
}

// workDir makes a directory beside out named .NAME<kind>… holding a
// workMarker with this process's id.
func workDir(out, kind string) (string, error) {
	d, err := os.MkdirTemp(filepath.Dir(out), "."+filepath.Base(out)+kind)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(d, workMarker), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		os.RemoveAll(d)
		return "", err
	}
	return d, nil
}

// removeLeftovers removes the directories beside out that a killed run of
// WriteStatic left: named .NAME.tmp-… or .NAME.old-…, holding a workMarker
// whose process is gone. A directory moved aside (.old-) holds the
// previous output; it is kept while out is missing (a run was killed
// between its two renames), so that output can still be found. It
// returns an error for each it could not remove.
func removeLeftovers(out string) []error {
	parent, base := filepath.Dir(out), filepath.Base(out)
	entries, err := os.ReadDir(parent)
	if err != nil {
		return nil
	}
	var errs []error
	_, outErr := os.Lstat(out)
	for _, e := range entries {
		name := e.Name()
		old := strings.HasPrefix(name, "."+base+".old-")
		if !e.IsDir() || (!old && !strings.HasPrefix(name, "."+base+".tmp-")) || (old && outErr != nil) {
			continue
		}
		d := filepath.Join(parent, name)
		b, err := os.ReadFile(filepath.Join(d, workMarker))
		if err != nil {
			continue // not ours
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		if err := removeWork(d); err != nil {
			errs = append(errs, fmt.Errorf("%s, left by an earlier run, cannot be removed: %w; remove it yourself", d, err))
		}
	}
	return errs
}

// removeWork removes a directory WriteStatic made beside out (workDir):
// its contents first (removeTree), its workMarker last, so that a
// directory it cannot empty stays marked as a leftover for the next run.
func removeWork(d string) error {
	entries, err := os.ReadDir(d)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() != workMarker {
			if err := removeTree(filepath.Join(d, e.Name())); err != nil {
				return err
			}
		}
	}
	return os.RemoveAll(d)
}

// removeTree is os.RemoveAll, which, refused because a directory in the
// tree is not writable (a previous output with a read-only lesson/), makes
// every directory of the tree that this user owns writable by them and
// tries again; what it still cannot remove is its error.
func removeTree(p string) error {
	err := os.RemoveAll(p)
	if err == nil || !errors.Is(err, fs.ErrPermission) {
		return err
	}
	filepath.WalkDir(p, func(q string, d fs.DirEntry, werr error) error {
		if werr == nil && d.IsDir() {
			if info, err := d.Info(); err == nil && info.Mode().Perm()&0o700 != 0o700 {
				os.Chmod(q, info.Mode().Perm()|0o700) // fails, harmlessly, on a directory of another user
			}
		}
		return nil
	})
	return os.RemoveAll(p)
}

// testFailWrite, when set by a test, fails writeSite after the pages are
// written: the failure path must leave the previous output intact.
var testFailWrite func() error

// writeSite writes the site into dir, an empty directory: every document
// (rendered once per process, as the live server does) and a copy of web.
func writeSite(ctx context.Context, dir, web, prefix, base string) error {
	registerRoutes()
	s, err := newSite(web, "", prefix, base)
	if err != nil {
		return err
	}
	files := []string{"/index.html", "/404.html"}
	for p := range goappFiles {
		if goappFiles[p] == p {
			files = append(files, p)
		}
	}
	for _, p := range app.Paths() {
		if p != "/" {
			files = append(files, p+".html", p+"/index.html")
		}
	}
	files = append(files, dataPaths()...)
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		name, ok := s.docs[f]
		if f == "/404.html" {
			name, ok = app.NotFoundPath, true // hosts serve it for unknown paths; the app boots from it too
		}
		d := s.doc(nil, name)
		if !ok || d.status != http.StatusOK {
			return fmt.Errorf("static: rendering %s: status %d", name, d.status)
		}
		target := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(target, d.vars["identity"].body, 0o644); err != nil {
			return err
		}
	}
	if testFailWrite != nil {
		if err := testFailWrite(); err != nil {
			return err
		}
	}
	if err := copyDir(ctx, web, filepath.Join(dir, "web")); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("static: copying %s: %w", web, err)
	}
	return os.WriteFile(filepath.Join(dir, staticMarker), []byte("Written by `inferlab static`; the next run replaces this directory.\n"), 0o644)
}

// checkOut returns outDir as an absolute path after the refusals listed
// at WriteStatic.
func checkOut(outDir, web string) (string, error) {
	out, err := filepath.Abs(outDir)
	if err != nil {
		return "", err
	}
	bad := func(format string, args ...any) error {
		return &StaticRefusal{Msg: fmt.Errorf("static: --out %s "+format, append([]any{outDir}, args...)...).Error()}
	}
	parent, err := filepath.EvalSymlinks(filepath.Dir(out))
	if err != nil {
		return "", bad("cannot be written: its parent directory: %w", err)
	}
	real := filepath.Join(parent, filepath.Base(out))
	if filepath.Base(out) == string(filepath.Separator) || filepath.Dir(out) == out {
		return "", bad("is the root directory: want a directory of its own, e.g. dist")
	}
	webReal, err := filepath.EvalSymlinks(web)
	if err != nil {
		return "", err
	}
	resolved := real // where a symbolic link at --out leads
	if r, err := filepath.EvalSymlinks(real); err == nil {
		resolved = r
	}
	for _, p := range []string{real, resolved} {
		switch {
		case p == webReal:
			return "", bad("is the web directory %s, which it reads: want a directory of its own, e.g. dist", web)
		case within(p, webReal):
			return "", bad("lies inside the web directory %s, which it reads: want a directory outside it, e.g. dist", web)
		case within(webReal, p):
			return "", bad("contains the web directory %s, which it reads: want a directory of its own, e.g. dist", web)
		}
	}
	if wd, err := os.Getwd(); err == nil {
		if wdReal, err := filepath.EvalSymlinks(wd); err == nil && (wdReal == real || within(wdReal, real)) {
			return "", bad("is or contains the working directory: want a directory of its own, e.g. dist")
		}
	}
	st, err := os.Lstat(real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return real, nil
	case err != nil:
		return "", bad("cannot be read: %w", err)
	case st.Mode()&fs.ModeSymlink != 0:
		return "", bad("is a symbolic link: name the directory itself")
	case !st.IsDir():
		return "", bad("is a file, not a directory: want a directory of its own, e.g. dist")
	}
	entries, err := os.ReadDir(real)
	if err != nil {
		return "", bad("cannot be read: %w", err)
	}
	if len(entries) == 0 {
		return real, nil
	}
	if m, err := os.Lstat(filepath.Join(real, staticMarker)); err == nil && m.Mode().IsRegular() {
		return real, nil
	}
	return "", bad("holds %d entries that inferlab static did not write (no %s file): it replaces only its own output or an empty directory; pick a new directory, or empty this one yourself", len(entries), staticMarker)
}

// within reports whether path lies strictly inside dir (both clean and
// absolute).
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// replaceDir renames the finished tmp to out; an existing out is moved
// aside first, put back if the rename fails, and removed after (removeWork:
// what it cannot remove is named in its error, and marked for the next
// run).
func replaceDir(out, tmp string) error {
	if _, err := os.Lstat(out); errors.Is(err, fs.ErrNotExist) {
		return os.Rename(tmp, out)
	}
	aside, err := workDir(out, ".old-")
	if err != nil {
		return err
	}
	old := filepath.Join(aside, "old")
	if err := os.Rename(out, old); err != nil {
		os.RemoveAll(aside)
		return err
	}
	if err := os.Rename(tmp, out); err != nil {
		if back := os.Rename(old, out); back != nil {
			return fmt.Errorf("%w (and putting the previous output back failed: %v; it is in %s)", err, back, old)
		}
		os.RemoveAll(aside)
		return err
	}
	if err := removeWork(aside); err != nil {
		return fmt.Errorf("wrote the new site, but the previous output, moved aside to %s, cannot be removed: %w; remove %s yourself (the next run tries again)", old, err, aside)
	}
	return nil
}

// prefixSegment is one segment of a site prefix: the characters a URL path
// carries unescaped that cannot end an HTML attribute or start a host.
var prefixSegment = regexp.MustCompile(`^[A-Za-z0-9._~-]+$`)

// CleanPrefix checks a site prefix and returns it without a trailing slash
// ("" for the host's root, given as "" or "/"). A prefix must be a clean
// absolute path, /name or /name/name…, of letters, digits and . _ ~ -:
// anything else could leave an HTML attribute (a quote), point at another
// host (//evil.example) or climb out of the site (..).
func CleanPrefix(prefix string) (string, error) {
	if prefix == "" || prefix == "/" {
		return "", nil
	}
	p := strings.TrimSuffix(prefix, "/")
	ok := strings.HasPrefix(p, "/")
	for _, seg := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		if !ok || seg == "." || seg == ".." || !prefixSegment.MatchString(seg) {
			ok = false
			break
		}
	}
	if !ok {
		return "", fmt.Errorf("static: --prefix = %q is not allowed: want a clean absolute path like /repo or /docs/lab "+
			"(segments of letters, digits, '.', '_', '~' and '-'; no empty, '.' or '..' segment)", prefix)
	}
	return p, nil
}

// copyDir copies the files of the web directory that the server serves
// (webFile): it leaves out precompressed siblings (static hosts cannot
// negotiate Content-Encoding for them), symbolic links (filepath.WalkDir
// does not follow them) and anything but a regular file.
func copyDir(ctx context.Context, src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
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
		if _, ok := webFile(src, "/"+filepath.ToSlash(rel)); !ok {
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
