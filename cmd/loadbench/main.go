// Command loadbench is the lab server's load benchmark: it starts `inferlab
// serve` on a free loopback port, drives it with many connections for a
// fixed time over a mix of default pages, pages with heavy query strings,
// and assets, abandons a few heavy requests half a second in, and reports
// requests/s, errors, latency percentiles and the server's peak RSS. It only
// ever talks to the server it started (127.0.0.1), stops by itself, and
// kills the server when its memory passes a guard (so a server that
// simulates what a query asks for cannot exhaust a shared machine).
//
//	go build -o bin/inferlab ./cmd/inferlab && go run ./cmd/loadbench --bin bin/inferlab
//
// BENCHMARKS.md ("Server under load") records its figures.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/inferlab/inferlab/lessons"
	_ "github.com/inferlab/inferlab/lessons/all" // every lesson registers itself
)

type config struct {
	bin, web  string
	conns     int
	duration  time.Duration
	abandon   int
	abandonAt time.Duration // how long an abandoned request waits before leaving
	timeout   time.Duration // a request slower than this is an error
	guardMB   int64
	mix       string
	format    string
}

func main() {
	var c config
	flag.StringVar(&c.bin, "bin", "bin/inferlab", "the inferlab binary to start")
	flag.StringVar(&c.web, "web", "web", "its web directory")
	flag.IntVar(&c.conns, "conns", 200, "concurrent connections (1 to 1000)")
	flag.DurationVar(&c.duration, "duration", 30*time.Second, "how long to drive the server (at most 5m)")
	flag.IntVar(&c.abandon, "abandon", 20, "heavy requests abandoned after --abandon-after, spread over the run")
	flag.DurationVar(&c.abandonAt, "abandon-after", 500*time.Millisecond, "how long an abandoned request waits")
	flag.DurationVar(&c.timeout, "timeout", 10*time.Second, "a request that takes longer is an error")
	flag.Int64Var(&c.guardMB, "rss-guard", 2048, "stop and kill the server when its RSS passes this many MB")
	flag.StringVar(&c.mix, "mix", "full", "full: pages, heavy queries and assets; no-heavy: pages and assets")
	flag.StringVar(&c.format, "format", "text", "text or json")
	flag.Parse()
	if err := c.check(); err != nil {
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		os.Exit(2)
	}
	res, err := run(c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		os.Exit(1)
	}
	if c.format == "json" {
		b, _ := json.MarshalIndent(res, "", "  ")
		fmt.Println(string(b))
		return
	}
	res.print(os.Stdout)
}

func (c config) check() error {
	switch {
	case c.conns < 1 || c.conns > 1000:
		return fmt.Errorf("--conns = %d is not allowed: want 1 to 1000", c.conns)
	case c.duration <= 0 || c.duration > 5*time.Minute:
		return fmt.Errorf("--duration = %v is not allowed: want more than 0 and at most 5m", c.duration)
	case c.abandon < 0 || c.abandon > 1000:
		return fmt.Errorf("--abandon = %d is not allowed: want 0 to 1000", c.abandon)
	case c.timeout <= 0 || c.timeout > time.Minute:
		return fmt.Errorf("--timeout = %v is not allowed: want more than 0 and at most 1m", c.timeout)
	case c.guardMB < 64:
		return fmt.Errorf("--rss-guard = %d is not allowed: want at least 64 (MB)", c.guardMB)
	case c.mix != "full" && c.mix != "no-heavy":
		return fmt.Errorf("--mix = %q is not allowed: want full or no-heavy", c.mix)
	case c.format != "text" && c.format != "json":
		return fmt.Errorf("--format = %q is not allowed: want text or json", c.format)
	}
	return nil
}

// target is one address of the mix.
type target struct {
	class, path string
}

// heavyQueries are knob settings that were in range before issues 13 and 14
// and cost the server tens of seconds and gigabytes each to prerender. The
// lessons' work bounds now refuse most of them, and the server never runs a
// query's knobs at all; they stay in the mix so that before and after runs
// send the same addresses.
var heavyQueries = []string{
	"/lesson/smart-routing?requests=600&prompt_min=16384&prompt_max=32768",
	"/embed/smart-routing?requests=600&prompt_max=32768&step=3",
	"/lesson/measuring?duration_s=600",
	"/lesson/sandbox?requests=2000&rate=1000&max_num_seqs=2048",
	"/lesson/garage?requests=2000&output_min=1000&output_max=4096",
}

