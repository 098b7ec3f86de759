package router

import "github.com/inferlab/inferlab/core/kvhash"

// RootHash is the parent of a sequence's first block (vLLM's NONE_HASH):
// core/kvhash's Root, which the allocator's published events chain from
// too, so they can be applied to an Index unchanged.
const RootHash = kvhash.Root

// BlockHashes returns the chain hash of every full block of ids (a trailing
// partial block has none, as in vLLM and Dynamo), with extra standing for the
// LoRA name or cache salt: core/kvhash's Extend from the sequence's start.
// Block i's hash depends on blocks 0..i, so equal hashes mean equal prefixes.
func BlockHashes(ids []int, blockSize int, extra string) []uint64 {
	if blockSize <= 0 {
		return nil
	}
	return kvhash.Extend(make([]uint64, 0, len(ids)/blockSize), ids, blockSize, extra)
}
