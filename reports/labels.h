#pragma once
// Names for points. On screen a point is labelled by the axes that vary across the report(s)
// shown (the rest go in a header line), so a 40-point table stays readable; exporters need a
// stable full name instead, or a CI dashboard would lose its history when the sweep changes.
#include <string>
#include <vector>

#include "reports/report.h"

namespace hb::reports {

class AxesLabeler {
 public:
  explicit AxesLabeler(const std::vector<PointAxes>& all);
  // "cpu-only 16k" (varying axes only; sequence lengths as 4k/128k; strategy first).
  std::string label(const PointAxes& a) const;
  // "model llama-3-8b, batch 1, fp16, workload structured, accelerator cpu" (the constant axes).
  std::string constants() const;

 private:
  std::vector<std::pair<std::string, std::string>> fields(const PointAxes& a) const;
  std::vector<bool> varies_;
  std::vector<std::pair<std::string, std::string>> first_;
};

// Stable full name:
// "cpu-only/llama-3-8b/seq_len=4096/batch=1/fp16/structured/cpu/steps=8/page=16[/k=v...]".
std::string benchmark_name(const PointAxes& a);

}  // namespace hb::reports
