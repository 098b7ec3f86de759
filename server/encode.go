//go:build !wasm

package server

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/andybalholm/brotli"
)

// variant is a response body in one Content-Encoding, with an ETag that
// names both the bytes and the encoding.
type variant struct {
	body []byte
	etag string
	hash string // hex SHA-256 of body
}

func newVariant(body []byte, enc string) *variant {
	sum := sha256.Sum256(body)
	h := hex.EncodeToString(sum[:])
	etag := `"` + h[:16] + `"`
	if enc != "identity" {
		etag = `"` + h[:16] + "-" + enc + `"`
	}
	return &variant{body: body, etag: etag, hash: h}
}

// variants holds a body's encodings: "identity" always, "gzip" and "br"
// when worth having.
type variants map[string]*variant

// encodings in order of preference at equal q: brotli is about 15-25%
// smaller than gzip on the wasm and the pages.
var encodings = []string{"br", "gzip"}

// minCompress is the smallest body worth compressing.
const minCompress = 512

// encodeAll compresses a small in-memory body once (pages, app.js): gzip
// at its best level and brotli at quality 6, a few milliseconds each.
func encodeAll(raw []byte, text bool) variants {
	vs := variants{"identity": newVariant(raw, "identity")}
	if !text || len(raw) < minCompress {
		return vs
	}
	if gz, err := gzipBytes(raw); err == nil && len(gz) < len(raw) {
		vs["gzip"] = newVariant(gz, "gzip")
	}
	if br, err := brotliBytes(raw, 6); err == nil && len(br) < len(raw) {
		vs["br"] = newVariant(br, "br")
	}
	return vs
}

// serveVariants answers with the best encoding the client accepts, with
// conditional requests, HEAD and ranges handled by http.ServeContent, and
// these rules of the lab's own:
//
//   - a range is served only from the uncompressed body, and only one: a
//     request for several ranges gets the whole body (RFC 9110 §14.2 lets a
//     server ignore Range; 3,000 one-byte ranges made a 424 KB multipart
//     answer), and a compressed answer is always whole;
//   - a suffix range of zero bytes (bytes=-0) selects nothing: 416, where
//     http.ServeContent answered 206 with "bytes 10806853-10806852/…";
//   - a Range of a unit other than bytes (items=0-5), or of no unit, is
//     ignored, as RFC 9110 §14.2 requires of an origin server (a whole 200
//     answer, where http.ServeContent answered 416), and the unit is read
//     without regard to case (§14.1: Bytes=0-5 is bytes=0-5);
//   - every whole answer carries Content-Length, the compressed ones and
//     HEAD included (http.ServeContent leaves it out once Content-Encoding
//     is set).
func serveVariants(w http.ResponseWriter, r *http.Request, ctype, cacheControl string, vs variants) {
	hd := w.Header()
	hd.Set("Content-Type", ctype)
	hd.Set("Cache-Control", cacheControl)
	if len(vs) > 1 {
		hd.Add("Vary", "Accept-Encoding")
	}
	enc := negotiate(strings.Join(r.Header.Values("Accept-Encoding"), ","), vs)
	v := vs[enc]
	if enc != "identity" {
		hd.Set("Content-Encoding", enc)
	}
	hd.Set("ETag", v.etag)
	if rg := r.Header.Get("Range"); rg != "" {
		unit, spec, ok := strings.Cut(strings.TrimSpace(rg), "=")
		switch {
		case !ok || !strings.EqualFold(strings.TrimSpace(unit), "bytes"):
			r = withoutRange(r)
		case enc != "identity" || len(r.Header.Values("Range")) > 1 || strings.Contains(rg, ","):
			r = withoutRange(r)
		case emptySuffixRange(rg):
			hd.Set("Content-Range", "bytes */"+strconv.Itoa(len(v.body)))
			http.Error(w, "416 range not satisfiable: a suffix of 0 bytes selects nothing", http.StatusRequestedRangeNotSatisfiable)
			return
		case unit != "bytes":
			r = r.Clone(r.Context())
			r.Header.Set("Range", "bytes="+spec) // the case http.ServeContent reads
		}
	}
	http.ServeContent(wholeLength{w, len(v.body)}, r, "", time.Time{}, bytes.NewReader(v.body))
}

// withoutRange is r without its Range and If-Range headers.
func withoutRange(r *http.Request) *http.Request {
	r2 := r.Clone(r.Context())
	r2.Header.Del("Range")
	r2.Header.Del("If-Range")
	return r2
}

// emptySuffixRange reports a Range header asking for the last 0 bytes
// ("bytes=-0", "bytes= -000").
func emptySuffixRange(h string) bool {
	_, spec, ok := strings.Cut(h, "=")
	if !ok {
		return false
	}
	n, ok := strings.CutPrefix(strings.TrimSpace(spec), "-")
	n = strings.TrimSpace(n)
	return ok && n != "" && strings.Trim(n, "0") == ""
}

