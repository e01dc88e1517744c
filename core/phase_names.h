#pragma once
// The names of the timed phases a strategy reports in StepResult::phase_ns (core/strategy.h),
// shared by the strategies that write them and the reports and tests that read them, so a
// misspelt phase is a compile error rather than a silently empty column. Wall time in ns of the
// host thread that drives the step; a phase a strategy does not have is simply absent. `cpu`,
// `accelerator` and `transfer` are also resource names of the overlap model (core/overlap.h).
namespace hb::phase {

// Host <-> accelerator copies the host waited for (the link).
inline constexpr const char* kTransfer = "transfer";
// Choosing which tokens or pages to fetch (speculation, page scores, top-k) and reading the
// choice back, before any KV is gathered.
inline constexpr const char* kSelect = "select";
// Work on the host threads (attention, gather of selected KV rows into staging).
inline constexpr const char* kCpu = "cpu";
// HybridGen's CPU side, split: logits over the host tokens, their top-k, the gather of the
// selected V rows; cpu.attention is the whole CPU side when it attends exactly (merge=lse).
inline constexpr const char* kCpuScore = "cpu.score";
inline constexpr const char* kCpuTopk = "cpu.topk";
inline constexpr const char* kCpuGather = "cpu.gather";
inline constexpr const char* kCpuAttention = "cpu.attention";
// Accelerator work from enqueue until the host has its result (kernels, their own copies).
inline constexpr const char* kAccelerator = "accelerator";
// HybridGen: moving pages and tokens between the tiers (scheduler, mapping pass, new token).
inline constexpr const char* kMigrate = "migrate";
// HybridGen: the host waiting for the accelerator's partial after its own CPU side.
inline constexpr const char* kWait = "wait";
// HybridGen: the softmax merge of the CPU side's shipped logits with the accelerator's partial.
inline constexpr const char* kMerge = "merge";
// HybridGen: attended positions, page hit counts and traffic, overlapped with the merge.
inline constexpr const char* kBookkeeping = "bookkeeping";
// HybridGen: host wall time blocked in each synchronisation (q down, final output).
inline constexpr const char* kSyncQ = "sync.q";
inline constexpr const char* kSyncFinal = "sync.final";

// Layer scope (bench/layer_scope.h): the host waiting for the layer's GEMMs left after
// the last micro-batch's attention (its output projection and FFN).
inline constexpr const char* kLayerTail = "layer.tail";

}  // namespace hb::phase
