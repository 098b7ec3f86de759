// Package router models how a cluster front end picks the worker for a
// request: what it knows about each worker's KV cache, and how it weighs that
// against load.
//
// Two families of state and policy, each following one engine (its source,
// with the commit read, in docs/SOURCES.md). SGLang's per-worker radix
// cache, which CacheAware's tree approximates, is core/radixcache.
//
//   - Index is NVIDIA Dynamo's KV indexer (lib/kv-router, indexer.rs and
//     docs/router/kv_cache_routing.md; docs/SOURCES.md#dynamo-kv-router): per worker, the set of
//     full blocks it caches, fed by KV events (stored, removed, cleared) and
//     queried for each worker's count of leading blocks a request shares.
//     Blocks are keyed by vLLM-style chain hashes (BlockHashes, the same values
//     core/allocator publishes), so a block's key already encodes its prefix.
//     ApproxIndex is Dynamo's no-events mode (ApproxKvIndexer): the router
//     records its own decisions and forgets them after a TTL.
//   - Policies choose a worker: RoundRobin, Random, LeastLoaded, KVAware
//     (Dynamo's DefaultWorkerSelector cost, docs/SOURCES.md#dynamo-kv-router: logit =
//     overlap_score_weight × prefill blocks + decode blocks, lower wins, with
//     KvRouterConfig defaults) and CacheAware (the SGLang router,
//     sgl-router/src/policies/cache_aware.rs and tree.rs, docs/SOURCES.md#sglang-router, with
//     CacheAwareConfig::default() from Rust; the CLI defaults are documented
//     beside them). SGLang's router matches raw characters; here it matches
//     token ids.
//
// ActiveLoad is Dynamo's router-side load tracking (docs/SOURCES.md#dynamo-kv-router): active
// prefill tokens until the first token, and unique active blocks until the
// request ends.
//
// Every random choice draws from a seeded math/rand/v2 PCG, and no result
// depends on Go's map iteration order: the same inputs and seed give the same
// decisions. Check methods state the router invariants of
// docs/ARCHITECTURE.md#router-invariants.
package router
