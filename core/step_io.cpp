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
  q_host.resize(qn);
  k_host.resize(kn);
  v_host.resize(kn);
  o_host.resize(qn);
  lse_host.resize(ln);
}

void StepIO::stage(int s) {
  const auto& ws = problem_.workloads;
  const size_t qn = problem_.shape.q_heads * problem_.shape.head_dim;
  const size_t kn = problem_.shape.kv_heads * problem_.shape.head_dim;
  std::vector<float> q(qn * ws.size()), k(kn * ws.size()), v(kn * ws.size());
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
    std::copy(st.q.begin(), st.q.end(), q.begin() + b * qn);
    std::copy(st.k.begin(), st.k.end(), k.begin() + b * kn);
    std::copy(st.v.begin(), st.v.end(), v.begin() + b * kn);
  }
  accel_.copy_to_device(q_dev(), q.data(), q.size() * 4);
  accel_.copy_to_device(k_dev(), k.data(), k.size() * 4);
  accel_.copy_to_device(v_dev(), v.data(), v.size() * 4);
  accel_.synchronize();
}

}  // namespace hb
