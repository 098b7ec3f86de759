package allocator

import (
	"encoding/binary"
	"hash/fnv"
)

// rootHash is the parent of a sequence's first block (vLLM's NONE_HASH, a
// per-process random seed there; fixed here so runs are reproducible).
const rootHash uint64 = 0x1f2e3d4c5b6a7988

// chainHash fingerprints a full block together with everything before it:
// H(parent hash, the block's token ids, extra key). vLLM uses SHA-256 over a
// pickled tuple; FNV-1a is enough for a simulator and is the same natively
// and in WebAssembly.
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

// BlockHashes extends hashes, the chain hashes of the first len(hashes) full
// blocks of ids, to every full block of ids; a trailing partial block gets
// none. It is vLLM v1's request.block_hashes: computed once for a request
// and extended as its tokens complete blocks, so a request waiting at the
// head of the queue is not rehashed at every step.
func BlockHashes(hashes []uint64, ids []int, blockSize int, extra string) []uint64 {
	if blockSize <= 0 {
		return hashes
	}
	parent := rootHash
	if len(hashes) > 0 {
		parent = hashes[len(hashes)-1]
	}
	for i := len(hashes); (i+1)*blockSize <= len(ids); i++ {
		h := chainHash(parent, ids[i*blockSize:(i+1)*blockSize], extra)
		hashes = append(hashes, h)
		parent = h
	}
	return hashes
}
