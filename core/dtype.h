#pragma once
// Element types of the KV cache and their conversions. fp16 and bf16 conversions round to
// nearest even (as hardware and PyTorch do) so that cached values match what a model stores.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace hb {

enum class DType : uint8_t { f32, f16, bf16 };

size_t dtype_size(DType t);
std::string_view dtype_name(DType t);   // "fp32", "fp16", "bf16"
DType parse_dtype(std::string_view s);  // throws hb::Error naming the accepted values

// Scalar conversions (portable, bit-exact, round-to-nearest-even, NaN stays NaN).
uint16_t fp32_to_fp16(float f);
float fp16_to_fp32(uint16_t h);
uint16_t fp32_to_bf16(float f);
float bf16_to_fp32(uint16_t h);

// Bulk conversions; use F16C when the CPU has it, else the scalar path (same results).
void convert_to_fp32(DType src_type, const void* src, float* dst, size_t n);
void convert_from_fp32(DType dst_type, const float* src, void* dst, size_t n);

// Rounds each value through dtype and back (what storing it in the cache does to it).
void round_through(DType t, float* values, size_t n);

}  // namespace hb
