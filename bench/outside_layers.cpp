#include "bench/outside_layers.h"

#include <algorithm>
#include <vector>

#include "core/error.h"
#include "core/layer_work.h"
#include "core/timer.h"

namespace hb::bench {

ModelPreset lm_head_stand_in(const ModelPreset& model) {
  if (model.vocab <= 0 || model.hidden <= 0)
    throw Error("model " + model.name + " has no vocabulary or width to time an LM head with",
                "use a model preset (run --list-models)");
  ModelPreset head;
  head.name = model.name + " LM head";
  head.family = ModelFamily::opt;  // an ungated FFN: two matrices, hidden -> ffn -> hidden
  head.layers = 1;
  head.hidden = model.hidden;
  head.ffn = (model.vocab + 1) / 2;
  head.max_context = model.max_context;
  head.vocab = model.vocab;
  head.shape = AttentionShape{1, 1, 1, model.shape.kv_dtype};
  head.source = "stand-in for " + model.name + "'s LM head (bench/outside_layers.h)";
  return head;
}

std::map<int, OutsideLayersTiming> time_outside_layers(const AcceleratorOptions& options,
                                                       const ModelPreset& model,
                                                       const std::vector<int>& batches,
                                                       int repeats) {
  std::map<int, OutsideLayersTiming> out;
  if (batches.empty()) return out;
  const ModelPreset head = lm_head_stand_in(model);
  const int max_batch = *std::max_element(batches.begin(), batches.end());
  AcceleratorOptions o = options;
  // The GEMM library's workspace too, whichever kind `auto` picks (the cpu kind allocates none).
  o.capacity_bytes = layer_work_bytes(head, max_batch) + kLayerWorkspaceBytes;
  const std::unique_ptr<Accelerator> acc = make_accelerator(o);
  const std::unique_ptr<LayerWork> work = acc->make_layer_work(head, max_batch, 0);
  const auto provenance =
      acc->info().emulated ? reports::Provenance::emulated : reports::Provenance::measured;
  for (const int batch : batches) {
    work->enqueue_ffn(batch);  // warm-up: first touch, library setup
    acc->synchronize();
    std::vector<double> ns;
    for (int r = 0; r < std::max(1, repeats); ++r) {
      const int64_t start = now_ns();
      work->enqueue_ffn(batch);
      acc->synchronize();
      ns.push_back(static_cast<double>(now_ns() - start));
    }
    std::nth_element(ns.begin(), ns.begin() + ns.size() / 2, ns.end());
    out[batch] = {ns[ns.size() / 2], provenance};
  }
  return out;
}

}  // namespace hb::bench
