#include "core/accelerator.h"

#include <string>

namespace hb {

void Accelerator::enqueue_fallback(const AcceleratorOp& op) {
  if (const auto* s = std::get_if<StreamAttentionArgs>(&op)) {
    decode_attention(s->seqs, s->batch);
    return;
  }
  const std::string name = kAcceleratorOps.name(op_kind(op));
  if (op_kind(op) == OpKind::host_kernel)
    throw Error(
        "accelerator " + info().name + " cannot run host-code policy kernels (op " + name + ")",
        "use --accelerator cpu for this strategy");
  throw Error("accelerator " + info().name + " has no " + name + " op",
              "use an accelerator that supports it (--accelerator cpu or cuda)");
}

}  // namespace hb
