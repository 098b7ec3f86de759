package hardware

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// A reader's own GPU: five datasheet figures (CustomGPUSpec), held to
// bounds that every part shipped so far, and the next few generations,
// fall within, and turned into a GPU profile with derived defaults for what
// a datasheet does not state (CustomGPUSpec.GPU). RegisterCustomGPU makes
// it resolvable by GPUByID as "custom:NAME", as RegisterCustomModel does
// for models, so every lesson's gpu knob can take it without naming it.

// CustomGPUPrefix starts the id of every GPU a reader brings:
// "custom:my-gpu". Built-in ids never contain a colon.
const CustomGPUPrefix = "custom:"

// CustomGPUSpec is what a reader states about their GPU. Memory is in GiB
// (2^30 bytes) because that is what an engine sees and logs (vLLM's
// total_memory, nvidia-smi's MiB / 1,024), not the datasheet's decimal GB:
// an H100 SXM sold as 80 GB shows 79.19 GiB to vLLM. Rates are the dense
// (not 2:4 sparse) peaks; the interconnect is per direction, half of
// NVLink's marketed bidirectional figure (an H100 SXM's 900 GB/s is 450).
type CustomGPUSpec struct {
	// Name is the GPU's slug (CustomGPUName): lower-case letters, digits,
	// dots and dashes.
	Name string `json:"name"`
	// MemoryGiB is device memory in GiB.
	MemoryGiB float64 `json:"memory_gib"`
	// HBMGBps is peak device-memory bandwidth in GB/s (1e9 bytes/s).
	HBMGBps float64 `json:"hbm_gbps"`
	// BF16TFLOPS is dense BF16/FP16 tensor throughput in TFLOP/s.
	BF16TFLOPS float64 `json:"bf16_tflops"`
	// FP8TFLOPS is dense FP8 tensor throughput in TFLOP/s, 0 for a part
	// without FP8 tensor cores.
	FP8TFLOPS float64 `json:"fp8_tflops"`
	// InterconnectGBps is GPU-to-GPU bandwidth per direction in GB/s, 0
	// for a part without a scale-up link (collectives then go over PCIe).
	InterconnectGBps float64 `json:"interconnect_gbps"`
}

// CustomGPUField describes one figure of a CustomGPUSpec: its JSON key,
// how a form labels it, and its bounds. Zero, when Zero says what it
// means, is allowed besides [Min, Max].
type CustomGPUField struct {
	Key, Label, Unit string
	Min, Max         float64
	// Zero is what 0 means for the field ("" when 0 is refused).
	Zero string
	// Help is one sentence for a form.
	Help string
}

// CustomGPUFields are the figures of a CustomGPUSpec in the order a form
// and the address token (CustomGPUSpec.Token) list them. The bounds are
// wide enough for every part shipped (an L4's 300 GB/s, a B200's 8,000
// GB/s and 2,250 dense BF16 TFLOP/s) and a few generations beyond, and
// narrow enough that no figure the cost models compute overflows or
// divides by zero.
var CustomGPUFields = []CustomGPUField{
	{Key: "memory_gib", Label: "Memory", Unit: "GiB", Min: 8, Max: 1024,
		Help: "Device memory as the engine sees it (vLLM logs total_memory in GiB: 79.19 on an H100 SXM 80 GB)."},
	{Key: "hbm_gbps", Label: "Memory bandwidth", Unit: "GB/s", Min: 100, Max: 50000,
		Help: "Peak HBM (or GDDR) bandwidth from the datasheet: 3,350 on an H100 SXM."},
	{Key: "bf16_tflops", Label: "Dense BF16", Unit: "TFLOP/s", Min: 10, Max: 20000,
		Help: "Dense BF16 tensor throughput, not the 2:4 sparse figure: 989 on an H100 SXM."},
	{Key: "fp8_tflops", Label: "Dense FP8", Unit: "TFLOP/s", Min: 10, Max: 40000, Zero: "no FP8 tensor cores",
		Help: "Dense FP8 tensor throughput, at least the BF16 figure; 0 for a part without FP8 tensor cores (A100)."},
	{Key: "interconnect_gbps", Label: "GPU-to-GPU link", Unit: "GB/s per direction", Min: 10, Max: 10000, Zero: "no scale-up link: collectives over PCIe",
		Help: "NVLink per direction, half the marketed figure (450 on an H100 SXM); 0 for none."},
}

