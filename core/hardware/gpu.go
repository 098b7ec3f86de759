package hardware

import (
	"errors"
	"fmt"
	"strings"
)

// GPU is one accelerator profile. All rates are theoretical peaks; the cost
// models apply efficiency factors on top.
type GPU struct {
	// ID is a stable slug for URLs and saved scenarios, e.g. "h100-sxm".
	ID string
	// Name is the human-readable part name.
	Name string
	// MemoryBytes is device memory capacity in bytes (GB = 1e9).
	MemoryBytes int64
	// MemBandwidth is peak device-memory bandwidth in bytes per second.
	MemBandwidth float64
	// PeakBF16 is dense BF16/FP16 tensor throughput in FLOP/s.
	PeakBF16 float64
	// PeakFP8 is dense FP8 tensor throughput in FLOP/s, 0 on parts without
	// FP8 tensor cores.
	PeakFP8 float64
	// ScaleUpBW is GPU-to-GPU link bandwidth (NVLink) per direction in
	// bytes per second, 0 when the part has none.
	ScaleUpBW float64
	// HostLinkBW is theoretical GPU-to-host bandwidth (PCIe) per direction
	// in bytes per second.
	HostLinkBW float64
	// NVLinkDomain is how many GPUs the scale-up fabric links all to all:
	// 8 on an HGX board with NVSwitch, 2 for a bridged pair, 0 without
	// NVLink. Engines enable their custom all-reduce only within it.
	NVLinkDomain int
	// Eff turns the peaks above into achieved rates (docs/SOURCES.md#efficiency-factors).
	// Every profile sets it; a part without measurements of its own carries
	// a sibling's factors, and its entry in GPUs says which.
	Eff Efficiency
	// NCCL is the part's NCCL all-reduce (docs/SOURCES.md#allreduce-model): measured where
	// vidur profiled the part, otherwise derived from its links.
	NCCL AllReduceFigures
	// Sources are the citation tags behind the figures (docs/SOURCES.md); see Sources().
	Sources []string
}

// AllReduceFigures are one part's NCCL all-reduce figures, from which
// DefaultAllReduce builds the AllReduce of a tensor-parallel group.
type AllReduceFigures struct {
	// Latency is α in seconds.
	Latency float64
	// BusBW is the bus bandwidth of a group of up to 4 GPUs, BusBW8 of 8,
	// in bytes per second.
	BusBW, BusBW8 float64
}

// Ridge returns the roofline ridge point in FLOP per byte: dense BF16 peak
// over memory bandwidth. A BF16 weight GEMM over B tokens does about B FLOP
// per byte, so the ridge is also roughly the batch at which such a GEMM
// turns compute-bound.
func (g GPU) Ridge() float64 {
	if g.MemBandwidth == 0 {
		return 0
	}
	return g.PeakBF16 / g.MemBandwidth
}

// Unit multipliers, so profiles read like the datasheets they come from.
const (
	gb     = 1e9  // bytes
	gbps   = 1e9  // bytes per second
	tbps   = 1e12 // bytes per second
	tflops = 1e12 // FLOP per second
)

// Host links, per direction (docs/SOURCES.md#gpu-profile-notes). The same figure is used
// for every GPU on a given PCIe generation so that comparisons between
// profiles are not skewed by how each datasheet rounds.
const (
	// pcieGen4x16 is PCIe Gen4 x16 per direction [FUD-A100]. The L40S sheet's
	// "64 GB/s bidir" is the raw rate before encoding overhead.
	pcieGen4x16 = 31.5 * gbps
	// pcieGen5x16 is four times the 15.76 GB/s of a Gen5 x4 link, rounded as
	// in §2.2 [HT-PM1743]. The H100 sheet's "128 GB/s bidir" is the raw rate.
	pcieGen5x16 = 63 * gbps
)

// Scale-up links, per direction: NVLink figures are quoted bidirectional
// and halved here (docs/SOURCES.md#gpu-profile-notes).
const (
	nvlink3 = 600 * gbps / 2  // A100 SXM, 12 links [KLK-A100] [FUD-A100]
	nvlink4 = 900 * gbps / 2  // H100/H200 SXM, 18 links [HPC-H100] [MLP-LENOVO]
	nvlink5 = 1800 * gbps / 2 // B200, 18 links [KLK-B200]
)

// linkBus is the all-reduce bus bandwidth of a part without a measurement
// of its own: its link bandwidth times the fraction a measured part
// reaches. It multiplies in float64, as the profiles always have.
func linkBus(link, fraction float64) float64 { return link * fraction }