// mix returns the addresses in the order connections take them: of every
// 20 requests, 10 default pages, 2 heavy queries (pages in no-heavy) and 8
// assets (app.wasm once in 80 requests).
func mix(kind string) []target {
	var pages []target
	pages = append(pages, target{"page", "/"})
	for _, l := range lessons.All() {
		pages = append(pages, target{"page", "/lesson/" + l.Slug}, target{"page", "/embed/" + l.Slug})
	}
	assets := []string{"/app.js", "/wasm_exec.js", "/app.css", "/manifest.webmanifest", "/app-worker.js",
		"/web/lab.css", "/web/lab.js", "/web/echarts.min.js", "/web/icon.svg"}
	var out []target
	p, h, a := 0, 0, 0
	for round := 0; round < 4*len(pages); round++ {
		for i := 0; i < 20; i++ {
			switch {
			case i%20 == 5 || i%20 == 15:
				if kind == "full" {
					out = append(out, target{"heavy", heavyQueries[h%len(heavyQueries)]})
					h++
					continue
				}
				fallthrough
			case i%2 == 0:
				out = append(out, pages[p%len(pages)])
				p++
			default:
				path := assets[a%len(assets)]
				if i == 19 && round%4 == 0 {
					path = "/web/app.wasm"
				}
				out = append(out, target{"asset", path})
				a++
			}
		}
	}
	return out
}

// result is the benchmark's report.
type result struct {
	Mix           string            `json:"mix"`
	Conns         int               `json:"conns"`
	Seconds       float64           `json:"seconds"`
	Requests      int               `json:"requests"`
	RequestsPerS  float64           `json:"requests_per_s"`
	Errors        int               `json:"errors"`
	ErrorRate     float64           `json:"error_rate"`
	ErrorKinds    map[string]int    `json:"error_kinds"`
	P50MS         float64           `json:"p50_ms"`
	P99MS         float64           `json:"p99_ms"`
	MaxMS         float64           `json:"max_ms"`
	Classes       map[string]*class `json:"classes"`
	Abandoned     int               `json:"abandoned"`
	PeakRSSMB     float64           `json:"peak_rss_mb"`
	CPUAfterS     float64           `json:"server_cpu_s_in_5s_after"`
	Aborted       string            `json:"aborted,omitempty"`
	BytesReceived int64             `json:"bytes_received"`
}

type class struct {
	Requests int     `json:"requests"`
	Errors   int     `json:"errors"`
	P50MS    float64 `json:"p50_ms"`
	P99MS    float64 `json:"p99_ms"`
	lat      []time.Duration
}

func run(c config) (*result, error) {
	bin, err := filepath.Abs(c.bin)
	if err != nil {
		return nil, err
	}
	addr, err := freeLoopback()
	if err != nil {
		return nil, err
	}
	// The whole run, server included, ends by this deadline whatever happens.
	ctx, cancel := context.WithTimeout(context.Background(), c.duration+3*time.Minute)
	defer cancel()
	srv := exec.CommandContext(ctx, bin, "serve", "--addr", addr, "--web", c.web)
	srv.Stdout, srv.Stderr = io.Discard, io.Discard
	srv.Cancel = func() error { return srv.Process.Kill() }
	if err := srv.Start(); err != nil {
		return nil, err
	}
	defer func() {
		srv.Process.Kill()
		srv.Wait()
	}()
	pid := srv.Process.Pid
	base := "http://" + addr
	tr := &http.Transport{MaxIdleConns: c.conns, MaxIdleConnsPerHost: c.conns, MaxConnsPerHost: c.conns, DisableCompression: true,
		Proxy: nil, DialContext: (&net.Dialer{Timeout: 5 * time.Second}).DialContext}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if err := waitReady(ctx, client, base+"/app.js", 2*time.Minute); err != nil {
		return nil, err
	}

	res := &result{Mix: c.mix, Conns: c.conns, ErrorKinds: map[string]int{}, Classes: map[string]*class{}}
	load, stop := context.WithTimeout(ctx, c.duration)
	defer stop()

	// Memory guard and peak: sampled every 50 ms.
	var peak atomic.Int64
	var aborted atomic.Value
	go func() {
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-load.Done():
				return
			case <-t.C:
			}
			kb := rssKB(pid)
			if kb > peak.Load() {
				peak.Store(kb)
			}
			if kb > c.guardMB*1024 {
				aborted.Store(fmt.Sprintf("server RSS %d MB passed the %d MB guard", kb/1024, c.guardMB))
				stop()
				return
			}
		}
	}()

	targets := mix(c.mix)
	var mu sync.Mutex
	var bytes atomic.Int64
	record := func(t target, d time.Duration, kind string) {
		mu.Lock()
		defer mu.Unlock()
		cl := res.Classes[t.class]
		if cl == nil {
			cl = &class{}
			res.Classes[t.class] = cl
		}
		cl.Requests++
		if kind != "" {
			cl.Errors++
			res.ErrorKinds[kind]++
			return
		}
		cl.lat = append(cl.lat, d)
	}
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < c.conns; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; load.Err() == nil; i += c.conns {
				t := targets[i%len(targets)]
				d, n, kind := fetch(load, client, base+t.path, c.timeout)
				bytes.Add(n)
				if load.Err() != nil && kind != "" {
					return // cut off by the end of the run, not the server's fault
				}
				record(t, d, kind)
			}
		}(w)
	}
	// Abandoned requests, spread over the run.
	for i := 0; i < c.abandon; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			wait := c.duration * time.Duration(i) / time.Duration(max(c.abandon, 1))
			select {
			case <-time.After(wait):
			case <-load.Done():
				return
			}
			actx, acancel := context.WithTimeout(load, c.abandonAt)
			defer acancel()
			req, _ := http.NewRequestWithContext(actx, "GET", base+heavyQueries[i%len(heavyQueries)]+"&abandoned="+strconv.Itoa(i), nil)
			req.Header.Set("Accept-Encoding", "br, gzip")
			if r, err := client.Do(req); err == nil {
				io.Copy(io.Discard, r.Body)
				r.Body.Close()
			}
			mu.Lock()
			res.Abandoned++
			mu.Unlock()
		}(i)
	}
	wg.Wait()
	res.Seconds = time.Since(start).Seconds()
	if a, ok := aborted.Load().(string); ok {
		res.Aborted = a
	}
	if kb := rssKB(pid); kb > peak.Load() {
		peak.Store(kb)
	}
	if hwm := hwmKB(pid); hwm > peak.Load() {
		peak.Store(hwm)
	}
	res.PeakRSSMB = float64(peak.Load()) / 1024
	// Work the server goes on doing after every client has left.
	if res.Aborted == "" {
		tr.CloseIdleConnections()
		c0 := cpuSeconds(pid)
		time.Sleep(5 * time.Second)
		res.CPUAfterS = cpuSeconds(pid) - c0
	}
	res.BytesReceived = bytes.Load()
	res.summarise()
	return res, nil
}

