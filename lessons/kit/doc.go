// Package kit holds what several lessons share, so that no lesson imports
// another: the knobs every serving lesson offers (GPUParam, ModelParam,
// GraphParam, WeightParam, TPParam, SeedParam, the cost and SLO knobs); a
// priced vLLM-style engine on the chosen GPU and model (NewEngine,
// NewEngineAt, NewTPEngine: core/hardware's step-time model behind
// core/scheduler, with vLLM's start-up sizing of the KV pool and its batch
// defaults per GPU, VLLMBatch); the feasibility check every lesson holds
// its knobs to (CheckFit, TPRelation); the work a simulation counts against
// its lesson's bound (StepsWork, RequestWork, WorkBound); the cost of a run
// in dollars and energy (CostOf, docs/SOURCES.md#cost-split); a serving
// run's latencies as engines' benchmarks report them, means and end-to-end
// latency beside a lesson's percentiles (LatencyReport); SLO searches'
// knobs and texts; and number, name and scene helpers for narrations
// (Comma, MsText, Mention, MainScene, ClaimsTable). Its constants come from
// core/hardware's cited profiles; the rules are stated beside each helper.
//
// A helper belongs here when two lessons or more use it, or when it states
// a rule the kit owns (how a shared knob is read, how work and cost are
// counted); what one lesson alone needs stays in its own package.
package kit
