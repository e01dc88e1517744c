#include "core/shape.h"

#include <cmath>

#include "core/error.h"

namespace hb {

float AttentionShape::softmax_scale() const {
  return 1.0f / std::sqrt(static_cast<float>(head_dim));
}

void AttentionShape::validate() const {
  if (q_heads <= 0 || kv_heads <= 0 || head_dim <= 0)
    throw Error(
        "impossible attention shape " + to_string() + ": head counts and head_dim must be positive",
        "pass --q-heads, --kv-heads and --head-dim > 0, or pick a --model preset");
  if (q_heads % kv_heads != 0)
    throw Error("impossible attention shape " + to_string() + ": " + std::to_string(q_heads) +
                    " query heads cannot be shared evenly by " + std::to_string(kv_heads) +
                    " KV heads",
                "make --q-heads a multiple of --kv-heads (GQA groups are contiguous)");
  if (head_dim > 512)
    throw Error(
        "head_dim " + std::to_string(head_dim) + " is larger than the 512 the kernels support",
        "use head_dim <= 512");
}

std::string AttentionShape::to_string() const {
  return std::to_string(q_heads) + "q/" + std::to_string(kv_heads) + "kv x" +
         std::to_string(head_dim) + " " + std::string(dtype_name(kv_dtype));
}

}  // namespace hb
