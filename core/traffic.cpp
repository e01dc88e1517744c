#include "core/traffic.h"

#include <cmath>

namespace hb {

Traffic& Traffic::operator+=(const Traffic& o) {
  for (int p = 0; p < 2; ++p)
    for (int k = 0; k < kMemoryKinds; ++k) {
      bytes_read[p][k] += o.bytes_read[p][k];
      bytes_written[p][k] += o.bytes_written[p][k];
    }
  h2d_bytes += o.h2d_bytes;
  d2h_bytes += o.d2h_bytes;
  cpu_flops += o.cpu_flops;
  accelerator_flops += o.accelerator_flops;
  kernel_launches += o.kernel_launches;
  syncs += o.syncs;
  for (int p = 0; p < 2; ++p) select_elements[p] += o.select_elements[p];
  weight_bytes += o.weight_bytes;
  return *this;
}

Traffic Traffic::scaled(double f) const {
  auto r = [f](int64_t x) {
    return static_cast<int64_t>(std::llround(static_cast<double>(x) * f));
  };
  Traffic t;
  for (int p = 0; p < 2; ++p)
    for (int k = 0; k < kMemoryKinds; ++k) {
      t.bytes_read[p][k] = r(bytes_read[p][k]);
      t.bytes_written[p][k] = r(bytes_written[p][k]);
    }
  t.h2d_bytes = r(h2d_bytes);
  t.d2h_bytes = r(d2h_bytes);
  t.cpu_flops = cpu_flops * f;
  t.accelerator_flops = accelerator_flops * f;
  t.kernel_launches = r(kernel_launches);
  t.syncs = r(syncs);
  for (int p = 0; p < 2; ++p) t.select_elements[p] = select_elements[p] * f;
  t.weight_bytes = r(weight_bytes);
  return t;
}

Traffic Traffic::for_batch(int batch, int microbatches, int64_t step_syncs) const {
  Traffic per_sequence = *this;
  const int acc = static_cast<int>(Processor::accelerator);
  const int hbm = static_cast<int>(MemoryKind::accelerator);
  per_sequence.bytes_read[acc][hbm] -= weight_bytes;
  Traffic t = per_sequence.scaled(batch);
  t.weight_bytes = weight_bytes * microbatches;
  t.bytes_read[acc][hbm] += t.weight_bytes;
  t.kernel_launches = kernel_launches * microbatches;
  t.syncs = (syncs - step_syncs) * microbatches + step_syncs;
  return t;
}

}  // namespace hb
