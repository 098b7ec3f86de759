package cluster

import (
	"maps"
	"slices"

	"github.com/inferlab/inferlab/core/hardware"
)

// sources resolves the tags this package cites that core/hardware does not:
// the link and tier measurements and Dynamo's design documents, each an
// entry of docs/SOURCES.md under its tag.
// Cite looks in core/hardware first.
var sources = map[string]hardware.Source{
	"NCCL-1264":    {Ref: "https://github.com/NVIDIA/nccl/issues/1264", Note: "HGX H100 p2pBandwidthLatencyTest: 749 GB/s bidirectional, ~380 GB/s unidirectional over NVLink4"},
	"CX7":          {Ref: "https://docs.nvidia.com/networking/display/ConnectX7VPI/Introduction", Note: "ConnectX-7: 400 Gb/s NDR InfiniBand per port"},
	"MOON":         {Ref: "kvcache-ai/Mooncake, README.md (Transfer Engine performance section)", Note: "40 GB KV (Llama3-70B, 128k tokens): 87 GB/s on 4×200 Gb/s, 190 GB/s on 8×400 Gb/s RoCE"},
	"NVBW-24":      {Ref: "https://github.com/NVIDIA/nvbandwidth/issues/24", Note: "H100 cluster nvbandwidth: H2D (SM) 35.2 GB/s, D2H (SM) 52.8 GB/s over PCIe Gen5"},
	"NIXL-2276":    {Ref: "https://github.com/ai-dynamo/nixl/pull/2276", Note: "GCP GPUDirect-TCPXO NIXL plugin, NIXLBench VRAM↔VRAM: 22.96 / 23.58 GB/s READ/WRITE at 64 MiB; 4 KB blocks ≈ 600 µs"},
	"STH-7450":     {Ref: "https://servethehome.com/?p=59563", Note: "Micron 7450 NVMe Gen4: ~6.8 GB/s sequential read"},
	"CB-PM1743":    {Ref: "https://computerbase.de/2021-12/samsung-pm1743-pcie-5.0-ssd-mit-13-gb-s-und-2.5-mio.-iops-fuer-server", Note: "Samsung PM1743 NVMe Gen5: 13,000 MB/s sequential read, 2.5M random-read IOPS"},
	"M9200-DS":     {Ref: "Micron 9200 NVMe datasheet, reproduced at https://vdocument.in/9200-nvme-ssds-2-steady-state-as-defined-by-snia-solid-state-storage-performance.html", Note: "QD1 4K random read 92–150 µs typical"},
	"S3B":          {Ref: "dvassallo/s3-benchmark, README.md", Note: "S3 from EC2: ~93 MB/s per connection, 8,003 MB/s on c5n.18xlarge (100 Gb/s), p90 TTFB ≈ 20 ms"},
	"AWS-S3-RANGE": {Ref: "https://docs.aws.amazon.com/whitepapers/latest/s3-optimizing-performance-best-practices/use-byte-range-fetches.html", Note: "parallel byte-range GETs of 8–16 MB to reach high throughput"},
	"DYN-ARCH":     {Ref: "ai-dynamo/dynamo, docs/architecture/architecture.md", Note: "disaggregated serving +30% throughput/GPU on one node, >2× on two (R1-Distill-Llama-70B FP8, H100, vLLM, ISL 3K / OSL 150)"},
	// Dynamo's design documents (docs/SOURCES.md#dyn-disagg, #dyn-kvbm).
	"DYN-DISAGG": {Ref: "ai-dynamo/dynamo, docs/architecture/disagg_serving.md and docs/router/kv_cache_routing.md", Note: "prefill → NIXL transfer → decode flow; conditional disaggregation: remote prefill iff prefill length − prefix hit > max_local_prefill_length (1000) and prefill queue < max_prefill_queue_size (2)"},
	"DYN-KVBM":   {Ref: "ai-dynamo/dynamo, docs/kvbm/kvbm_design.md and docs/kvbm/kvbm_guide.md", Note: "KVBM tiers G1 GPU, G2 host, G3 disk, G4 remote; disk offload only for blocks of frequency ≥ 2 (doubles on each hit, decays by 1)"},
}

// Cite resolves a citation tag: core/hardware's (hardware.Cite) or one of
// this package's. The second result is false for an unknown tag.
func Cite(tag string) (hardware.Source, bool) { return hardware.CiteWith(sources, tag) }

// SourceTags returns this package's own tags in sorted order.
func SourceTags() []string { return slices.Sorted(maps.Keys(sources)) }
