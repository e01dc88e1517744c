#pragma once
// The options `run` and `validate-model` share: what to sweep (models, lengths, batches,
// strategies, KV types, strategy parameters), how long to sample each point, and the
// accelerator's budget and threads. Declared once here so both commands accept the same
// syntax, units and limits and show one help text; each command adds only its own options.
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/vocabulary.h"

#include "kernels/backend.h"
#include "bench/sweep_spec.h"

namespace hb::cli {

// The sweep axes as typed (lists and ranges), before parsing; the defaults are per command.
struct SweepAxesText {
  std::string models = "llama-3.1-8b", seq_lens = "4k,16k,32k", batches = "1", strategies = "all",
              kv_dtypes = "fp16";
  std::optional<std::string> kv_budgets;      // --kv-budget: absent = none
  std::vector<std::string> strategy_options;  // --opt STRATEGY.KEY=VALUE, repeatable
};

// Declares the shared options on `sub`: the axes into `axes`, everything else into `spec`.
void add_sweep_options(CLI::App& sub, SweepAxesText& axes, bench::SweepSpec& spec);

// An option whose value is one name of `vocab` (core/vocabulary.h), stored as the enum: CLI11
// keeps an enum through its integer, so the name is turned into that integer here and a misspelt
// name is a usage error (exit 2) naming `what` and the allowed names; it never reaches the
// runner. The default shown is the current value's name.
template <class E, size_t N>
CLI::Option* add_vocabulary_option(CLI::App& sub, const std::string& name, E& value,
                                   const Vocabulary<E, N>& vocab, const std::string& what,
                                   const std::string& help) {
  auto by_name = [&vocab, what](std::string& text) -> std::string {
    const std::optional<E> v = vocab.parse(text);
    if (!v) return "unknown " + what + " '" + text + "' (fix: use one of: " + vocab.list() + ")";
    text = std::to_string(static_cast<int>(*v));
    return {};
  };
  std::string names;
  for (const char* n : vocab.names) names += (names.empty() ? "" : "|") + std::string(n);
  return sub.add_option(name, value, help)
      ->transform(CLI::Validator(by_name, names))
      ->default_str(vocab.name(value));
}

// --accelerator NAME into `kind` (auto | cpu | cuda); an unknown name is a usage error (exit 2).
// `run` and `validate-model` accept the same names but say different things about them.
CLI::Option* add_accelerator_option(CLI::App& sub, AcceleratorKind& kind, const std::string& help);

// Parses `axes` into `spec` (models, KV types, strategies, batches, --opt pairs and, unless
// `keep_seq_lens`, the lengths): an hb::Error naming the option for anything malformed.
void apply_sweep_axes(const SweepAxesText& axes, bench::SweepSpec& spec,
                      bool keep_seq_lens = false);

}  // namespace hb::cli