// GPUs returns every GPU profile in a stable order: by generation, then by
// variant. Each call returns fresh values, so callers may modify them.
func GPUs() []GPU {
	return []GPU{
		{
			ID:           "a100-40gb-sxm",
			Name:         "NVIDIA A100 40GB SXM4",
			MemoryBytes:  40 * gb,      // HBM2 [KLK-A100] [UPB-A100]
			MemBandwidth: 1.555 * tbps, // [KLK-A100] [UPB-A100]
			PeakBF16:     312 * tflops, // dense; 624 is the sparse figure [KLK-A100]
			PeakFP8:      0,            // Ampere has no FP8 tensor cores [TC-A100]
			ScaleUpBW:    nvlink3,      // 600 GB/s bidir [KLK-A100] [FUD-A100]
			HostLinkBW:   pcieGen4x16,  // [FUD-A100]
			NVLinkDomain: 8,            // HGX A100, NVSwitch [FUD-A100]
			Eff:          Efficiency{HBM: hbmAmpere, MFU: mfuAmpere, KernelFixed: kernelFixed},
			NCCL:         AllReduceFigures{Latency: allReduceLatencyNCCLA100, BusBW: busBWA100x4, BusBW8: busBWA100x8}, // [VIDUR-NET]
			Sources:      []string{"KLK-A100", "UPB-A100", "FUD-A100", "TC-A100"},
		},
		{
			ID:           "a100-80gb-sxm",
			Name:         "NVIDIA A100 80GB SXM4",
			MemoryBytes:  80 * gb,      // HBM2e [KLK-A100] [TC-A100]
			MemBandwidth: 2.039 * tbps, // [KLK-A100] [TC-A100]
			PeakBF16:     312 * tflops, // dense [KLK-A100]
			PeakFP8:      0,            // no FP8 [TC-A100]
			ScaleUpBW:    nvlink3,      // [KLK-A100]
			HostLinkBW:   pcieGen4x16,  // PCIe Gen4 x16 [FUD-A100]
			NVLinkDomain: 8,            // HGX A100, NVSwitch [FUD-A100]
			Eff:          Efficiency{HBM: hbmAmpere, MFU: mfuAmpere, KernelFixed: kernelFixed},
			NCCL:         AllReduceFigures{Latency: allReduceLatencyNCCLA100, BusBW: busBWA100x4, BusBW8: busBWA100x8}, // [VIDUR-NET]
			Sources:      []string{"KLK-A100", "TC-A100", "FUD-A100"},
		},
		{
			ID:          "h100-sxm",
			Name:        "NVIDIA H100 SXM5 80GB",
			MemoryBytes: 80 * gb, // HBM3 [HPC-H100]
			// NVIDIA's table says 3,350 GB/s; some aggregators list 3.0 TB/s
			// (docs/SOURCES.md#gpu-profile-notes), which is not used.
			MemBandwidth: 3.35 * tbps,
			PeakBF16:     989.4 * tflops, // dense = half the sparse 1,979 [HPC-H100] [KLK-H100]
			PeakFP8:      1979 * tflops,  // dense [HPC-H100]
			ScaleUpBW:    nvlink4,        // NVLink4, 900 GB/s bidir [HPC-H100] [KLK-H100]
			HostLinkBW:   pcieGen5x16,    // PCIe Gen5 x16 [HPC-H100] [HT-PM1743]
			NVLinkDomain: 8,              // HGX H100, NVSwitch [MLP-LENOVO]
			Eff:          Efficiency{HBM: hbmHopper, MFU: mfuHopper, MFUFP8: mfuFP8Hopper, KernelFixed: kernelFixed},
			NCCL:         AllReduceFigures{Latency: allReduceLatencyNCCLH100, BusBW: busBWH100x4, BusBW8: busBWH100x8}, // [VIDUR-NET]
			Sources:      []string{"HPC-H100", "KLK-H100", "HT-PM1743"},
		},
		{
			ID:           "h100-pcie",
			Name:         "NVIDIA H100 PCIe 80GB",
			MemoryBytes:  80 * gb,      // HBM2e [HPC-H100]
			MemBandwidth: 2.0 * tbps,   // [HPC-H100]; product brief: ">2,000 GB/s" [H100PCIE-PB]
			PeakBF16:     756 * tflops, // dense; 1,513 sparse [HPC-H100]
			PeakFP8:      1513 * tflops,
			// "NVLink bridge 600 GB/s" [HPC-H100], taken as bidirectional like
			// every NVLink marketing figure. It pairs cards; it is not a switch.
			ScaleUpBW:    600 * gbps / 2,
			HostLinkBW:   pcieGen5x16, // [HPC-H100] [HT-PM1743]
			NVLinkDomain: 2,           // the bridge pairs two cards [HPC-H100]
			// No measurement of this part: the H100 SXM factors, as §6.7
			// gives them for Hopper.
			Eff: Efficiency{HBM: hbmHopper, MFU: mfuHopper, MFUFP8: mfuFP8Hopper, KernelFixed: kernelFixed},
			// The bridge only pairs two cards, so collectives are modelled
			// over PCIe at η 0.80, with the A100's NCCL latency.
			NCCL:    AllReduceFigures{Latency: allReduceLatencyNCCLA100, BusBW: linkBus(pcieGen5x16, pcieEfficiency), BusBW8: linkBus(pcieGen5x16, pcieEfficiency)},
			Sources: []string{"HPC-H100", "H100PCIE-PB", "HT-PM1743"},
		},
		{
			ID:           "h200-sxm",
			Name:         "NVIDIA H200 SXM 141GB",
			MemoryBytes:  141 * gb,   // HBM3e [LZW-H200] [GEEK-H200]
			MemBandwidth: 4.8 * tbps, // [LZW-H200]
			// Same GH100 compute as the H100 SXM; only memory changes.
			PeakBF16:     989 * tflops,  // dense [LZW-H200]
			PeakFP8:      1979 * tflops, // dense [LZW-H200]
			ScaleUpBW:    nvlink4,       // "18x 4th Gen NVLink, 900GB/s" [MLP-LENOVO]
			HostLinkBW:   pcieGen5x16,   // "PCIe Gen5 x16" [MLP-LENOVO] [HT-PM1743]
			NVLinkDomain: 8,             // HGX H200, NVSwitch [MLP-LENOVO]
			// The H100 SXM's factors and NCCL figures: same GH100 compute
			// and the same NVLink4 switch fabric [MLP-LENOVO].
			Eff:     Efficiency{HBM: hbmHopper, MFU: mfuHopper, MFUFP8: mfuFP8Hopper, KernelFixed: kernelFixed},
			NCCL:    AllReduceFigures{Latency: allReduceLatencyNCCLH100, BusBW: busBWH100x4, BusBW8: busBWH100x8},
			Sources: []string{"LZW-H200", "GEEK-H200", "MLP-LENOVO", "HT-PM1743"},
		},
		{
			ID:   "b200",
			Name: "NVIDIA B200 (HGX, 1000 W)",
			// Marketed at 192 GB, listed at 180 GB, 179 GB per nvidia-smi;
			// the per-GPU table's 180 GB is taken [VERDA] [VULTR-B200].
			MemoryBytes: 180 * gb,
			// 8 TB/s per NVIDIA [KLK-B200] [VULTR-B200]; [VERDA] says 7.7.
			MemBandwidth: 8 * tbps,
			PeakBF16:     2250 * tflops, // dense at 1,000 W [KLK-B200] [VERDA]
			PeakFP8:      4500 * tflops, // dense [KLK-B200]
			ScaleUpBW:    nvlink5,       // NVLink5, 1.8 TB/s bidir [KLK-B200] [VULTR-B200]
			// The part supports PCIe Gen6, but HGX hosts are Gen5 in practice
			// (docs/SOURCES.md#gpu-profile-notes), so the host link is modelled as Gen5.
			HostLinkBW:   pcieGen5x16, // [KLK-B200] [HT-PM1743]
			NVLinkDomain: 8,           // HGX B200, NVSwitch [VULTR-B200]
			// No measurement of this part: the Hopper factors of §6.7 (and
			// 92% HBM on GB200 [AZ-GB200]); collectives at the fraction of
			// NVLink the 8×H100 measurement reaches, with its latency.
			Eff:     Efficiency{HBM: hbmHopper, MFU: mfuHopper, MFUFP8: mfuFP8Hopper, KernelFixed: kernelFixed},
			NCCL:    AllReduceFigures{Latency: allReduceLatencyNCCLH100, BusBW: linkBus(nvlink5, nvlinkBusFraction), BusBW8: linkBus(nvlink5, nvlinkBusFraction)},
			Sources: []string{"KLK-B200", "VERDA", "VULTR-B200", "HT-PM1743"},
		},
		{
			ID:           "l4",
			Name:         "NVIDIA L4",
			MemoryBytes:  24 * gb,        // GDDR6 [GROK-L4] [SC-L4]
			MemBandwidth: 0.300 * tbps,   // [GROK-L4] [SC-L4] [FPS-L4]
			PeakBF16:     121 * tflops,   // dense; the datasheet's 242 is sparse [GROK-L4]
			PeakFP8:      242.5 * tflops, // dense [GROK-L4]
			ScaleUpBW:    0,              // no NVLink
			HostLinkBW:   pcieGen4x16,    // PCIe Gen4 x16 [GROK-L4] [FUD-A100]
			// Ada: the L40S FP8 factor [TRT-PERF]; no HBM/BF16 measurement,
			// so the A100 factors stand in. No NVLink: collectives over PCIe
			// at η 0.80 [NVBW-42] with the A100's NCCL latency.
			Eff:     Efficiency{HBM: hbmAmpere, MFU: mfuAmpere, MFUFP8: mfuFP8Ada, KernelFixed: kernelFixed},
			NCCL:    AllReduceFigures{Latency: allReduceLatencyNCCLA100, BusBW: linkBus(pcieGen4x16, pcieEfficiency), BusBW8: linkBus(pcieGen4x16, pcieEfficiency)},
			Sources: []string{"GROK-L4", "SC-L4", "FPS-L4", "FUD-A100"},
		},
		{
			ID:           "l40s",
			Name:         "NVIDIA L40S",
			MemoryBytes:  48 * gb,         // GDDR6 with ECC [MULLET-L40S] [OMEGA-L40S]
			MemBandwidth: 0.864 * tbps,    // [MULLET-L40S]
			PeakBF16:     362.05 * tflops, // dense; 733 is sparse [MULLET-L40S]
			PeakFP8:      733 * tflops,    // dense [MULLET-L40S]
			ScaleUpBW:    0,               // no NVLink
			HostLinkBW:   pcieGen4x16,     // PCIe Gen4 x16 [OMEGA-L40S] [FUD-A100]
			// Ada: the L40S FP8 factor [TRT-PERF]; no HBM/BF16 measurement,
			// so the A100 factors stand in. No NVLink: collectives over PCIe
			// at η 0.80 [NVBW-42] with the A100's NCCL latency.
			Eff:     Efficiency{HBM: hbmAmpere, MFU: mfuAmpere, MFUFP8: mfuFP8Ada, KernelFixed: kernelFixed},
			NCCL:    AllReduceFigures{Latency: allReduceLatencyNCCLA100, BusBW: linkBus(pcieGen4x16, pcieEfficiency), BusBW8: linkBus(pcieGen4x16, pcieEfficiency)},
			Sources: []string{"MULLET-L40S", "OMEGA-L40S", "FUD-A100"},
		},
	}
}

