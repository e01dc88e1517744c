#include "reports/run/sweep_spec.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <set>

#include "core/error.h"
#include "core/model_presets.h"

namespace hb::run {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i <= s.size()) {
    size_t j = s.find(',', i);
    if (j == std::string::npos) j = s.size();
    std::string item = s.substr(i, j - i);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (!item.empty()) out.push_back(item);
    i = j + 1;
  }
  return out;
}

int64_t parse_token_count(const std::string& s) {
  if (s.empty()) throw Error("empty sequence length", "write lengths like 4096, 4k or 128K");
  size_t pos = 0;
  long long v = 0;
  try {
    v = std::stoll(s, &pos);
  } catch (...) {
    throw Error("'" + s + "' is not a sequence length", "write lengths like 4096, 4k or 128K");
  }
  std::string suffix = s.substr(pos);
  int64_t mult = 1;
  if (suffix == "k" || suffix == "K") mult = 1024;
  else if (suffix == "m" || suffix == "M") mult = 1024 * 1024;
  else if (!suffix.empty()) throw Error("'" + s + "' is not a sequence length", "write lengths like 4096, 4k or 128K");
  if (v < 0) throw Error("negative sequence length '" + s + "'", "sequence lengths are >= 0");
  if (v > std::numeric_limits<int64_t>::max() / mult)
    throw Error("sequence length '" + s + "' is too large", "write lengths like 4096, 4k or 128K");
  return v * mult;
}

