#pragma once
// How one model replica is deployed on a platform's node in model mode: tensor parallelism
// over the node's GPUs (Megatron-style: attention heads, KV heads and the FFN split over the
// ranks, two all-reduces of the hidden rows per layer) and the element types of the weights
// and the KV (fp16, or fp8 e4m3: one byte). The strategies execute the whole layer here, at
// fp16; a deployment turns that execution into one rank's: its traffic (rank_traffic), its
// accelerator budget (executed_kv_budget_per_layer) and the all-reduces (layer_allreduce_ns).
// What is simplified: model/README.md, "Tensor parallelism and fp8".
#include <cstdint>
#include <string>
#include <vector>

#include "core/model_presets.h"
#include "core/traffic.h"
#include "model/platform_model.h"
#include "reports/report.h"

namespace hb::model {

// Element types model mode prices weights and KV at (the executed workload is fp16).
enum class PricedDtype { fp16, fp8 };
inline constexpr Vocabulary<PricedDtype, 2> kPricedDtypes{{"fp16", "fp8"}};
inline double dtype_bytes(PricedDtype d) { return d == PricedDtype::fp8 ? 1.0 : 2.0; }

// What the command line asks for: --tp (0 = auto) and the element types.
struct DeploymentRequest {
  int tp = 0;
  PricedDtype weights = PricedDtype::fp16;
  PricedDtype kv = PricedDtype::fp16;
};

// `run --tp auto|N` and `--precision LIST` (fp16: weights and KV fp16; fp8: both fp8 e4m3;
// fp8-weights: weights fp8, KV fp16), one request per precision. Throws hb::Error (exit 2).
std::vector<DeploymentRequest> parse_deployments(const std::string& tp,
                                                 const std::string& precisions);

struct Deployment {
  int tp = 1;        // GPUs one replica spans
  int kv_split = 1;  // ranks the KV heads are split over: min(tp, kv_heads) (vLLM replicates the
                     // KV heads when tp exceeds them: each rank then holds kv_heads / kv_split)
  PricedDtype weights = PricedDtype::fp16, kv = PricedDtype::fp16;
  double weight_share = 1;  // one rank's share of a layer's weights
  std::string choice;       // why this tp ("auto: ...", "--tp 4")
  std::string refused;      // non-empty: the weights do not fit one rank even so (nothing runs)
  // One rank's KV bytes per executed (fp16, every head) KV byte.
  double kv_scale() const { return dtype_bytes(kv) / 2.0 / kv_split; }
  // Strategy parameters and axes: "tp=4 weights=fp8 kv=fp16".
  std::string text() const;
  bool trivial() const {
    return tp == 1 && weights == PricedDtype::fp16 && kv == PricedDtype::fp16;
  }
};

// Whether `tp` can split `model` on `m`'s node: "" or why not (tp above the node's GPUs, not
// dividing them, not dividing the query heads, KV heads neither divisible by tp nor dividing it).
std::string tp_problem(const PlatformModel& m, const ModelPreset& model, int tp);
// One rank's weights at tp (layers, LM head and embedding, vocab-parallel), at the weights' type.
double rank_weight_bytes(const ModelPreset& model, int tp, PricedDtype weights);
// One rank's room for KV over every layer (usable HBM - its weights), bytes; may be negative.
double rank_kv_room(const PlatformModel& m, const ModelPreset& model, int tp, PricedDtype weights);
// The deployment of `model` on `m` for a point of `batch` sequences of `context` tokens. --tp N
// is checked (tp_problem: hb::Error, exit 2); auto takes the smallest tp whose ranks hold their
// weights and the batch's whole KV (the best tokens/s per GPU: a larger tp only adds
// all-reduces and GPUs), else the largest whose weights fit (the most HBM for KV; the
// offloading strategies place the rest), else the largest, refused.
Deployment choose_deployment(const PlatformModel& m, const ModelPreset& model, int64_t context,
                             int batch, const DeploymentRequest& request);
// The per-layer accelerator budget the whole fp16 layer executes with: kv_split ranks' room
// (kv_budget_per_layer's rule, 1 MiB floor, per rank) in executed bytes.
int64_t executed_kv_budget_per_layer(const PlatformModel& m, const ModelPreset& model,
                                     const Deployment& d);
// One rank's share of an executed step's traffic: accelerator KV and activation bytes, copies
// and device scans x kv_scale, weight bytes x weight_share at the weights' type, accelerator
// flops / tp; host-side bytes at the KV's type (x dtype bytes / 2), not split (the host's CPU
// and DRAM serve the replica's ranks together); launches and syncs as they are (every rank
// issues them).
Traffic rank_traffic(const Traffic& executed, const Deployment& d);
// The deployment a modeled point was priced with: its strategy_params["model.deployment"]'s tp
// and its axes.extra "dtypes" (none: one GPU, fp16).
Deployment point_deployment(const reports::Point& p, const ModelPreset& model);
// A ring all-reduce of `bytes` over tp GPUs: 2 (tp-1)/tp x bytes / interconnect_gbps + 2 (tp-1)
// steps x interconnect_latency_us; 0 at tp 1.
double allreduce_ns(const NodeModel& node, int tp, double bytes);
// A decoder layer's two all-reduces (after the attention output projection and after the FFN
// down projection), each of batch x hidden fp16 activations.
double layer_allreduce_ns(const NodeModel& node, int tp, int batch, int hidden);

}  // namespace hb::model
