#pragma once
// The figures the projection model prices a decode step with, for one platform: accelerator
// (memory, bandwidth, attention efficiency, compute, launch and sync overheads), host links
// per NUMA node, the CPU, and the host memory tiers. Read from the optional "model" member of a
// "hybridbench.platform/1" document (the profile `hybridbench probe --out` writes, memtier/
// profile.h), or from a preset shipped in model/profiles/ (source "preset": no
// measured topology, every value with its public source). Schema: model/README.md.
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/accelerator.h"
#include "core/memory.h"
#include "core/model_presets.h"
#include "core/vocabulary.h"
#include "memtier/profile.h"
#include "model/economics.h"

namespace hb::model {

// Bandwidth as a function of a step's working set (bytes it touches), for the caches a
// single-layer benchmark enjoys: it re-reads the same KV every step, so small working sets stay
// cache-resident (in a whole model the other layers evict them). Points ascending by bytes;
// between points the time per byte is interpolated linearly in log(bytes), outside them the
// end values hold. Empty = no cache effects. The cache-aware roofline idea (Ilic et al., 2014),
// measured on the kernels that run rather than with generic microbenchmarks.
struct BandwidthCurve {
  std::vector<std::pair<double, double>> points;  // (working-set bytes, GB/s)
  bool empty() const { return points.empty(); }
  double at(double bytes) const;
};

// What a profile's accelerator is: a backend's name (kernels/backend.h: cuda, an NVIDIA GPU; cpu,
// the cpu accelerator), or a device this tool has no backend for (kModeledOnlyAccelerators: rocm,
// an AMD GPU). A rocm profile is priced by the same roofline as a cuda one (device memory, a host
// link, queued kernels with launch and sync costs) from its own figures; such a platform is only
// ever modeled (the strategies run here, on the cpu accelerator, like for every modeled
// platform). A new backend is a profile kind with no edit here.
inline constexpr std::array<const char*, 1> kModeledOnlyAccelerators{{"rocm"}};
// Whether `kind` names a backend or a modeled-only accelerator (the text a profile may give);
// `known` lists them for the error.
bool known_accelerator_kind(const std::string& kind, std::string* known = nullptr);

struct AcceleratorModel {
  std::string kind = kAcceleratorKinds.name(AcceleratorKind::cuda);  // known_accelerator_kind
  // Whether this prices an emulated backend (the cpu accelerator), whose figures are calibrated
  // live on this machine (calibrate.h); false for a real device, modeled-only ones included.
  bool emulated() const;
  std::string name;          // "NVIDIA A100-SXM4-40GB"
  int numa_node = 0;         // host node the link of `links` with this host_node serves
  int threads = 0;           // cpu kind: worker threads (informational)
  int64_t memory_bytes = 0;  // HBM capacity
  double memory_usable_share =
      0.9;                 // share of memory_bytes for weights + KV (rest: runtime, activations)
  double memory_gbps = 0;  // peak memory bandwidth, 1e9 B/s
  double attention_efficiency = 0.8;  // share of memory_gbps decode-attention kernels reach
  double tflops = 0;                  // attention compute roof, 1e12 flop/s
  double launch_us = 0;               // per kernel launch (accelerator-side issue cost)
  double sync_us = 0;                 // per host wait on the accelerator
  double select_gelems =
      0;  // top-k/argmin scan rate of the whole device, 1e9 elements/s; 0 = unpriced
  // Rate at which the layer's decode GEMMs stream their weights (Traffic::weight_bytes), 1e9 B/s;
  // 0 = priced as the rest of the accelerator's memory traffic (the presets: HBM GEMMs and
  // attention both run near the memory roof).
  double gemm_gbps = 0;
  // Optional: effective memory bandwidth (efficiency included) by the step's accelerator-memory
  // working set; replaces memory_gbps x attention_efficiency when given.
  BandwidthCurve memory_curve;
  // Dense fp16 GEMM rate a prefill sustains (tensor cores), 1e12 flop/s; 0 = unknown. Decode
  // never needs it (its GEMMs are bound by the weights' bytes); only a published row that
  // counts its prompt's prefill does (model/published_projection.h).
  double prefill_tflops = 0;
};

struct LinkModel {
  int host_node = 0;
  double h2d_gbps = 0, d2h_gbps = 0;  // sustained pinned-copy bandwidth, 1e9 B/s
  double latency_us = 0;              // per copy (submit + DMA start)
  // Optional: copy bandwidth by the bytes copied per step (both directions), replacing h2d/d2h
  // for copies that a cache can serve (the cpu accelerator's memcpy); PCIe and C2C have none.
  BandwidthCurve copy_curve;
};

struct CpuModel {
  std::string name;
  int cores = 0;                         // cores the strategies' host side uses
  double core_read_gbps = 0;             // one core's sustained read bandwidth, 1e9 B/s
  double attention_gflops_per_core = 0;  // one core's decode-attention compute roof
  double dispatch_us = 0;  // handing work to the host threads, once per step with CPU work
  double select_gelems_per_core =
      0;  // one core's top-k/argmin scan rate, 1e9 elements/s; 0 = unpriced
  // Optional: one core's read bandwidth on tiers[0] by the step's host working set (caches
  // included); replaces min(tier, cores x core_read_gbps) for tiers[0] bytes when given.
  BandwidthCurve read_curve;
};

struct TierModel {
  MemoryKind kind = MemoryKind::local_dram;
  int node = 0;
  std::string name;  // "DDR5-4800, 8 channels"
  int64_t capacity_bytes = 0;
  double read_gbps = 0;   // all-core streaming read from the CPU's node, 1e9 B/s
  double latency_ns = 0;  // idle load-to-use latency
  bool emulated = false;  // a stand-in (e.g. a remote node playing CXL)
};

// The node the accelerator sits in, for tensor parallelism (model/tensor_parallel.h): how many
// GPUs it holds and the link between them. No "node" member: one GPU, no interconnect (a
// replica is one GPU, as before).
struct NodeModel {
  int gpus = 1;
  std::string interconnect;            // "NVLink 4 via NVSwitch"
  double interconnect_gbps = 0;        // one GPU's bandwidth to the others, per direction, 1e9 B/s
  double interconnect_latency_us = 0;  // per step of a ring all-reduce
};

// Where a platform model's figures come from: a shipped preset, a probe of a machine, or a
// probe with a "model" member (validate-model --write-model) on top. A profile file says
// "preset" or "measured"; "calibrated" is what a measured file with a model member becomes.
// Text only where a profile is read, in the report and in the terminal.
enum class PlatformSource { preset, measured, calibrated };
inline constexpr Vocabulary<PlatformSource, 3> kPlatformSources{
    {"preset", "measured", "calibrated"}};
inline const char* to_string(PlatformSource s) { return kPlatformSources.name(s); }

struct PlatformModel {
  std::string name;  // short, used as the "platform" axis of modeled points
  std::string description;
  PlatformSource source = PlatformSource::preset;
  std::string origin;  // file or "preset:NAME" it was read from
  AcceleratorModel accelerator;
  std::vector<LinkModel> links;
  CpuModel cpu;
  std::vector<TierModel> tiers;  // tiers[0] is the default host tier
  NodeModel node;                // GPUs per node and their interconnect (tensor parallelism)
  // Where each figure comes from: JSON path ("accelerator.memory_gbps") -> text; "[estimate]"
  // prefixes the ones that are estimates rather than datasheet or measured values.
  std::map<std::string, std::string> sources;
  // What the node costs and draws (the profile's optional "economics" member, model/economics.h),
  // for a point's $/Mtok and tokens/s per W; empty when the profile gives none.
  PlatformEconomics economics;

