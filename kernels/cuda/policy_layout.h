#pragma once
// The policy kernels' index math and selection rules (kernels/cuda/policy_kernels.cu), as plain
// HB_HD functions so CPU tests check them against the cpu accelerator's contracts without a GPU:
// the page-slot offsets of core/kv_cache.h's block layout, and the radix top-k's key order and
// digit choice (tests/kernels/policy_layout_test.cpp runs the whole selection on the CPU with
// these and compares it with cpu::topk_select_rows).
#include <cstdint>
#include <cstring>

#include "kernels/cuda/host_device.h"

namespace hb::cuda {

// Element offset of dim j of slot s in page blocks of P slots and `width` dims, from the first
// block: K blocks are dim-major ([width][P]), V blocks slot-major ([P][width]); the same
// layout as core/kv_cache.h's k_block_offset / v_block_offset within one block.
HB_HD int64_t paged_k_offset(int64_t slot, int j, int page_tokens, int width) {
  return (slot / page_tokens) * static_cast<int64_t>(page_tokens) * width +
         static_cast<int64_t>(j) * page_tokens + slot % page_tokens;
}
HB_HD int64_t paged_v_offset(int64_t slot, int j, int page_tokens, int width) {
  return (slot / page_tokens) * static_cast<int64_t>(page_tokens) * width +
         (slot % page_tokens) * static_cast<int64_t>(width) + j;
}

// An unsigned key whose order is the top-k's order of values: larger value, larger key. NaN
// ranks as -inf (never ahead of a number) and -0 as +0, as in cpu::topk_select_rows, so equal
// keys are exactly the ties that the lower index breaks.
HB_HD uint32_t topk_key(float v) {
  uint32_t bits;
  memcpy(&bits, &v, sizeof bits);
  if (v != v) bits = 0xff800000u;  // NaN -> -inf
  if (v == 0.0f) bits = 0u;        // -0 -> +0
  return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
}

// Radix select from the top byte down: pass p (0..3) histograms digit (key >> shift) & 255 of
// the keys whose higher bytes equal the prefix found so far.
inline constexpr int kTopkPasses = 4;
HB_HD int topk_shift(int pass) { return 24 - 8 * pass; }
HB_HD uint32_t topk_mask(int pass) {  // the bytes above pass `pass`
  return pass == 0 ? 0u : ~0u << (32 - 8 * pass);
}

// Given the pass's histogram (256 counts) of the keys still in play and how many of the k
// largest are still to be found among them (`remaining` >= 1), the digit of the k-th largest
// and how many of the keys with that digit are still needed (the rest of `remaining` lies in
// larger digits, taken whole).
struct TopkDigit {
  uint32_t digit;
  int64_t remaining;
};
HB_HD TopkDigit topk_pick_digit(const uint32_t* hist, int64_t remaining) {
  int64_t above = 0;
  for (int d = 255; d > 0; --d) {
    if (above + hist[d] >= remaining) return TopkDigit{static_cast<uint32_t>(d), remaining - above};
    above += hist[d];
  }
  return TopkDigit{0u, remaining - above};
}

}  // namespace hb::cuda
