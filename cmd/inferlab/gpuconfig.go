package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/inferlab/inferlab/app/urlstate"
	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/modelconfig"
	"github.com/inferlab/inferlab/internal/textfmt"
	"github.com/inferlab/inferlab/lessons"
)

// The --gpu-config flag brings a reader's own GPU into any lesson that
// picks one, as --model-config brings a model: a small JSON file of the
// five figures hardware.CustomGPUSpec holds, checked against their bounds,
// registered as "custom:NAME" (hardware.RegisterCustomGPU), and offered by
// a copy of the lesson whose gpu knob lists it.

// maxGPUConfigBytes bounds the file: six fields fit in a few hundred bytes.
const maxGPUConfigBytes = 64 << 10

// gpuConfigUsage is the --gpu-config flag's help.
const gpuConfigUsage = "lessons that pick a GPU: run it on the GPU of this JSON file " +
	`({"name", "memory_gib", "hbm_gbps", "bf16_tflops", "fp8_tflops", "interconnect_gbps"}), as gpu=custom:NAME`

// customGPU is a GPU read from --gpu-config and registered for one
// command; release unregisters it.
type customGPU struct {
	gpu  hardware.GPU
	spec hardware.CustomGPUSpec
	path string
}

// release unregisters the GPU; nil (no --gpu-config) does nothing.
func (c *customGPU) release() {
	if c != nil {
		hardware.UnregisterCustomGPU(c.gpu.ID)
	}
}

// applyGPUConfig handles --gpu-config for command cmd, as applyModelConfig
// handles --model-config: it loads the GPU, replaces *l by the copy that
// offers it, and sets the gpu knob to it, refusing a --set gpu= naming
// another GPU. ok is false when the command must exit 2.
func applyGPUConfig(cmd string, l **lessons.Lesson, flag textFlag, sets setFlags, stderr io.Writer) (custom *customGPU, ok bool) {
	if !flag.set {
		return nil, true
	}
	lc, custom, err := loadGPUConfig(*l, flag.value)
	if err != nil {
		fmt.Fprintln(stderr, printable(fmt.Sprintf("%s %s: %v", cmd, (*l).Slug, err)))
		return nil, false
	}
	id := custom.gpu.ID
	if v, given := sets["gpu"]; given && !strings.EqualFold(strings.TrimSpace(v), id) {
		custom.release()
		fmt.Fprintln(stderr, printable(fmt.Sprintf("%s %s: --set gpu=%s and --gpu-config %s both pick the GPU: give one", cmd, (*l).Slug, v, flag.value)))
		return nil, false
	}
	sets["gpu"] = id
	*l = lc
	return custom, true
}

// loadGPUConfig reads, checks and registers the GPU of path for lesson l,
// and returns the copy of l whose gpu knob lists it.
func loadGPUConfig(l *lessons.Lesson, path string) (*lessons.Lesson, *customGPU, error) {
	if p, ok := l.Param("gpu"); !ok || p.Kind != lessons.Choice {
		return nil, nil, fmt.Errorf("--gpu-config works with the lessons that pick a GPU (%s), not %s", strings.Join(gpuLessons(), ", "), l.Slug)
	}
	data, err := readBounded(path, "a GPU's figures as JSON", maxGPUConfigBytes)
	if err != nil {
		return nil, nil, fmt.Errorf("--gpu-config %s: %v", path, err)
	}
	spec, err := parseGPUConfig(data, configName(path))
	if err != nil {
		return nil, nil, fmt.Errorf("--gpu-config %s: %w", path, err)
	}
	g, err := hardware.RegisterCustomGPU(spec)
	if err != nil {
		return nil, nil, fmt.Errorf("--gpu-config %s: %w", path, err)
	}
	lc := urlstate.WithChoices(l, map[string]string{"gpu": g.ID})
	return lc, &customGPU{gpu: g, spec: spec, path: path}, nil
}

