// Package kvhash names a full KV-cache block by its content and everything
// before it: the chain hash that vLLM v1's prefix cache keys blocks by
// (hash_block_tokens and Request.block_hashes in vllm/v1/core/
// kv_cache_utils.py) and that Dynamo's KV router matches requests against
// (its KvCacheStored events carry each block's hash and its parent's). The
// allocator registers blocks under these hashes and the router's indices
// apply its events, so both take them from here: one definition, and events
// published by one are read by the other unchanged.
//
// Block i of a sequence hashes H(parent, the block's token ids, extra),
// where parent is block i−1's hash (Root for the first block) and extra is
// the key that must also match (a tenant's cache salt, a LoRA adapter).
// Equal hashes therefore mean equal prefixes. vLLM uses SHA-256 over a
// pickled tuple and a per-process random NONE_HASH; FNV-1a over
// little-endian words and a fixed Root are enough for a simulator, and are
// the same natively and in WebAssembly, so runs are reproducible.
package kvhash

// Root is the parent of a sequence's first block (vLLM's NONE_HASH).
const Root uint64 = 0x1f2e3d4c5b6a7988

// Chain fingerprints a full block together with everything before it:
// H(parent hash, the block's token ids, extra key). H is 64-bit FNV-1a
// (hash/fnv's New64a) over the parent, the extra key's length, the extra
// key and each id as 8 little-endian bytes, computed inline: a replay of a
// published benchmark hashes millions of blocks, and the hash.Hash64 it
// replaced cost an allocation and a call per word (TestChainIsFNV holds the
// two equal).
func Chain(parent uint64, ids []int, extra string) uint64 {
	h := uint64(fnvOffset)
	h = fnvWord(h, parent)
	h = fnvWord(h, uint64(len(extra)))
	for i := 0; i < len(extra); i++ {
		h = (h ^ uint64(extra[i])) * fnvPrime
	}
	for _, id := range ids {
		h = fnvWord(h, uint64(id))
	}
	return h
}

// FNV-1a's 64-bit parameters (hash/fnv).
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// fnvWord feeds w's 8 little-endian bytes to FNV-1a state h.
func fnvWord(h, w uint64) uint64 {
	for range 8 {
		h = (h ^ (w & 0xff)) * fnvPrime
		w >>= 8
	}
	return h
}

// Extend extends hashes, the chain hashes of the first len(hashes) full
// blocks of ids, to every full block of ids; a trailing partial block gets
// none. It is vLLM v1's request.block_hashes: computed once for a request
// and extended as its tokens complete blocks, so a request waiting at the
// head of the queue is not rehashed at every step. Extend(nil, …) hashes a
// sequence from its start.
func Extend(hashes []uint64, ids []int, blockSize int, extra string) []uint64 {
	if blockSize <= 0 {
		return hashes
	}
	parent := Root
	if len(hashes) > 0 {
		parent = hashes[len(hashes)-1]
	}
	for i := len(hashes); (i+1)*blockSize <= len(ids); i++ {
		h := Chain(parent, ids[i*blockSize:(i+1)*blockSize], extra)
		hashes = append(hashes, h)
		parent = h
	}
	return hashes
}
