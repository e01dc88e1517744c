#pragma once
// y = x W for decode-sized x (a few rows), the GEMMs of a decoder layer around attention, run on
// the attention engine's K pass (decode_kernel.h `score`): W is stored as K pages, one page per
// kWeightBlockCols output columns in the engine's blocked layout [in][cols], so each output
// column is one "token" whose logit is x · W[:, col]. The engine then reads every weight once
// per call (up to 4 rows of x share each load), with its SIMD dispatch, fp16/bf16 conversion
// and prefetching: at decode a GEMV is bound by the weights' bytes over memory bandwidth, and
// that is the roof this meets.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/cpu_features.h"
#include "core/dtype.h"
#include "core/kv_cache.h"
#include "core/layer_work.h"
#include "core/thread_pool.h"

namespace hb::cpu {

inline constexpr int kWeightBlockCols = kLayerColumnBlock;  // a multiple of 16, like a KV page

// A view of blocked weights over caller-owned storage of blocked_weight_bytes(in, out, dtype).
struct BlockedWeights {
  int in = 0, out = 0;
  DType dtype = DType::f16;
  std::vector<PageRef> blocks;  // ceil(out / kWeightBlockCols) pages

  static size_t bytes(int in, int out, DType dtype);
  static BlockedWeights over(std::byte* storage, int in, int out, DType dtype);
  float at(int row, int col) const;  // W[row][col], for tests and references
  void set(int row, int col, float value);
  // Uniform in [-1, 1] / sqrt(in) (so x W keeps x's scale), a fixed function of `seed`.
  void fill_random(uint64_t seed);
};

// y[r][c] = sum_i x[r][i] W[i][c] for r < rows (x row stride w.in, y row stride w.out).
// Throws hb::Error on a shape the engine cannot take, before any work.
void gemv(const BlockedWeights& w, const float* x, int rows, float* y, ThreadPool& pool,
          SimdLevel simd = best_simd_level());

}  // namespace hb::cpu
