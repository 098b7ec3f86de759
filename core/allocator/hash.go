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