// parseGPUConfig reads the JSON object of a GPU's figures: every figure of
// hardware.CustomGPUFields, each a JSON number, and optionally "name" (a
// string made a slug with modelconfig.Name; the file's name otherwise).
// An unknown key, a key given twice, a missing or mistyped figure and a
// figure out of its bounds are each an error naming the key; all are
// reported (errors.Join), the first found first.
func parseGPUConfig(data []byte, defaultName string) (hardware.CustomGPUSpec, error) {
	if len(data) > maxGPUConfigBytes {
		return hardware.CustomGPUSpec{}, fmt.Errorf("the file is over %s bytes: want one small JSON object", textfmt.Comma(maxGPUConfigBytes))
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff")) // a UTF-8 byte-order mark, as a config.json's and a trace's
	keys := []string{"name"}
	for _, f := range hardware.CustomGPUFields {
		keys = append(keys, f.Key)
	}
	raw, err := gpuObject(data, keys)
	if err != nil {
		return hardware.CustomGPUSpec{}, err
	}
	var errs []error
	name := defaultName
	if v, ok := raw["name"]; ok {
		if err := json.Unmarshal(v, &name); err != nil || strings.TrimSpace(name) == "" {
			errs = append(errs, &hardware.GPUFieldError{Field: "name", Value: shortJSON(v), Allowed: "a non-empty string"})
		}
	}
	id, _ := modelconfig.Name(name)
	spec := hardware.CustomGPUSpec{Name: id}
	figures := map[string]float64{}
	for _, f := range hardware.CustomGPUFields {
		v, ok := raw[f.Key]
		var x float64
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%s is missing: want %s", f.Key, f.Allowed()))
			continue
		// null decodes to 0 without an error, and so does a number a
		// float64 reads as 0 (1e-400): either would silently be "no FP8
		// tensor cores" or "no link".
		case string(bytes.TrimSpace(v)) == "null", json.Unmarshal(v, &x) != nil, textfmt.RoundsToZero(string(bytes.TrimSpace(v))):
			errs = append(errs, &hardware.GPUFieldError{Field: f.Key, Value: shortJSON(v), Allowed: f.Allowed()})
			continue
		}
		figures[f.Key] = x
	}
	if len(errs) > 0 {
		return spec, errors.Join(errs...)
	}
	spec.MemoryGiB, spec.HBMGBps = figures["memory_gib"], figures["hbm_gbps"]
	spec.BF16TFLOPS, spec.FP8TFLOPS = figures["bf16_tflops"], figures["fp8_tflops"]
	spec.InterconnectGBps = figures["interconnect_gbps"]
	return spec, spec.Check()
}

// gpuObject decodes one JSON object whose keys are among keys, each once.
func gpuObject(data []byte, keys []string) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object: want {\"name\": \"my-gpu\", \"memory_gib\": 80, …}")
	}
	raw := map[string]json.RawMessage{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("not a JSON object: %v", err)
		}
		k, _ := t.(string)
		if !slices.Contains(keys, k) {
			return nil, fmt.Errorf("%q is not a field of a GPU: want %s", k, strings.Join(keys, ", "))
		}
		if _, dup := raw[k]; dup {
			return nil, fmt.Errorf("%s is given twice: give each field once", k)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s: not a JSON value: %v", k, err)
		}
		raw[k] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("not one JSON object: more follows the closing brace")
	}
	return raw, nil
}

// shortJSON is a value's JSON text for a message, at most 40 bytes.
func shortJSON(v json.RawMessage) string {
	s := strings.TrimSpace(string(v))
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
}

// gpuLessons lists the lessons with a gpu knob.
func gpuLessons() []string {
	var out []string
	for _, l := range lessons.All() {
		if p, ok := l.Param("gpu"); ok && p.Kind == lessons.Choice {
			out = append(out, l.Slug)
		}
	}
	return out
}

// writeGPUSummary prints, above a text run, what was read from the file and
// what was derived.
func writeGPUSummary(w io.Writer, c *customGPU) {
	g, s := c.gpu, c.spec
	fp8 := "no FP8 tensor cores"
	if s.FP8TFLOPS > 0 {
		fp8 = gpuFigure(s.FP8TFLOPS) + " dense FP8 TFLOP/s"
	}
	link := "no GPU-to-GPU link (collectives over PCIe Gen5 at η 0.80, 60 µs)"
	if s.InterconnectGBps > 0 {
		link = fmt.Sprintf("%s GB/s per direction to its peers, 8 to a switch (NCCL %s GB/s bus, 35 µs)",
			gpuFigure(s.InterconnectGBps), gpuFigure(math.Round(g.NCCL.BusBW8/1e8)/10))
	}
	fmt.Fprintf(w, "gpu from %s: %s: %s GiB (%s bytes), %s GB/s, %s dense BF16 TFLOP/s, %s, %s\n",
		c.path, g.ID, gpuFigure(s.MemoryGiB), textfmt.Comma(int(g.MemoryBytes)), gpuFigure(s.HBMGBps),
		gpuFigure(s.BF16TFLOPS), fp8, link)
	factors := "HBM 0.90, BF16 MFU 0.72, FP8 MFU 0.54, t0 4 µs"
	if s.FP8TFLOPS == 0 {
		factors = "HBM 0.90, BF16 MFU 0.72, t0 4 µs"
	}
	fmt.Fprintf(w, "  derived: Hopper's efficiency factors (%s), PCIe Gen5 x16 to the host (63 GB/s)\n", factors)
	fmt.Fprintln(w)
}

// gpuFigure writes a figure for the summary: thousands separated when
// whole (3,350), else as given (79.19).
func gpuFigure(x float64) string {
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return textfmt.Comma(int(x))
	}
	return strconv.FormatFloat(x, 'f', -1, 64)
}