// checkCostFigures reports a profile that lacks the efficiency or
// all-reduce figures the step-time model needs, so that a new GPU cannot
// silently run on zeros (or on another part's factors).
func (g GPU) checkCostFigures() error {
	e, n := g.Eff, g.NCCL
	switch {
	case !(e.HBM > 0 && e.HBM <= 1 && e.MFU > 0 && e.MFU <= 1 && e.KernelFixed > 0):
		return fmt.Errorf("hardware: GPU %q has efficiency factors %+v, want 0 < HBM, MFU ≤ 1 and KernelFixed > 0 (docs/SOURCES.md#efficiency-factors)", g.ID, e)
	case g.PeakFP8 > 0 && !(e.MFUFP8 > 0 && e.MFUFP8 <= 1):
		return fmt.Errorf("hardware: GPU %q has FP8 tensor cores but MFUFP8 = %g, want 0 < MFUFP8 ≤ 1", g.ID, e.MFUFP8)
	case !(n.Latency > 0 && n.BusBW > 0 && n.BusBW8 > 0):
		return fmt.Errorf("hardware: GPU %q has NCCL figures %+v, want latency and both bus bandwidths > 0 (docs/SOURCES.md#allreduce-model)", g.ID, n)
	}
	return nil
}

// ErrUnknownProfile is wrapped by GPUByID and ModelByID when no profile has
// the requested id.
var ErrUnknownProfile = errors.New("hardware: unknown profile id")

// GPUByID returns the GPU profile with the given id. The error for an
// unknown id lists the valid ones, so a typo in a scenario file is easy to
// fix.
func GPUByID(id string) (GPU, error) {
	all := append(GPUs(), registeredCustomGPUs()...) // a reader's own GPUs (custom_gpu.go) too
	ids := make([]string, len(all))
	for i, g := range all {
		if g.ID == id {
			return g, nil
		}
		ids[i] = g.ID
	}
	return GPU{}, fmt.Errorf("%w: GPU %q; valid ids: %s", ErrUnknownProfile, id, strings.Join(ids, ", "))
}

// MustGPU is GPUByID for an id written in the program's own text: it panics,
// naming the id, when no profile has it. A renamed profile is then caught by
// the first test that runs the code, instead of silently pricing a zero GPU.
// Use GPUByID for ids that come from users.
func MustGPU(id string) GPU {
	g, err := GPUByID(id)
	if err != nil {
		panic(fmt.Sprintf("hardware.MustGPU(%q): %v", id, err))
	}
	return g
}
