// Package testinput makes the inputs that the tests and benchmarks of
// several core packages share, so that each is written once: readable
// token runs (Letters), fuzz input read as small numbers (Bytes), token
// sequences that share prefixes the way chat traffic does
// (ChatSequences), and the source tags a package's files cite (Cited).
package testinput

import (
	"math/rand/v2"
	"os"
	"regexp"
	"strings"
)

// Citation is one source tag a file cites.
type Citation struct{ File, Tag string }

// Cited reads those of files that are not tests and returns every tag they
// cite, the first group of each match of re, in order.
func Cited(files []string, re *regexp.Regexp) ([]Citation, error) {
	var out []Citation
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, m := range re.FindAllStringSubmatch(string(src), -1) {
			out = append(out, Citation{File: f, Tag: m[1]})
		}
	}
	return out, nil
}

// Letters turns "abcd" into token ids, one per letter, for readable cases.
func Letters(s string) []int {
	ids := make([]int, len(s))
	for i, c := range s {
		ids[i] = int(c)
	}
	return ids
}

// Bytes hands out fuzz input one small number at a time.
type Bytes struct {
	b []byte
	i int
}

// NewBytes reads b.
func NewBytes(b []byte) *Bytes { return &Bytes{b: b} }

// More reports whether any input is left.
func (r *Bytes) More() bool { return r.i < len(r.b) }

// Next is the next byte modulo n, 0 once the input is spent.
func (r *Bytes) Next(n int) int {
	if r.i >= len(r.b) {
		return 0
	}
	v := int(r.b[r.i]) % n
	r.i++
	return v
}

// Seq reads up to max tokens from a three-letter alphabet, so prefixes are
// often shared.
func (r *Bytes) Seq(max int) []int {
	s := make([]int, r.Next(max+1))
	for i := range s {
		s[i] = r.Next(3)
	}
	return s
}

// ChatSequences returns n sequences of 1,000 tokens that share prefixes the
// way chat traffic does: one of 16 system prompts (512 tokens), one of 256
// conversation openings under it (256 tokens), then 232 tokens of its own.
// The same n gives the same sequences.
func ChatSequences(n int) [][]int {
	rng := rand.New(rand.NewPCG(1, 2))
	run := func(k int) []int {
		s := make([]int, k)
		for i := range s {
			s[i] = rng.IntN(32000)
		}
		return s
	}
	sys := make([][]int, 16)
	for i := range sys {
		sys[i] = run(512)
	}
	mid := make([][]int, 256)
	for i := range mid {
		mid[i] = run(256)
	}
	out := make([][]int, n)
	for i := range out {
		s := make([]int, 0, 1000)
		s = append(s, sys[i%256%16]...)
		s = append(s, mid[i%256]...)
		out[i] = append(s, run(232)...)
	}
	return out
}
