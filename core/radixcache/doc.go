// Package radixcache is SGLang's radix cache, the KV cache manager beside
// the paged pool of core/allocator: where vLLM keeps fixed-size blocks
// found by chain hash, SGLang keeps a compressed radix tree of token runs
// (python/sglang/srt/mem_cache/radix_cache.py @ 95769b2;
// docs/SOURCES.md#sglang-radix-cache).
//
// Tree is RadixCache without the KV pool behind it: it counts token slots
// instead of holding their indices. Its keys are token runs, optionally
// whole pages; a lookup (Match, match_prefix) splits the edge it ends in;
// a lock (Lock, inc_lock_ref) walks to the root and makes the path
// unevictable; Evict pops least-recently-used unlocked leaves; Insert
// returns how much of the run was cached already. Serve runs one request
// through the tree as SGLang's scheduler does (match, lock, admit when the
// new tokens fit the free and evictable room, evict, insert, unlock). A
// logical clock, one tick per Match or Insert, stands in for
// time.monotonic, so that runs are reproducible. core/scheduler's Radix
// serves requests over a Tree; a lesson draws one (Walk, Snapshot) and
// narrates its log (Events).
//
// Check states the tree's invariants
// (docs/ARCHITECTURE.md#radix-tree-invariants).
package radixcache