// Value returns the spec's figure for a field key (CustomGPUFields).
func (s CustomGPUSpec) Value(key string) float64 {
	switch key {
	case "memory_gib":
		return s.MemoryGiB
	case "hbm_gbps":
		return s.HBMGBps
	case "bf16_tflops":
		return s.BF16TFLOPS
	case "fp8_tflops":
		return s.FP8TFLOPS
	case "interconnect_gbps":
		return s.InterconnectGBps
	}
	panic("hardware: no custom GPU field " + key)
}

// SetValue sets the spec's figure for a field key (CustomGPUFields).
func (s *CustomGPUSpec) SetValue(key string, x float64) {
	switch key {
	case "memory_gib":
		s.MemoryGiB = x
	case "hbm_gbps":
		s.HBMGBps = x
	case "bf16_tflops":
		s.BF16TFLOPS = x
	case "fp8_tflops":
		s.FP8TFLOPS = x
	case "interconnect_gbps":
		s.InterconnectGBps = x
	default:
		panic("hardware: no custom GPU field " + key)
	}
}

// GPUFieldError is a custom GPU figure refused: its key, the value given
// and what is allowed.
type GPUFieldError struct {
	Field, Value, Allowed string
}

func (e *GPUFieldError) Error() string {
	return fmt.Sprintf("%s = %s is not allowed: want %s", e.Field, e.Value, e.Allowed)
}

// Allowed words the field's bounds: "from 8 to 1,024 (GiB)", or with Zero
// "0 (no FP8 tensor cores) or from 10 to 40,000 (TFLOP/s)".
func (f CustomGPUField) Allowed() string {
	s := fmt.Sprintf("a number from %s to %s (%s)", decimal(f.Min), decimal(f.Max), f.Unit)
	if f.Zero != "" {
		s = fmt.Sprintf("0 (%s) or %s", f.Zero, s)
	}
	return s
}

// maxCustomName bounds a custom GPU's name, as core/modelconfig bounds a
// model's.
const maxCustomName = 48

// CustomGPUName reports whether name is a usable custom GPU name: 1 to 48
// lower-case ASCII letters, digits, dots and dashes, starting and ending
// with a letter or digit (core/modelconfig.Name makes one of any text).
func CustomGPUName(name string) bool {
	if name == "" || len(name) > maxCustomName || strings.Trim(name, ".-") != name {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '-') {
			return false
		}
	}
	return true
}

// Check reports every figure out of its bounds, one *GPUFieldError each
// (errors.As finds the first), in CustomGPUFields' order after the name.
func (s CustomGPUSpec) Check() error {
	var errs []error
	if !CustomGPUName(s.Name) {
		errs = append(errs, &GPUFieldError{Field: "name", Value: strconv.Quote(s.Name),
			Allowed: "1 to 48 lower-case letters, digits, dots and dashes, starting and ending with a letter or digit"})
	}
	for _, f := range CustomGPUFields {
		x := s.Value(f.Key)
		ok := !math.IsNaN(x) && x >= f.Min && x <= f.Max || f.Zero != "" && x == 0
		if !ok {
			errs = append(errs, &GPUFieldError{Field: f.Key, Value: decimal(x), Allowed: f.Allowed()})
		}
	}
	if len(errs) == 0 && s.FP8TFLOPS > 0 && s.FP8TFLOPS < s.BF16TFLOPS {
		errs = append(errs, &GPUFieldError{Field: "fp8_tflops", Value: decimal(s.FP8TFLOPS),
			Allowed: fmt.Sprintf("0 (no FP8 tensor cores) or at least bf16_tflops (%s): FP8 tensor cores run at least the BF16 rate", decimal(s.BF16TFLOPS))})
	}
	return errors.Join(errs...)
}

