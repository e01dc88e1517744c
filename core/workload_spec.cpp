// The workload families' names, defaults and knobs: `--workload FAMILY[:KNOB=VALUE,...]`.
// One table drives the parser, the report's label and the help text, so they cannot disagree.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string_view>

#include "core/error.h"
#include "core/parse.h"
#include "core/workload.h"

namespace hb {

namespace {

using Kind = WorkloadSpec::Kind;

// Which families a knob belongs to (Kind::needle is diffuse with a needle: it has diffuse's).
enum FamilyBit : unsigned { kDiffuse = 1, kUniform = 2, kLlama = 4, kRetrieval = 8 };
constexpr unsigned kAll = kDiffuse | kUniform | kLlama | kRetrieval;
constexpr unsigned kRealistic = kLlama | kRetrieval;

unsigned family_bit(Kind k) {
  switch (k) {
    case Kind::structured:
    case Kind::needle:
      return kDiffuse;
    case Kind::uniform:
      return kUniform;
    case Kind::llama_like:
      return kLlama;
    case Kind::retrieval:
      return kRetrieval;
  }
  return 0;
}

// A knob: a float, int or bool member of WorkloadSpec with its range and families.
struct Knob {
  const char* name;
  unsigned families;
  float WorkloadSpec::*real = nullptr;
  int WorkloadSpec::*integer = nullptr;
  bool WorkloadSpec::*flag = nullptr;
  double min, max;
  const char* help;

