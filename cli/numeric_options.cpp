#include "cli/numeric_options.h"

#include <climits>
#include <functional>

#include "core/error.h"
#include "core/thread_pool.h"
#include "reports/accuracy_target.h"

namespace hb::cli {

namespace {

// A CLI11 transform: `canonical` parses the text strictly (throwing hb::Error) and returns the
// exact number CLI11 then stores. CLI11 prefixes the message with the option's name.
CLI::Validator strict(const std::string& type,
                      std::function<std::string(const std::string&)> canonical,
                      const std::string& note = {}) {
  return CLI::Validator(
      [canonical = std::move(canonical), note](std::string& text) -> std::string {
        try {
          text = canonical(text);
          return {};
        } catch (const Error& e) {
          return e.problem() + " (fix: " + e.fix() + (note.empty() ? "" : "; " + note) + ")";
        }
      },
      type);
}

}  // namespace

CLI::Option* add_accuracy_target_option(CLI::App& app, std::string& target) {
  return app
      .add_option("--accuracy-target", target,
                  "Accuracy a point needs to count in the report's \"fastest within\" row: "
                  "recall:X (attention-mass recall >= X; default recall:0.9, the figure "
                  "sparse-attention papers report, independent of the value vectors), cosine:X "
                  "(output cosine similarity >= X), or a bare number meaning recall. Points "
                  "without accuracy figures never qualify")
      ->transform(strict("METRIC:X", [](const std::string& t) {
        return reports::parse_accuracy_target(t).text();
      }));
}

CLI::Option* add_integer_option(CLI::App& app, const std::string& name, int& target,
                                const std::string& description, int64_t min, int64_t max,
                                const std::string& note) {
  if (max > INT_MAX) max = INT_MAX;
  if (min < INT_MIN) min = INT_MIN;
  const std::string type = max == INT_MAX
                               ? "INT>=" + std::to_string(min)
                               : "INT:" + std::to_string(min) + ".." + std::to_string(max);
  return app.add_option(name, target, description)
      ->transform(strict(
          type,
          [min, max](const std::string& t) {
            return std::to_string(parse::integer(t, "value", min, max));
          },
          note));
}

CLI::Option* add_integer_option(CLI::App& app, const std::string& name, uint64_t& target,
                                const std::string& description) {
  return app.add_option(name, target, description)
      ->transform(strict("UINT64", [](const std::string& t) {
        return std::to_string(parse::unsigned_integer(t, "value"));
      }));
}

CLI::Option* add_real_option(CLI::App& app, const std::string& name, double& target,
                             const std::string& description, const parse::RealRange& range) {
  return app.add_option(name, target, description)
      ->transform(strict("NUMBER " + range.text(), [range](const std::string& t) {
        return parse::exact_text(parse::real(t, "value", range));
      }));
}

CLI::Option* add_percent_option(CLI::App& app, const std::string& name, double& target_fraction,
                                const std::string& description, const parse::RealRange& range) {
  return app.add_option(name, target_fraction, description)
      ->transform(strict("PERCENT " + range.text(),
                         [range](const std::string& t) {
                           std::string_view v = t;
                           if (!v.empty() && v.back() == '%') v.remove_suffix(1);
                           return parse::exact_text(parse::real(v, "value", range) / 100);
                         }))
      ->default_str(parse::exact_text(100 * target_fraction));
}

CLI::Option* add_seconds_option(CLI::App& app, const std::string& name, double& target,
                                const std::string& description, const parse::RealRange& range) {
  return app.add_option(name, target, description)
      ->transform(strict("SECONDS " + range.text(), [range](const std::string& t) {
        return parse::exact_text(parse::seconds(t, "value", range));
      }));
}

CLI::Option* add_size_option(CLI::App& app, const std::string& name, int64_t& target,
                             const std::string& description, int64_t min_bytes) {
  return app.add_option(name, target, description)
      ->transform(strict("SIZE", [min_bytes](const std::string& t) {
        return std::to_string(parse::bytes(t, "value", min_bytes));
      }));
}

int max_threads_option() { return static_cast<int>(allowed_cpus().size()); }

std::string max_threads_note() {
  return "this process may run on " + std::to_string(max_threads_option()) +
         " CPUs (sched_getaffinity)";
}

}  // namespace hb::cli
