#include "core/step_io.h"

#include "core/error.h"

namespace hb {

StepIO::StepIO(const Problem& problem, Accelerator& accel) : problem_(problem), accel_(accel) {
  const auto& s = problem.shape;
  const size_t B = problem.batch;
  const size_t qn = B * s.q_heads * s.head_dim, kn = B * s.kv_heads * s.head_dim,
               ln = B * s.q_heads;
  auto mem = accel.memory();
  q_ = mem->allocate(qn * 4);
  k_ = mem->allocate(kn * 4);
  v_ = mem->allocate(kn * 4);
  o_ = mem->allocate(qn * 4);
  lse_ = mem->allocate(ln * 4);
  auto staging = accel.staging_memory(accel.info().numa_node);
  q_host = HostRows(*staging, qn);
  k_host = HostRows(*staging, kn);
  v_host = HostRows(*staging, kn);
  o_host = HostRows(*staging, qn);
  lse_host = HostRows(*staging, ln);
}

void StepIO::stage(int s) {
  const auto& ws = problem_.workloads;
  const size_t qn = problem_.shape.q_heads * problem_.shape.head_dim;
  const size_t kn = problem_.shape.kv_heads * problem_.shape.head_dim;
  // The staging buffers were sized for problem_.batch sequences of the problem's shape.
  if (ws.size() != static_cast<size_t>(problem_.batch))
    throw Error("step " + std::to_string(s) + ": " + std::to_string(ws.size()) +
                    " workloads for a batch of " + std::to_string(problem_.batch),
                {}, kExitFailure);
  for (size_t b = 0; b < ws.size(); ++b) {
    const DecodeStep& st =
        ws[b].step(s);  // checked: a short trace is an hb::Error, not a read past it
    if (st.q.size() != qn || st.k.size() != kn)
      throw Error("step " + std::to_string(s) + ": sequence " + std::to_string(b) +
                      " does not have the problem's shape",
                  {}, kExitFailure);
    // Through the pinned host rows: strategies overwrite them with what they copy back.
    std::copy(st.q.begin(), st.q.end(), q_host.begin() + b * qn);
    std::copy(st.k.begin(), st.k.end(), k_host.begin() + b * kn);
    std::copy(st.v.begin(), st.v.end(), v_host.begin() + b * kn);
  }
  accel_.copy_to_device(q_dev(), q_host.data(), q_bytes());
  accel_.copy_to_device(k_dev(), k_host.data(), kv_row_bytes());
  accel_.copy_to_device(v_dev(), v_host.data(), kv_row_bytes());
  accel_.synchronize();
}

}  // namespace hb
