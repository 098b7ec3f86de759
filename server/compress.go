//go:build !wasm

package server

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// MaxCompressBytes bounds the file Compress reads, whole, into memory: the
// lab's wasm files are about 12 and 9 MB. A larger file, or anything but a
// regular file (/dev/zero, a named pipe), is refused before it is read.
const MaxCompressBytes = 64 << 20

// Compress writes FILE.br (brotli at quality, 0 to 11) and FILE.gz (gzip at
// its best level) beside a file, for the server to send as they are: the
// build does it once for app.wasm (`inferlab compress`), since brotli's
// best quality takes minutes on it. Each sibling is written to a temporary
// file and renamed into place, so a server never reads half of one; the
// server checks that a sibling decodes to the file before using it.
func Compress(path string, quality int) error {
	if quality < 0 || quality > 11 {
		return fmt.Errorf("compress: quality = %d is not allowed: want 0 to 11", quality)
	}
	raw, err := readCompressible(path)
	if err != nil {
		return err
	}
	br, err := brotliBytes(raw, quality)
	if err != nil {
		return err
	}
	gz, err := gzipBytes(raw)
	if err != nil {
		return err
	}
	for ext, body := range map[string][]byte{".br": br, ".gz": gz} {
		if err := writeAtomic(path+ext, body); err != nil {
			return err
		}
	}
	return nil
}

// UpToDate reports whether FILE.br and FILE.gz both decode to the file.
func UpToDate(path string) bool {
	raw, err := readCompressible(path)
	if err != nil {
		return false
	}
	for enc, ext := range siblingExt {
		body, err := os.ReadFile(path + ext)
		if err != nil || !decodes(body, enc, raw) {
			return false
		}
	}
	return true
}

// readCompressible reads a regular file of at most MaxCompressBytes. It
// opens without blocking, so a named pipe with no writer cannot hang it,
// and checks the opened file, so one swapped in after a check cannot
// either.
func readCompressible(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("compress: %s is not a regular file (%s)", path, st.Mode().Type())
	}
	raw, err := io.ReadAll(io.LimitReader(f, MaxCompressBytes+1))
	if err == nil && len(raw) > MaxCompressBytes {
		err = fmt.Errorf("compress: %s is over %d bytes: want at most %d", path, MaxCompressBytes, MaxCompressBytes)
	}
	return raw, err
}

func writeAtomic(path string, body []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	_, werr := f.Write(body)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(f.Name(), 0o644)
	}
	if werr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil {
		os.Remove(f.Name())
	}
	return werr
}