// GPU turns the spec into a profile. What a datasheet's five figures do
// not give is derived, each default the lab's own for a part it has no
// measurement of:
//
//   - the host link is PCIe Gen5 x16, 63 GB/s per direction, as on every
//     Hopper and Blackwell board here;
//   - with a GPU-to-GPU link, 8 GPUs share it all to all (an HGX board
//     with NVSwitch), so vLLM's custom all-reduce runs up to TP 8; without
//     one, none;
//   - the efficiency factors are Hopper's (HBM 0.90, BF16 MFU 0.72, FP8
//     MFU 0.54, t0 4 µs), the most measured part (docs/SOURCES.md#efficiency-factors),
//     as the B200 profile carries them;
//   - the NCCL all-reduce, with a link, has the 8×H100 latency (35 µs) and
//     the fraction of the link's bandwidth the 8×H100 measurement reaches
//     (365 of 450 GB/s) for groups of every size, as the B200 profile
//     does; without one, PCIe Gen5 at η 0.80 with the A100's latency (60
//     µs), as the H100 PCIe and L40S profiles do (docs/SOURCES.md#allreduce-model).
//
// The GPU's Name is its id, "custom:NAME", so narrations say whose figures
// they are; it cites no source.
func (s CustomGPUSpec) GPU() (GPU, error) {
	if err := s.Check(); err != nil {
		return GPU{}, err
	}
	id := CustomGPUPrefix + s.Name
	// Whole bytes and FLOP per second: 989.4 TFLOP/s is then exactly the
	// profile's 989.4 * tflops, not a product an ulp away from it.
	g := GPU{
		ID:           id,
		Name:         id,
		MemoryBytes:  int64(math.Round(s.MemoryGiB * GiB)),
		MemBandwidth: math.Round(s.HBMGBps * gbps),
		PeakBF16:     math.Round(s.BF16TFLOPS * tflops),
		PeakFP8:      math.Round(s.FP8TFLOPS * tflops),
		ScaleUpBW:    math.Round(s.InterconnectGBps * gbps),
		HostLinkBW:   pcieGen5x16,
		Eff:          Efficiency{HBM: hbmHopper, MFU: mfuHopper, KernelFixed: kernelFixed},
	}
	if g.PeakFP8 > 0 {
		g.Eff.MFUFP8 = mfuFP8Hopper
	}
	if g.ScaleUpBW > 0 {
		g.NVLinkDomain = 8
		bus := linkBus(g.ScaleUpBW, nvlinkBusFraction)
		g.NCCL = AllReduceFigures{Latency: allReduceLatencyNCCLH100, BusBW: bus, BusBW8: bus}
	} else {
		bus := linkBus(pcieGen5x16, pcieEfficiency)
		g.NCCL = AllReduceFigures{Latency: allReduceLatencyNCCLA100, BusBW: bus, BusBW8: bus}
	}
	if err := g.checkCostFigures(); err != nil {
		return GPU{}, err // the defaults above always pass; a guard for edits
	}
	return g, nil
}

// customGPUs holds the GPUs registered with RegisterCustomGPU (see
// customModels).
var customGPUs = struct {
	sync.Mutex
	byID map[string]GPU
}{byID: map[string]GPU{}}

// RegisterCustomGPU checks the spec (Check), builds its profile (GPU) and
// makes it resolvable by GPUByID under "custom:NAME". Registering a name
// again replaces the earlier GPU.
func RegisterCustomGPU(s CustomGPUSpec) (GPU, error) {
	g, err := s.GPU()
	if err != nil {
		return GPU{}, err
	}
	customGPUs.Lock()
	defer customGPUs.Unlock()
	customGPUs.byID[g.ID] = g
	return g, nil
}

// UnregisterCustomGPU forgets the custom GPU with the given id; an id
// never registered is ignored.
func UnregisterCustomGPU(id string) {
	customGPUs.Lock()
	defer customGPUs.Unlock()
	delete(customGPUs.byID, id)
}

// registeredCustomGPUs returns the registered GPUs in id order.
func registeredCustomGPUs() []GPU {
	customGPUs.Lock()
	defer customGPUs.Unlock()
	out := make([]GPU, 0, len(customGPUs.byID))
	for _, id := range slices.Sorted(maps.Keys(customGPUs.byID)) {
		out = append(out, customGPUs.byID[id])
	}
	return out
}

// The address token of a custom GPU (a page's gc= parameter):
//
//	v1_MEMORY_GIB_HBM_GBPS_BF16_TFLOPS_FP8_TFLOPS_INTERCONNECT_GBPS_NAME
//
// each figure a plain decimal in its shortest form (80, 74.5; no sign,
// exponent or trailing zeros), the name last, e.g.
// v1_79.19_3350_989.4_1979_450_my-h100. The parts are separated by
// underscores, which neither a decimal nor a name (CustomGPUName) holds.
// ParseGPUToken refuses anything Token would not write.
const (
	gpuTokenSep     = "_"
	gpuTokenVersion = "v1"
	// MaxGPUToken bounds a token before it is read: six short numbers and
	// a 48-byte name fit well within it.
	MaxGPUToken = 200
)

