#include "bench/machine_control.h"

#include <algorithm>
#include <cstring>

#include "core/stats.h"
#include "core/timer.h"
#include "bench/rounds.h"
#include "kernels/cpu/stream_read.h"

namespace hb::bench {

MachineControl::MachineControl(int64_t bytes, ThreadPool& pool)
    : pool_(pool), bytes_(static_cast<size_t>(std::clamp(bytes, kMinBytes, kMaxBytes))) {
  buffer_.reset(new unsigned char[bytes_ + 64]);
  std::memset(buffer_.get(), 1, bytes_ + 64);  // every page touched before any read is timed
}

MachineControl::~MachineControl() = default;

size_t MachineControl::slot_of(size_t n, uint64_t seed, int64_t round) {
  // A SplitMix64 stream of its own: the contenders' order (round_order) is left as it was.
  uint64_t state =
      (seed ^ 0x5bd1e9955bd1e995ULL) + static_cast<uint64_t>(round) * 0x9e3779b97f4a7c15ULL;
  const uint64_t z = splitmix64(state);
  return static_cast<size_t>((static_cast<unsigned __int128>(z) * (n + 1)) >> 64);
}

void MachineControl::measure() {
  // 64-byte aligned, as the stream kernels' non-temporal paths like it.
  const auto base = reinterpret_cast<uintptr_t>(buffer_.get());
  const void* p = buffer_.get() + ((64 - base % 64) % 64);
  const int64_t t0 = now_ns();
  sink_ += cpu::stream_read(p, bytes_, pool_);
  open_.push_back(static_cast<double>(now_ns() - t0));
}

void MachineControl::close_round() {
  if (open_.empty()) return;
  closed_.push_back(quantile(open_, 0.5));
  open_.clear();
}

std::vector<double> MachineControl::round_ns() const {
  std::vector<double> r = closed_;
  if (!open_.empty()) r.push_back(quantile(open_, 0.5));
  return r;
}

}  // namespace hb::bench
