package router

import (
	"encoding/binary"
	"hash/fnv"
)

// RootHash is the parent of a sequence's first block (vLLM's NONE_HASH). It
// equals core/allocator's rootHash, so events published by the allocator can
// be applied to an Index unchanged.
const RootHash uint64 = 0x1f2e3d4c5b6a7988

// chainHash fingerprints a full block together with everything before it:
// H(parent hash, the block's token ids, extra key). It is a copy of
// core/allocator's chainHash (FNV-1a over little-endian words); a test in
// package router_test checks the two agree.
func chainHash(parent uint64, ids []int, extra string) uint64 {
	h := fnv.New64a()
	var buf [8]byte
	binary.LittleEndian.PutUint64(buf[:], parent)
	h.Write(buf[:])
	binary.LittleEndian.PutUint64(buf[:], uint64(len(extra)))
	h.Write(buf[:])
	h.Write([]byte(extra))
	for _, id := range ids {
		binary.LittleEndian.PutUint64(buf[:], uint64(id))
		h.Write(buf[:])
	}
	return h.Sum64()
}

// BlockHashes returns the chain hash of every full block of ids (a trailing
// partial block has none, as in vLLM and Dynamo), with extra standing for the
// LoRA name or cache salt. Block i's hash depends on blocks 0..i, so equal
// hashes mean equal prefixes.
func BlockHashes(ids []int, blockSize int, extra string) []uint64 {
	if blockSize <= 0 {
		return nil
	}
	n := len(ids) / blockSize
	out := make([]uint64, n)
	parent := RootHash
	for i := range n {
		parent = chainHash(parent, ids[i*blockSize:(i+1)*blockSize], extra)
		out[i] = parent
	}
	return out
}