// Token is the spec's address token (see above). The spec should pass
// Check; ParseGPUToken refuses the token of one that does not.
func (s CustomGPUSpec) Token() string {
	parts := []string{gpuTokenVersion}
	for _, f := range CustomGPUFields {
		parts = append(parts, decimalToken(s.Value(f.Key)))
	}
	return strings.Join(append(parts, s.Name), gpuTokenSep)
}

// TokenError is an address token refused (a custom GPU's here, a model's
// in core/modelconfig): the page parameter it came in (gc, mc), the part
// at fault (a field's key, "version" or "token"), its text (shortened to
// about 40 bytes in the message) and what is allowed.
type TokenError struct {
	Param, Part, Value, Allowed string
}

func (e *TokenError) Error() string {
	return fmt.Sprintf("%s: %s = %q is not allowed: want %s", e.Param, e.Part, clipText(e.Value), e.Allowed)
}

// ParseGPUToken reads a custom GPU's address token, refusing with a
// *TokenError (param "gc") a token that is too long, of another version,
// with a figure that is not a plain decimal in its shortest form, and with
// a *GPUFieldError (wrapped, naming the field) a figure out of bounds.
func ParseGPUToken(tok string) (CustomGPUSpec, error) {
	bad := func(part, value, allowed string) error {
		return &TokenError{Param: "gc", Part: part, Value: value, Allowed: allowed}
	}
	if len(tok) > MaxGPUToken {
		return CustomGPUSpec{}, bad("token", tok, fmt.Sprintf("at most %d characters", MaxGPUToken))
	}
	n := len(CustomGPUFields)
	parts := strings.Split(tok, gpuTokenSep)
	if len(parts) != n+2 {
		return CustomGPUSpec{}, bad("token", tok, fmt.Sprintf("%s followed by %d figures and a name, separated by underscores (v1_79.19_3350_989.4_1979_450_my-gpu)", gpuTokenVersion, n))
	}
	if parts[0] != gpuTokenVersion {
		return CustomGPUSpec{}, bad("version", parts[0], gpuTokenVersion)
	}
	s := CustomGPUSpec{Name: parts[n+1]}
	for i, f := range CustomGPUFields {
		text := parts[i+1]
		x, ok := parseDecimalToken(text)
		if !ok {
			return CustomGPUSpec{}, bad(f.Key, text, "a plain decimal in its shortest form (80, 74.5): "+f.Allowed())
		}
		s.SetValue(f.Key, x)
	}
	if err := s.Check(); err != nil {
		return CustomGPUSpec{}, fmt.Errorf("gc: %w", err)
	}
	return s, nil
}

// decimalToken writes x as the shortest plain decimal that reads back as
// x (no exponent: every bounded figure is written in full).
func decimalToken(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// parseDecimalToken reads digits with at most one decimal point, and only
// the text decimalToken writes for the value read.
func parseDecimalToken(s string) (float64, bool) {
	if s == "" || len(s) > 24 || strings.Trim(s, "0123456789.") != "" || strings.Count(s, ".") > 1 {
		return 0, false
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || decimalToken(x) != s {
		return 0, false
	}
	return x, true
}

// decimal writes a figure for a message: thousands separated, at most
// three decimals (1,024; 74.5; 0.25); a figure other than 0 that three
// decimals would write as 0 in full (1e-300), so that a message never
// says that a figure it refuses is 0.
func decimal(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) || x != 0 && math.Abs(x) < 0.0005 {
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	s := strconv.FormatFloat(x, 'f', -1, 64)
	if r := math.Round(x*1000) / 1000; r != x && math.Abs(x) < 1e15 {
		s = strconv.FormatFloat(r, 'f', -1, 64)
	}
	whole, frac, _ := strings.Cut(s, ".")
	neg := strings.HasPrefix(whole, "-")
	whole = strings.TrimPrefix(whole, "-")
	for i := len(whole) - 3; i > 0; i -= 3 {
		whole = whole[:i] + "," + whole[i:]
	}
	if neg {
		whole = "-" + whole
	}
	if frac != "" {
		return whole + "." + frac
	}
	return whole
}

// clipText shortens a value for a message to about 40 bytes, at a rune
// boundary.
func clipText(s string) string {
	if len(s) <= 40 {
		return s
	}
	cut := 40
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
