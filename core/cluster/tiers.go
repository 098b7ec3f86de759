package cluster

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Link is a path KV bytes take between two places: GPU to GPU (NVLink, an
// RDMA network), GPU to host memory (PCIe), a drive or object storage to
// the GPU. Moving B bytes over it takes
//
//	T_xfer = α + B / (BW · η)
//
// (docs/SOURCES.md#kv-transfer-model): a fixed start-up cost α (software
// latency, a drive's first-byte latency, object storage's time to first
// byte) plus the bytes at the nominal bandwidth BW times the efficiency η
// measured on real systems. Where the sources give both the nominal and
// the measured rate, η is their ratio; where it gives only a measured or
// datasheet rate, that rate is BW and η is 1.
type Link struct {
	ID   string // stable slug, e.g. "ib-ndr"
	Name string
	// Alpha is α, the fixed start-up time in seconds.
	Alpha float64
	// Bandwidth is the nominal rate in bytes per second, per direction.
	Bandwidth float64
	// Eff is η, the share of Bandwidth a transfer achieves (0 < η ≤ 1).
	Eff float64
	// Note says in a few words what was measured, for a tooltip.
	Note string
	// Sources are citation tags (docs/SOURCES.md); Cite resolves each.
	Sources []string
}

// Effective is BW · η, the rate a large transfer achieves.
func (l Link) Effective() float64 { return l.Bandwidth * l.Eff }

// Transfer is α + bytes / (BW · η), in seconds. Zero bytes cost nothing:
// no transfer is started.
func (l Link) Transfer(bytes float64) float64 {
	if bytes <= 0 {
		return 0
	}
	return l.Alpha + bytes/l.Effective()
}

// Validate checks that the link can price a transfer.
func (l Link) Validate() error {
	switch {
	case !(l.Bandwidth > 0) || math.IsInf(l.Bandwidth, 0):
		return fmt.Errorf("cluster: link %q has bandwidth %g B/s, want > 0", l.ID, l.Bandwidth)
	case !(l.Eff > 0 && l.Eff <= 1):
		return fmt.Errorf("cluster: link %q has efficiency %g, want 0 < η ≤ 1", l.ID, l.Eff)
	case !(l.Alpha >= 0) || math.IsInf(l.Alpha, 0):
		return fmt.Errorf("cluster: link %q has α = %g s, want ≥ 0", l.ID, l.Alpha)
	}
	return nil
}

// Units, so the figures below read like their sources.
const (
	us   = 1e-6
	msec = 1e-3
	gbs  = 1e9 // bytes per second
	mbs  = 1e6
	gbit = 1e9 / 8 // one Gb/s in bytes per second
)

// Nominal rates the measured ones are a share of, per direction
// (docs/SOURCES.md#gpu-profile-notes).
const (
	nvlink4PerDir = 900 * gbs / 2 // 900 GB/s bidirectional [NCCL-1264]
	ndrPort       = 400 * gbit    // 400 Gb/s = 50 GB/s per port per direction [CX7]
	pcie4x16      = 31.5 * gbs    // per direction [FUD-A100]
	pcie5x16      = 63 * gbs      // 4 × 15.76 GB/s, rounded as in §2.2 [HT-PM1743]
	s3Instance    = 100 * gbit    // c5n.18xlarge's 100 Gb/s NIC [S3B]
)

// The links. Each figure comes from the tags in its Sources; the comment
// says what was measured (docs/SOURCES.md#kv-transfer-model).
var links = []Link{
	// GPU ↔ GPU, §2.1 and §6.6.
	{ID: "nvlink4", Name: "NVLink4 (same node, H100/H200)", Alpha: 5 * us, Bandwidth: nvlink4PerDir, Eff: 348 * gbs / nvlink4PerDir,
		Note: "NCCL send/recv of 64 MiB between two H100s: 348 GB/s of 450; 2 KB intra-node p2p latency 5 µs", Sources: []string{"VIDUR-NET", "NCCL-1264"}},
	{ID: "rdma-8x400", Name: "RDMA, 8×400 Gb/s NICs (Mooncake)", Alpha: 17 * us, Bandwidth: 8 * ndrPort, Eff: 0.475,
		Note: "Mooncake Transfer Engine moving a 40 GB KV over 8×400 Gb/s RoCE: 190 GB/s (47.5%); α taken from the inter-node NCCL p2p latency", Sources: []string{"MOON", "VIDUR-NET"}},
	{ID: "ib-ndr", Name: "InfiniBand NDR, one 400 Gb/s NIC", Alpha: 17 * us, Bandwidth: ndrPort, Eff: 35.9 * gbs / ndrPort,
		Note: "NCCL send/recv of 64 MiB between two H100 nodes: 35.9 GB/s of 50 (72%); 2 KB inter-node latency 17 µs", Sources: []string{"VIDUR-NET", "CX7", "AZ-NHC"}},
	{ID: "tcpxo", Name: "GPUDirect-TCPXO (GCP A3-Mega, NIXL plugin)", Alpha: 600 * us, Bandwidth: 23.58 * gbs, Eff: 1,
		Note: "NIXLBench VRAM→VRAM WRITE at 64 MiB: 23.58 GB/s; 4 KB blocks ≈ 600 µs on average", Sources: []string{"NIXL-2276"}},

	// GPU ↔ host, §2.2 and §6.6. DMA start-up is microseconds (§2.3); §6.6
	// gives no α, so none is charged.
	{ID: "pcie4", Name: "PCIe Gen4 x16 (host DRAM ↔ GPU)", Bandwidth: pcie4x16, Eff: 25 * gbs / pcie4x16,
		Note: "A100 H2D over PCIe Gen4 x16: 25.13 GB/s of 31.5; Azure NDv4 health threshold 24 GB/s", Sources: []string{"NVBW-42", "AZ-NHC", "FUD-A100"}},
	{ID: "pcie5", Name: "PCIe Gen5 x16 (host DRAM ↔ GPU)", Bandwidth: pcie5x16, Eff: 52 * gbs / pcie5x16,
		Note: "H100 D2H 52.8 GB/s; Azure NDv5 health threshold 52 GB/s, of about 63", Sources: []string{"NVBW-24", "AZ-NHC", "HT-PM1743"}},

	// Local NVMe, §2.3 and §6.6: datasheet sequential reads, one drive.
	{ID: "nvme4", Name: "NVMe Gen4 SSD (Micron 7450)", Alpha: 0.1 * msec, Bandwidth: 6.8 * gbs, Eff: 1,
		Note: "~6.8 GB/s sequential read per drive; QD1 4K read ~0.1 ms", Sources: []string{"STH-7450", "M9200-DS"}},
	{ID: "nvme5", Name: "NVMe Gen5 SSD (Samsung PM1743)", Alpha: 0.1 * msec, Bandwidth: 13 * gbs, Eff: 1,
		Note: "13,000 MB/s sequential read per drive; ~0.1 ms NAND latency", Sources: []string{"CB-PM1743", "M9200-DS"}},

	// Object storage, §2.3 and §6.6.
	{ID: "s3-stream", Name: "S3 Standard, one stream", Alpha: 20 * msec, Bandwidth: 93 * mbs, Eff: 1,
		Note: "~93 MB/s per connection; p90 time to first byte ≈ 20 ms", Sources: []string{"S3B"}},
	{ID: "s3-100g", Name: "S3 Standard, many streams on a 100 Gb/s instance", Alpha: 20 * msec, Bandwidth: s3Instance, Eff: 8003 * mbs / s3Instance,
		Note: "8,003 MB/s on c5n.18xlarge (100 Gb/s NIC) with many parallel ranged GETs; p90 TTFB ≈ 20 ms", Sources: []string{"S3B", "AWS-S3-RANGE"}},
}

// Links returns every link profile in a stable order (GPU↔GPU, host,
// NVMe, object storage). Each call returns fresh values.
func Links() []Link {
	out := make([]Link, len(links))
	copy(out, links)
	for i := range out {
		out[i].Sources = append([]string(nil), links[i].Sources...)
	}
	return out
}

// ErrUnknownLink is wrapped by LinkByID for an id no profile has.
var ErrUnknownLink = errors.New("cluster: unknown link id")

// LinkByID returns the link with the given id.
func LinkByID(id string) (Link, error) {
	var ids []string
	for _, l := range Links() {
		if l.ID == id {
			return l, nil
		}
		ids = append(ids, l.ID)
	}
	return Link{}, fmt.Errorf("%w: %q; valid ids: %s", ErrUnknownLink, id, strings.Join(ids, ", "))
}

// MustLink is LinkByID for an id written in the program's own text: it
// panics, naming the id, when no profile has it (a programming error that
// any test reaching the call catches).
func MustLink(id string) Link {
	l, err := LinkByID(id)
	if err != nil {
		panic(fmt.Sprintf("cluster.MustLink(%q): %v", id, err))
	}
	return l
}

// HostLink is the PCIe link a GPU reaches host DRAM over: Gen5 when its
// theoretical host bandwidth is a Gen5 x16's, else Gen4.
func HostLink(hostLinkBW float64) Link {
	id := "pcie4"
	if hostLinkBW >= pcie5x16 {
		id = "pcie5"
	}
	return MustLink(id)
}

// TierID names a level of Dynamo KVBM's hierarchy (docs/SOURCES.md#dyn-kvbm).
type TierID int

// The tiers, fastest first.
const (
	G1 TierID = iota // GPU HBM: a hit needs no copy
	G2               // pinned host DRAM, over PCIe
	G3               // local NVMe, read into the GPU
	G4               // remote object storage
)

// String is the KVBM name.
func (t TierID) String() string { return [...]string{"G1", "G2", "G3", "G4"}[t] }

// Tier is one level of the KV hierarchy and the link its blocks come back
// to the GPU over. G1's blocks are already where attention reads them, so
// its Link is zero and Fetch is 0.
type Tier struct {
	ID     TierID
	Name   string
	Medium string
	Link   Link
}

// Fetch is the time to bring bytes of KV from this tier into GPU memory,
// blocking (the prefill of the rest of the prompt waits for it): 0 for G1,
// else Link.Transfer(bytes). Per GPU: with tensor parallelism each GPU
// fetches its own shard over its own path.
func (t Tier) Fetch(bytes float64) float64 {
	if t.ID == G1 {
		return 0
	}
	return t.Link.Transfer(bytes)
}

// Tiers builds KVBM's four tiers for a GPU whose host link is hostLinkBW
// (bytes/s, theoretical) with the given NVMe and object-storage links.
func Tiers(hostLinkBW float64, nvme, object Link) []Tier {
	return []Tier{
		{ID: G1, Name: "GPU HBM", Medium: "device pool"},
		{ID: G2, Name: "Host DRAM", Medium: "pinned host pool", Link: HostLink(hostLinkBW)},
		{ID: G3, Name: "Local NVMe", Medium: "disk pool", Link: nvme},
		{ID: G4, Name: "Object storage", Medium: "remote blob store", Link: object},
	}
}

// ExpectedTTFT is the article's formulation 2 (Part 12 §5):
//
//	E[TTFT] = Σ_m P(hit_m) · T_fetch(m) + (1 − Σ_m P(hit_m)) · T_compute
//
// with p[m] and fetch[m] per tier. It fails when a probability is outside
// [0, 1] or they sum past 1.
func ExpectedTTFT(p, fetch []float64, compute float64) (float64, error) {
	if len(p) != len(fetch) {
		return 0, fmt.Errorf("cluster: %d hit probabilities for %d tiers", len(p), len(fetch))
	}
	sum, e := 0.0, 0.0
	for m := range p {
		if !(p[m] >= 0 && p[m] <= 1) {
			return 0, fmt.Errorf("cluster: P(hit) of tier %d is %g, want 0…1", m, p[m])
		}
		sum += p[m]
		e += p[m] * fetch[m]
	}
	if sum > 1+1e-9 {
		return 0, fmt.Errorf("cluster: hit probabilities sum to %g, want ≤ 1", sum)
	}
	return e + max(0, 1-sum)*compute, nil
}

// Crossing is a prefix length at which fetching from a tier and recomputing
// take equal time.
type Crossing struct {
	Tokens int
	// FetchWinsAbove is true when fetching is faster for longer prefixes
	// (α no longer dominates); false when it is faster for shorter ones
	// (the link's bytes per token outrun the GPU's compute per token).
	FetchWinsAbove bool
}

// BreakEven finds where fetch(n) and compute(n) cross for prefix lengths n
// in [1, maxTokens]: it samples a geometric grid of points points and
// bisects each sign change to the token. Both functions are seconds for n
// tokens. An empty result means one of them is faster throughout.
func BreakEven(fetch, compute func(n int) float64, maxTokens, points int) []Crossing {
	if maxTokens < 1 {
		return nil
	}
	points = max(points, 2)
	faster := func(n int) bool { return fetch(n) < compute(n) }
	var grid []int
	ratio := math.Pow(float64(maxTokens), 1/float64(points-1))
	for i, x := 0, 1.0; i < points; i, x = i+1, x*ratio {
		n := min(maxTokens, max(1, int(math.Round(x))))
		if len(grid) == 0 || n > grid[len(grid)-1] {
			grid = append(grid, n)
		}
	}
	if grid[len(grid)-1] != maxTokens {
		grid = append(grid, maxTokens)
	}
	var out []Crossing
	prev := faster(grid[0])
	for i := 1; i < len(grid); i++ {
		cur := faster(grid[i])
		if cur == prev {
			continue
		}
		// Bisect: lo has the old sign, hi the new one.
		lo, hi := grid[i-1], grid[i]
		for hi-lo > 1 {
			mid := (lo + hi) / 2
			if faster(mid) == prev {
				lo = mid
			} else {
				hi = mid
			}
		}
		out = append(out, Crossing{Tokens: hi, FetchWinsAbove: cur})
		prev = cur
	}
	return out
}

// DiskFilter is KVBM's disk offload filter (docs/SOURCES.md#dyn-kvbm), on by
// default to spare SSD endurance: a host block's frequency starts at 1,
// doubles on each cache hit and drops by 1 at each time-decay step (not
// below 0); the block is written to disk only while its frequency is at
// least 2. A block used once is never written.
type DiskFilter struct{ freq int }

// NewDiskFilter returns the filter state of a newly offloaded host block.
func NewDiskFilter() DiskFilter { return DiskFilter{freq: 1} }

// Hit records a cache hit on the block.
func (f *DiskFilter) Hit() { f.freq *= 2 }

// Decay is one time-decay step.
func (f *DiskFilter) Decay() { f.freq = max(0, f.freq-1) }

// Frequency is the block's current frequency.
func (f DiskFilter) Frequency() int { return f.freq }

// Offload reports whether the block may be written to disk now.
func (f DiskFilter) Offload() bool { return f.freq >= 2 }
