#include "core/step_io.h"

namespace hb {

StepIO::StepIO(const Problem& problem, Accelerator& accel) : problem_(problem), accel_(accel) {
  const auto& s = problem.shape;
  const size_t B = problem.batch;
  const size_t qn = B * s.q_heads * s.head_dim, kn = B * s.kv_heads * s.head_dim, ln = B * s.q_heads;
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
  const auto& ws = *problem_.workloads;
  const size_t qn = problem_.shape.q_heads * problem_.shape.head_dim;
  const size_t kn = problem_.shape.kv_heads * problem_.shape.head_dim;
  std::vector<float> q(qn * ws.size()), k(kn * ws.size()), v(kn * ws.size());
  for (size_t b = 0; b < ws.size(); ++b) {
    std::copy(ws[b].steps[s].q.begin(), ws[b].steps[s].q.end(), q.begin() + b * qn);
    std::copy(ws[b].steps[s].k.begin(), ws[b].steps[s].k.end(), k.begin() + b * kn);
    std::copy(ws[b].steps[s].v.begin(), ws[b].steps[s].v.end(), v.begin() + b * kn);
  }
  accel_.copy_to_device(q_dev(), q.data(), q.size() * 4);
  accel_.copy_to_device(k_dev(), k.data(), k.size() * 4);
  accel_.copy_to_device(v_dev(), v.data(), v.size() * 4);
  accel_.synchronize();
}

}  // namespace hb