std::vector<int64_t> parse_seq_lens(const std::string& s) {
  constexpr int64_t kMaxPoints = 10000;
  std::set<int64_t> out;
  for (const auto& item : split_list(s)) {
    const size_t c1 = item.find(':');
    if (c1 == std::string::npos) {
      out.insert(parse_token_count(item));
      continue;
    }
    const size_t c2 = item.find(':', c1 + 1);
    const std::string fix = "ranges are FROM:TO:xFACTOR or FROM:TO:+STEP, e.g. 4k:128k:x2";
    if (c2 == std::string::npos) throw Error("sequence length range '" + item + "' has no step", fix);
    const int64_t from = parse_token_count(item.substr(0, c1));
    const int64_t to = parse_token_count(item.substr(c1 + 1, c2 - c1 - 1));
    const std::string step = item.substr(c2 + 1);
    if (step.size() < 2 || (step[0] != 'x' && step[0] != '+')) throw Error("bad range step '" + step + "'", fix);
    if (from > to) throw Error("range '" + item + "' runs backwards", fix);
    if (step[0] == 'x') {
      // The whole factor must be a finite number: std::stod alone threw std::invalid_argument
      // (an "internal error") on "x?" and ignored junk after the digits.
      double f = 0;
      size_t used = 0;
      try {
        f = std::stod(step.substr(1), &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != step.size() - 1 || !std::isfinite(f)) throw Error("bad range factor '" + step + "'", fix);
      if (f <= 1.0 || from == 0) throw Error("geometric range '" + item + "' needs FROM > 0 and factor > 1", fix);
      // Points are counted before any is built, and none is rounded past TO (which would not
      // fit int64_t when TO is near its maximum).
      if (std::log(static_cast<double>(to) / static_cast<double>(from)) / std::log(f) + 1 > kMaxPoints)
        throw Error("range '" + item + "' expands to too many points", fix);
      for (double v = static_cast<double>(from); v <= static_cast<double>(to) * (1 + 1e-9); v *= f)
        out.insert(v + 0.5 >= static_cast<double>(to) ? to : static_cast<int64_t>(v + 0.5));
    } else {
      const int64_t inc = parse_token_count(step.substr(1));
      if (inc <= 0) throw Error("arithmetic range '" + item + "' needs a positive step", fix);
      if ((to - from) / inc + 1 > kMaxPoints) throw Error("range '" + item + "' expands to too many points", fix);
      for (int64_t v = from;; v += inc) {  // stops before v + inc could pass TO (or overflow)
        out.insert(v);
        if (to - v < inc) break;
      }
    }
    if (out.size() > kMaxPoints) throw Error("range '" + item + "' expands to too many points", fix);
  }
  if (out.empty()) throw Error("no sequence lengths given", "pass e.g. --seq-len 4k,32k or 4k:128k:x2");
  return {out.begin(), out.end()};
}

void SweepSpec::validate() const {
  for (const auto& m : models) find_model_preset(m);
  for (const auto& d : kv_dtypes) parse_dtype(d);
  if (models.empty()) throw Error("no model given", "pass --model llama-3.1-8b (see --list-models)");
  if (strategies.empty()) throw Error("no strategy given", "pass --strategy all or a list");
  for (int b : batches)
    if (b <= 0 || b > 4096) throw Error("batch " + std::to_string(b) + " is out of range", "use --batch between 1 and 4096");
  for (int64_t n : seq_lens)
    if (n <= 0) throw Error("sequence length " + std::to_string(n) + " leaves nothing to attend to", "use --seq-len >= 1");
  if (decode_steps < stop.warmup_steps + 1)
    throw Error("--decode-steps " + std::to_string(decode_steps) + " leaves no timed step after " +
                    std::to_string(stop.warmup_steps) + " warm-up steps",
                "raise --decode-steps or lower --warmup");
  if (stop.min_samples < 1) throw Error("--min-samples must be >= 1", "pass --min-samples 5");
  if (repetitions < 1 || repetitions > 100)
    throw Error("--repetitions " + std::to_string(repetitions) + " is out of range", "use 1 to 100 (3-5 gate CI well)");
  if (stop.max_noise <= 0) throw Error("--max-noise must be > 0", "pass e.g. --max-noise 0.05 (5%)");
  if (stop.timeout_s <= 0) throw Error("--timeout must be > 0 seconds", "pass e.g. --timeout 30");
  if (page_tokens <= 0 || page_tokens % 16 != 0)
    throw Error("--page-tokens " + std::to_string(page_tokens) + " is not a positive multiple of 16", "use 16, 32 or 64");
  if (workload.rfind("trace:", 0) != 0) parse_workload_kind(workload);
  if (share_count < 1 || share_index < 0 || share_index >= share_count)
    throw Error("sweep share " + std::to_string(share_index) + " of " + std::to_string(share_count) + " is out of range",
                "this is a bug in the fleet code; please report it", kExitFailure);
}

std::map<std::string, std::string> SweepSpec::echo() const {
  auto join = [](const auto& v) {
    std::string s;
    for (const auto& x : v) {
      if (!s.empty()) s += ",";
      if constexpr (std::is_arithmetic_v<std::decay_t<decltype(x)>>) s += std::to_string(x);
      else s += x;
    }
    return s;
  };
  std::map<std::string, std::string> e = {
      {"models", join(models)}, {"kv_dtypes", join(kv_dtypes)}, {"seq_lens", join(seq_lens)},
      {"batches", join(batches)}, {"strategies", join(strategies)},
      {"decode_steps", std::to_string(decode_steps)}, {"page_tokens", std::to_string(page_tokens)},
      {"workload", workload}, {"seed", std::to_string(seed)}, {"accuracy_steps", std::to_string(accuracy_steps)},
      {"repetitions", std::to_string(repetitions)},
      {"warmup_steps", std::to_string(stop.warmup_steps)}, {"min_samples", std::to_string(stop.min_samples)},
      {"max_noise", std::to_string(stop.max_noise)}, {"min_time_s", std::to_string(stop.min_time_s)},
      {"timeout_s", std::to_string(stop.timeout_s)}, {"accelerator", accelerator.kind},
      {"accelerator_capacity_bytes", std::to_string(accelerator.capacity_bytes)}};
  if (!kv_node.empty()) e["kv_node"] = kv_node;
  if (!emulate_cxl.empty()) e["emulate_cxl"] = emulate_cxl;
  for (const auto& [k, v] : strategy_options) e["opt." + k] = v;
  return e;
}

}  // namespace hb::run
