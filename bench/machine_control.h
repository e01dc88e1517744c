#pragma once
// The machine control of a point group: a fixed reference workload, a streaming read
// over the group's KV bytes on the strategies' CPU threads, timed inside the same interleaved
// rounds as the strategies (rounds.h), once per step at a seeded place in the round's order.
// Its median time per round goes into every point of the group (StepTiming::control_ns), so
// compare can tell a machine that slowed (the control moved with the strategies) from a strategy
// that did (its time over the control's moved).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/thread_pool.h"

namespace hb::bench {

class MachineControl {
 public:
  // Reads min(bytes, kMaxBytes) (at least kMinBytes), the buffer touched once here, untimed.
  MachineControl(int64_t bytes, ThreadPool& pool);
  ~MachineControl();
  MachineControl(const MachineControl&) = delete;
  MachineControl& operator=(const MachineControl&) = delete;

  // Its place in round `round`'s order of n contenders: 0 (before the first) to n (after the
  // last), drawn from (seed, round) apart from the contenders' own order (round_order), so
  // adding the control leaves their orders as they were.
  static size_t slot_of(size_t n, uint64_t seed, int64_t round);
  void set_slot(size_t slot) { slot_ = slot; }
  size_t slot() const { return slot_; }

  void measure();      // one timed read
  void close_round();  // the round's median joins the closed rounds (none taken: nothing)
  // The closed rounds' medians, then the open round's when it has reads (a group stopping
  // between rounds records its last steps as a round of their own, as contenders do).
  std::vector<double> round_ns() const;
  int64_t bytes() const { return static_cast<int64_t>(bytes_); }

  static constexpr int64_t kMinBytes = int64_t{1} << 20;
  static constexpr int64_t kMaxBytes = int64_t{256} << 20;

 private:
  ThreadPool& pool_;
  size_t bytes_ = 0;
  std::unique_ptr<unsigned char[]> buffer_;
  std::vector<double> open_, closed_;
  size_t slot_ = 0;
  uint64_t sink_ = 0;  // the reads' checksums, so they are not elided
};

}  // namespace hb::bench