  double get(const WorkloadSpec& s) const {
    if (real) return s.*real;
    if (integer) return s.*integer;
    return (s.*flag) ? 1 : 0;
  }
  bool whole() const { return real == nullptr; }
};

Knob real_knob(const char* name, unsigned fam, float WorkloadSpec::*m, double lo, double hi,
               const char* help) {
  return Knob{name, fam, m, nullptr, nullptr, lo, hi, help};
}
Knob int_knob(const char* name, unsigned fam, int WorkloadSpec::*m, double lo, double hi,
              const char* help) {
  return Knob{name, fam, nullptr, m, nullptr, lo, hi, help};
}

const std::vector<Knob>& knobs() {
  using S = WorkloadSpec;
  static const std::vector<Knob> k = {
      int_knob("sink_tokens", kDiffuse | kRealistic, &S::sink_tokens, 0, 1024,
               "first tokens that act as attention sinks"),
      real_knob("sink_mass", kRealistic, &S::sink_mass, 0, 0.95,
                "mean share of a head's attention on the sinks at every length (heads +-50%)"),
      real_knob("sink_logit", kDiffuse, &S::sink_logit, 0, 50, "logit of the sinks"),
      real_knob("decay", kRealistic, &S::decay, 0, 4,
                "locality: attention falls like distance^-decay"),
      real_knob("local_window", kRealistic, &S::local_window, 1, 65536,
                "tokens over which the locality bias is flat"),
      int_knob("local_frequencies", kRealistic, &S::local_frequencies, 0, 64,
               "RoPE-style frequency pairs that carry locality"),
      real_knob("recency_logit", kDiffuse, &S::recency_logit, 0, 50, "logit of age 0"),
      real_knob("recency_scale", kDiffuse, &S::recency_scale, 1, 1e6,
                "tokens over which recency fades"),
      int_knob("recency_frequencies", kDiffuse, &S::recency_frequencies, 0, 64,
               "frequency pairs that carry recency"),
      real_knob("salient_fraction", kRealistic, &S::salient_fraction, 0, 0.5,
                "share of the context that is salient"),
      real_knob("cluster_tokens", kRealistic, &S::cluster_tokens, 1, 4096,
                "mean length of a run of salient tokens"),
      real_knob("salient_logit", kRealistic, &S::salient_logit, 0, 50,
                "logit of a salient token for a query that wants its topic"),
      int_knob("topics", kRealistic, &S::topics, 1, 64,
               "topics salient runs belong to; heads weight them differently"),
      real_knob("heavy_fraction", kDiffuse, &S::heavy_fraction, 0, 1,
                "share of tokens that are heavy hitters (placed independently)"),
      real_knob("heavy_logit", kDiffuse, &S::heavy_logit, 0, 50, "logit of a heavy hitter"),
      int_knob("heavy_directions", kDiffuse, &S::heavy_directions, 0, 64,
               "feature directions heavy hitters use"),
      real_knob("noise", kAll, &S::noise_logit, 0, 20, "standard deviation of the logit noise"),
      real_knob("drift", kAll, &S::query_drift, 0, 1,
                "relative change of the query from one decode step to the next"),
      real_knob("value_mean", kAll, &S::value_mean, 0, 100,
                "norm of the values' shared mean direction relative to their noise"),
      Knob{"needle", kDiffuse, nullptr, nullptr, &S::needle, 0, 1, "1: plant a needle token"},
      real_knob("needle_at", kDiffuse | kRetrieval, &S::needle_position, 0, 1,
                "where the needle starts, as a fraction of the prompt"),
      int_knob("needle_tokens", kRetrieval, &S::needle_tokens, 1, 4096,
               "length of the needle span"),
      real_knob("needle_mass", kRetrieval, &S::needle_mass, 0, 0.95,
                "share of the decode queries' attention on the needle span"),
      real_knob("needle_logit", kDiffuse, &S::needle_logit, 0, 50, "logit of the needle"),
      real_knob("needle_value", kDiffuse | kRetrieval, &S::needle_value_scale, 0, 100,
                "norm of the needle's distinctive value"),
      int_knob("prompt_queries", kAll, &S::prompt_queries, 0, 1 << 20,
               "last prompt positions whose queries are given to strategies (H2O)"),
  };
  return k;
}

struct Family {
  const char* name;
  Kind kind;
  const char* help;
  Kind base = Kind::uniform;  // help lists only the knobs it does not share with this family
};
const std::vector<Family>& families() {
  static const std::vector<Family> f = {
      {"llama-like", Kind::llama_like,
       "calibrated to published measurements of real models (core/README.md)"},
      {"needle", Kind::retrieval,
       "llama-like plus a short span far from the end that holds most of the attention; "
       "llama-like's knobs and",
       Kind::llama_like},
      {"diffuse", Kind::structured,
       "the original generator, a stress case: sinks and locality fade with length"},
      {"uniform", Kind::uniform, "no structure: attention is nearly flat"},
  };
  return f;
}

// Shortest text that reads back to the same float ("0.4", not "0.400000006").
std::string number_text(double v, bool whole) {
  char buf[40];
  if (whole || (v == std::floor(v) && std::fabs(v) < 1e15)) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  for (int p = 1; p <= 9; ++p) {
    std::snprintf(buf, sizeof buf, "%.*g", p, v);
    if (std::strtof(buf, nullptr) == static_cast<float>(v)) break;
  }
  return buf;
}

}  // namespace

WorkloadSpec WorkloadSpec::defaults(Kind kind) {
  WorkloadSpec s;
  s.kind = kind;
  if (kind == Kind::llama_like || kind == Kind::retrieval) {
    s.sink_mass = 0.3f;
    s.decay = 1.2f;
    s.local_window = 16.0f;
    s.local_frequencies = 16;
    s.salient_fraction = 0.03f;
    s.cluster_tokens = 8.0f;
    s.salient_logit = 5.0f;
    s.topics = 4;
    s.noise_logit = 1.0f;
    s.query_drift = 0.2f;
    s.value_mean = 0.5f;
  }
  if (kind == Kind::retrieval) {
    s.needle = true;
    s.needle_position = 0.25f;
    s.needle_tokens = 8;
    s.needle_mass = 0.5f;
  }
  return s;
}

std::string WorkloadSpec::name() const {
  for (const auto& f : families())
    if (f.kind == kind) return f.name;
  return "diffuse";  // Kind::needle: diffuse with needle = 1
}

std::string WorkloadSpec::label() const {
  WorkloadSpec self = *this;
  if (kind == Kind::needle) {  // the same workload as structured with needle = 1
    self.kind = Kind::structured;
    self.needle = true;
  }
  const WorkloadSpec base = defaults(self.kind);
  std::string out = self.name(), sep = ":";
  for (const auto& k : knobs()) {
    if (!(k.families & family_bit(self.kind)) || k.get(self) == k.get(base)) continue;
    // Built with += : GCC 12 warns falsely (-Wrestrict, bug 105651) on chained operator+.
    out += sep;
    out += k.name;
    out += '=';
    out += number_text(k.get(self), k.whole());
    sep = ",";
  }
  return out;
}

WorkloadSpec parse_workload_spec(const std::string& text) {
  const size_t colon = text.find(':');
  const std::string fam = text.substr(0, colon);
  const Family* family = nullptr;
  for (const auto& f : families())
    if (fam == f.name) family = &f;
  static const Family structured_alias = {"structured", Kind::structured, ""};
  if (fam == "structured") family = &structured_alias;
  if (!family)
    throw Error("unknown workload '" + text + "'",
                "use one of: llama-like, needle, diffuse, uniform (each optionally followed by "
                ":KNOB=VALUE,...; see run --help), or trace:FILE.safetensors");
  WorkloadSpec spec = WorkloadSpec::defaults(family->kind);
  if (colon == std::string::npos) return spec;

  const unsigned bit = family_bit(family->kind);
  std::string names;  // the family's knobs, for the fix of an unknown one
  for (const auto& k : knobs())
    if (k.families & bit) names += std::string(names.empty() ? "" : ", ") + k.name;
  const std::string fname = family->kind == Kind::structured ? "diffuse" : family->name;

  std::set<std::string> seen;
  std::string_view rest(text);
  rest.remove_prefix(colon + 1);
  while (true) {
    const size_t comma = rest.find(',');
    const std::string item(rest.substr(0, comma));
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error("--workload " + fname + ": '" + item + "' is not KNOB=VALUE",
                  "write e.g. --workload " + fname + ":" + knobs()[0].name + "=4; " + fname +
                      " knobs: " + names);
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    const Knob* knob = nullptr;
    for (const auto& k : knobs())
      if (key == k.name && (k.families & bit)) knob = &k;
    if (!knob)
      throw Error("--workload " + fname + " has no knob '" + key + "'",
                  "use one of its knobs: " + names);
    if (!seen.insert(key).second)
      throw Error("--workload " + fname + ": knob '" + key + "' is given twice",
                  "give each knob once");
    const std::string what = "--workload " + fname + " knob " + key;
    if (knob->real)
      spec.*(knob->real) = static_cast<float>(
          parse::real(value, what, parse::RealRange::between(knob->min, knob->max)));
    else if (knob->integer)
      spec.*(knob->integer) = static_cast<int>(parse::integer(
          value, what, static_cast<int64_t>(knob->min), static_cast<int64_t>(knob->max)));
    else
      spec.*(knob->flag) = parse::integer(value, what, 0, 1) == 1;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  if (spec.needle && spec.sink_mass + spec.needle_mass > 0.95f && family->kind == Kind::retrieval)
    throw Error("--workload needle: sink_mass + needle_mass is " +
                    number_text(spec.sink_mass + spec.needle_mass, false) + ", above 0.95",
                "leave the rest of the context at least 5% of the attention");
  return spec;
}

WorkloadSpec::Kind parse_workload_kind(const std::string& s) { return parse_workload_spec(s).kind; }

std::string workload_help() {
  std::string out =
      "FAMILY[:KNOB=VALUE,...] or trace:FILE.safetensors. Families (default knobs in "
      "brackets):\n";
  for (const auto& f : families()) {
    out += std::string("  ") + f.name + ": " + f.help + "\n";
    const WorkloadSpec base = WorkloadSpec::defaults(f.kind);
    const WorkloadSpec shared = WorkloadSpec::defaults(f.base);
    for (const auto& k : knobs()) {
      if (!(k.families & family_bit(f.kind))) continue;
      if (f.base != Kind::uniform && (k.families & family_bit(f.base)) &&
          k.get(base) == k.get(shared))
        continue;  // listed with the base family, same default
      out += std::string("      ") + k.name + " [" + number_text(k.get(base), k.whole()) + "] " +
             number_text(k.min, k.whole()) + ".." + number_text(k.max, k.whole()) + ": " + k.help +
             "\n";
    }
  }
  out += "  (structured is an old name of diffuse)";
  return out;
}

}  // namespace hb