// fetch GETs url like a browser would (compressed), reads the whole body,
// and classifies a failure.
func fetch(ctx context.Context, client *http.Client, url string, timeout time.Duration) (time.Duration, int64, string) {
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, "GET", url, nil)
	if err != nil {
		return 0, 0, "request"
	}
	req.Header.Set("Accept-Encoding", "br, gzip")
	t := time.Now()
	r, err := client.Do(req)
	if err != nil {
		return time.Since(t), 0, errKind(err)
	}
	n, err := io.Copy(io.Discard, r.Body)
	r.Body.Close()
	d := time.Since(t)
	switch {
	case err != nil:
		return d, n, errKind(err)
	case r.StatusCode >= 400:
		return d, n, "status " + strconv.Itoa(r.StatusCode)
	}
	return d, n, ""
}

func errKind(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.ErrUnexpectedEOF):
		return "reset"
	}
	return "transport"
}

func (r *result) summarise() {
	var all []time.Duration
	for _, cl := range r.Classes {
		r.Requests += cl.Requests
		r.Errors += cl.Errors
		all = append(all, cl.lat...)
		cl.P50MS, cl.P99MS = ms(percentile(cl.lat, 0.50)), ms(percentile(cl.lat, 0.99))
	}
	if r.Seconds > 0 {
		r.RequestsPerS = float64(r.Requests) / r.Seconds
	}
	if r.Requests > 0 {
		r.ErrorRate = float64(r.Errors) / float64(r.Requests)
	}
	r.P50MS, r.P99MS, r.MaxMS = ms(percentile(all, 0.50)), ms(percentile(all, 0.99)), ms(percentile(all, 1))
}

// percentile is the nearest-rank percentile (p in 0..1) of ds; it sorts ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	i := int(p*float64(len(ds))+0.999999) - 1
	return ds[min(max(i, 0), len(ds)-1)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func (r *result) print(w io.Writer) {
	fmt.Fprintf(w, "mix %s, %d connections, %.1f s, %d abandoned heavy requests\n", r.Mix, r.Conns, r.Seconds, r.Abandoned)
	if r.Aborted != "" {
		fmt.Fprintf(w, "ABORTED: %s\n", r.Aborted)
	}
	fmt.Fprintf(w, "requests %d (%.0f/s), errors %d (%.2f%%) %v\n", r.Requests, r.RequestsPerS, r.Errors, 100*r.ErrorRate, r.ErrorKinds)
	fmt.Fprintf(w, "latency p50 %.1f ms, p99 %.1f ms, max %.1f ms; %.0f MB received\n", r.P50MS, r.P99MS, r.MaxMS, float64(r.BytesReceived)/1e6)
	names := make([]string, 0, len(r.Classes))
	for n := range r.Classes {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		cl := r.Classes[n]
		fmt.Fprintf(w, "  %-6s %7d requests, %d errors, p50 %.1f ms, p99 %.1f ms\n", n, cl.Requests, cl.Errors, cl.P50MS, cl.P99MS)
	}
	fmt.Fprintf(w, "server peak RSS %.0f MB; server CPU in the 5 s after the load: %.2f s\n", r.PeakRSSMB, r.CPUAfterS)
}

// freeLoopback returns a free 127.0.0.1 address.
func freeLoopback() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func waitReady(ctx context.Context, client *http.Client, url string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if r, err := client.Get(url); err == nil {
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
			if r.StatusCode == 200 {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("the server did not answer %s within %v", url, limit)
}

// procField reads a "Name:   N kB" line of /proc/PID/status.
func procField(pid int, name string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n
			}
		}
	}
	return 0
}

func rssKB(pid int) int64 { return procField(pid, "VmRSS") }
func hwmKB(pid int) int64 { return procField(pid, "VmHWM") }

// cpuSeconds is the process's user + system CPU time (/proc/PID/stat).
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (u + st) / 100 // clock ticks; 100 per second on Linux
}