  const TierModel* tier(MemoryKind k) const;  // first tier of that kind, nullptr when none
  const LinkModel& link() const;              // the link of accelerator.numa_node (or the first)
  // Throws hb::Error naming every missing or out-of-range figure and the fix.
  void validate() const;
};

// Reads a profile: a file path, "preset:NAME", or the bare name of a shipped preset. A
// "hybridbench.platform/1" document with source "measured" is validated by memtier's reader
// first; its probe supplies the tiers and the CPU's per-core bandwidth, its "model" member the
// rest (written by `hybridbench validate-model --write-model`). Throws hb::Error naming the
// origin and the JSON path of the first problem.
PlatformModel load_platform_model(const std::string& path_or_preset);
// What a measured profile already gives (tiers from the probe of the reference CPU node, cores,
// per-core read bandwidth, GPU and link figures when the CUDA backend probed them); the rest
// stays zero for a "model" member or calibration to complete. Not validated.
PlatformModel from_platform_profile(const memtier::PlatformProfile& p);
// require_complete = false skips validate() (validate-model completes the figures by calibration).
PlatformModel parse_platform_model(const std::string& text, const std::string& origin,
                                   bool require_complete = true);

// Shipped presets, embedded at build time from model/profiles/*.json.
std::vector<std::string> preset_names();
std::string preset_text(const std::string& name);  // throws hb::Error listing the names
// "presets" -> every preset; "a.json,preset:h200" -> those; each entry as load_platform_model.
std::vector<PlatformModel> load_platform_models(const std::vector<std::string>& specs);

// The "model" member as JSON text (values with their sources), for --write-model.
std::string model_section_json(const PlatformModel& m);
// Adds (or replaces) the "model" member of a platform document; the rest is kept verbatim.
std::string with_model_section(const std::string& platform_doc_text, const PlatformModel& m,
                               const std::string& origin);

// Per-layer KV budget on the accelerator for a model preset: (memory_bytes x usable share -
// weights of every layer) / layers, at least 1 MiB. Weights: model_weight_bytes
// (core/model_presets.h: projections and FFN at the preset's 2 bytes per parameter, embeddings
// not counted; README: limits).
int64_t kv_budget_per_layer(const PlatformModel& m, const std::string& model_preset);
// The same for any model, a trace's own included (no layers or weights: one layer's share).
int64_t kv_budget_per_layer(const PlatformModel& m, const ModelPreset& model);

}  // namespace hb::model