// wholeLength sets Content-Length to the whole body's length on a 200
// answer that has none: http.ServeContent sets none on a compressed body.
// (ServeContent calls WriteHeader before it writes.)
type wholeLength struct {
	http.ResponseWriter
	n int
}

func (w wholeLength) WriteHeader(code int) {
	if code == http.StatusOK && w.Header().Get("Content-Length") == "" {
		w.Header().Set("Content-Length", strconv.Itoa(w.n))
	}
	w.ResponseWriter.WriteHeader(code)
}

// negotiate picks the encoding of vs with the highest q in the
// Accept-Encoding header (brotli first at equal q), or identity.
func negotiate(header string, vs variants) string {
	best, bestQ := "identity", 0.0
	for _, enc := range encodings {
		if vs[enc] == nil {
			continue
		}
		if q := acceptQ(header, enc); q > bestQ {
			best, bestQ = enc, q
		}
	}
	return best
}

// accepts reports whether an Accept-Encoding header accepts enc (q > 0).
func accepts(header, enc string) bool { return acceptQ(header, enc) > 0 }

// acceptQ is the weight an Accept-Encoding header gives enc: its own
// element's q, else that of "*", else 0. An element whose parameters do not
// parse (gzip;q=abc, gzip;q=2, gzip;q) counts as absent, as RFC 9110
// §12.4.2 allows only q=0 to q=1 with at most three decimals.
func acceptQ(header, enc string) float64 {
	star := -1.0
	for _, part := range strings.Split(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		name = strings.TrimSpace(name)
		q, ok := parseWeight(params)
		if !ok || name == "" {
			continue
		}
		if strings.EqualFold(name, enc) {
			return q
		}
		if name == "*" {
			star = q
		}
	}
	return max(star, 0)
}

// parseWeight reads the parameters of one Accept-Encoding element: none
// (q = 1) or exactly one q=qvalue.
func parseWeight(params string) (float64, bool) {
	params = strings.TrimSpace(params)
	if params == "" {
		return 1, true
	}
	k, v, ok := strings.Cut(params, "=")
	if !ok || !strings.EqualFold(strings.TrimSpace(k), "q") {
		return 0, false
	}
	return parseQValue(strings.TrimSpace(v))
}

// parseQValue parses qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ).
func parseQValue(s string) (float64, bool) {
	if s == "" || len(s) > 5 || (s[0] != '0' && s[0] != '1') {
		return 0, false
	}
	q := float64(s[0] - '0')
	if len(s) == 1 {
		return q, true
	}
	if s[1] != '.' {
		return 0, false
	}
	scale := 0.1
	for _, c := range s[2:] {
		if c < '0' || c > '9' || (s[0] == '1' && c != '0') {
			return 0, false
		}
		q += float64(c-'0') * scale
		scale /= 10
	}
	return q, true
}

func gzipBytes(raw []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(raw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// brotliBytes compresses with brotli at quality (0-11) and a 4 MiB window,
// or the smallest that holds raw (brotliWindow).
func brotliBytes(raw []byte, quality int) ([]byte, error) {
	var buf bytes.Buffer
	bw := brotli.NewWriterOptions(&buf, brotli.WriterOptions{Quality: quality, LGWin: brotliWindow(len(raw))})
	if _, err := bw.Write(raw); err != nil {
		return nil, err
	}
	if err := bw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// brotliWindow is the base-2 logarithm of the window brotliBytes uses for
// n bytes: 22 (4 MiB), or less when a smaller window holds them all (a
// window of 2^w bytes holds 2^w - 16), as brotli's own one-shot encoder
// fits it. A larger window finds nothing more in n bytes, and the best
// quality allocates 8 bytes of hash table per window byte: three scripts
// and stylesheets compressed at once, on the first requests for them,
// held 150 MB with 4 MiB windows (echarts.min.js, 715 kB, takes 2^20).
func brotliWindow(n int) int {
	w := 22
	for w > 10 && 1<<(w-1)-16 >= n {
		w--
	}
	return w
}

// decodes reports whether body, in encoding enc, decodes to exactly want:
// how a precompressed sibling (app.wasm.br) is checked against the file.
// It compares as it decodes, holding 32 KiB of the decoded bytes at a time
// rather than all of them (12 MB for app.wasm, grown by doubling).
func decodes(body []byte, enc string, want []byte) bool {
	var rd io.Reader
	switch enc {
	case "br":
		rd = brotli.NewReader(bytes.NewReader(body))
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return false
		}
		rd = zr
	default:
		return false
	}
	buf := make([]byte, 32<<10)
	for off := 0; ; {
		n, err := rd.Read(buf)
		if n > len(want)-off || !bytes.Equal(buf[:n], want[off:off+n]) {
			return false
		}
		off += n
		if err == io.EOF {
			return off == len(want)
		}
		if err != nil {
			return false
		}
	}
}
