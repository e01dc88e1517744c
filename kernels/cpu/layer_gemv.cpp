#include "kernels/cpu/layer_gemv.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "core/rng.h"
#include "kernels/cpu/decode_kernel.h"

namespace hb::cpu {

namespace {

size_t block_elements(int in) { return static_cast<size_t>(in) * kWeightBlockCols; }
int block_count(int out) { return (out + kWeightBlockCols - 1) / kWeightBlockCols; }

std::byte* element(const BlockedWeights& w, int row, int col) {
  const PageRef& b = w.blocks[col / kWeightBlockCols];
  return b.k + k_block_offset(row, col % kWeightBlockCols, kWeightBlockCols) * dtype_size(w.dtype);
}

}  // namespace

size_t BlockedWeights::bytes(int in, int out, DType dtype) {
  return block_elements(in) * block_count(out) * dtype_size(dtype);
}

BlockedWeights BlockedWeights::over(std::byte* storage, int in, int out, DType dtype) {
  if (in < 0 || out < 0) throw Error("BlockedWeights: negative shape", {});
  BlockedWeights w;
  w.in = in;
  w.out = out;
  w.dtype = dtype;
  const size_t block_bytes = block_elements(in) * dtype_size(dtype);
  for (int b = 0; b < block_count(out); ++b) {
    // No storage: weights only charged, never read (cpu_layer_work.cpp); no null arithmetic.
    std::byte* p = storage ? storage + b * block_bytes : nullptr;
    w.blocks.push_back(PageRef{p, p});  // v aliases k: the score pass never reads V
  }
  return w;
}

float BlockedWeights::at(int row, int col) const {
  float v = 0;
  convert_to_fp32(dtype, element(*this, row, col), &v, 1);
  return v;
}

void BlockedWeights::set(int row, int col, float value) {
  convert_from_fp32(dtype, &value, element(*this, row, col), 1);
}

void BlockedWeights::fill_random(uint64_t seed) {
  Rng rng(seed);
  const float amplitude = in > 0 ? 1.0f / std::sqrt(static_cast<float>(in)) : 0.0f;
  std::vector<float> block(block_elements(in));
  for (size_t b = 0; b < blocks.size(); ++b) {
    for (float& v : block) v = amplitude * (2.0f * static_cast<float>(rng.uniform()) - 1.0f);
    convert_from_fp32(dtype, block.data(), blocks[b].k, block.size());  // padding columns too
  }
}

void gemv(const BlockedWeights& w, const float* x, int rows, float* y, ThreadPool& pool,
          SimdLevel simd) {
  if (rows <= 0 || w.out == 0) return;
  if (w.in == 0) {
    std::fill(y, y + static_cast<size_t>(rows) * w.out, 0.0f);
    return;
  }
  const KernelTable& kernels = kernels_for(simd, w.in);  // throws here, not on a worker
  // Column ranges of whole blocks, a few per thread so uneven threads still balance.
  const int blocks = block_count(w.out);
  const int per_task = std::max(1, blocks / (4 * pool.size()));
  const int64_t tasks = (blocks + per_task - 1) / per_task;
  for (int r0 = 0; r0 < rows; r0 += kMaxJobQueryHeads) {
    const int group = std::min(kMaxJobQueryHeads, rows - r0);
    pool.parallel_for(tasks, [&](int64_t task, int) {
      const int64_t begin = task * per_task * kWeightBlockCols;
      JobHead head;
      head.q = x + static_cast<size_t>(r0) * w.in;
      head.pages = w.blocks.data();
      head.end = std::min<int64_t>(w.out, begin + int64_t{per_task} * kWeightBlockCols);
      head.logits = y + static_cast<size_t>(r0) * w.out;
      DecodeJob job;
      job.scale = 1.0f;
      job.page_tokens = kWeightBlockCols;
      job.head_dim = w.in;
      job.group = group;
      job.dtype = w.dtype;
      job.begin = begin;
      job.heads = 1;
      job.head = &head;
      job.logits_stride = w.out;
      job.logits_base = 0;
      kernels.score(job);
    });
  }
}

}  // namespace hb::cpu
