#include "bench/model_config.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "bench/sweep_spec.h"
#include "core/error.h"
#include "core/json_text.h"

namespace hb::bench {

namespace {

using Json = nlohmann::json;

struct FamilyOf {
  const char* model_type;
  ModelFamily family;
  const char* note;  // what the layer model leaves out for this family; empty when nothing
};

// Gemma's FFN is gated (GeGLU: gate, up, down), so it is priced as llama's; its tied embeddings
// still stream a full LM head per step. Sliding windows (mistral, gemma2) are not modelled:
// attention covers the whole context, as the papers' full-KV baselines run it.
constexpr FamilyOf kFamilies[] = {
    {"llama", ModelFamily::llama, ""},
    {"mistral", ModelFamily::llama, "mistral as llama; sliding_window not modelled"},
    {"qwen2", ModelFamily::qwen, ""},
    {"gemma", ModelFamily::llama, "gemma as llama: gated (GeGLU) FFN"},
    {"gemma2", ModelFamily::llama,
     "gemma2 as llama: gated (GeGLU) FFN; sliding-window layers and soft-capping not modelled"},
    {"opt", ModelFamily::opt, ""},
};

// Keys that mean a mixture-of-experts FFN, which the dense layer model cannot price.
constexpr const char* kExpertKeys[] = {"num_local_experts", "num_experts", "n_routed_experts",
                                       "moe_intermediate_size", "num_experts_per_tok"};

constexpr const char* kNeeds =
    "a config.json with model_type (llama, mistral, qwen2, gemma, gemma2 or opt) and positive "
    "integers num_hidden_layers, hidden_size, num_attention_heads, intermediate_size (ffn_dim "
    "for opt), vocab_size and max_position_embeddings (num_key_value_heads and head_dim "
    "optional); or a preset name (run --list-models)";

[[noreturn]] void refuse(const std::string& origin, const std::string& what) {
  throw Error(origin + ": " + what, "give " + std::string(kNeeds));
}

// Built by appending: GCC 12 warns (-Wrestrict, a false positive) on "\"" + std::string here.
std::string quoted(const char* key) {
  std::string q = "\"";
  q += key;
  q += '"';
  return q;
}

bool given(const Json& j, const char* key) { return j.contains(key) && !j.at(key).is_null(); }

// A positive integer no larger than `most` (bounds keep every width product inside int64).
int positive(const Json& j, const char* key, int64_t most, const std::string& origin) {
  if (!given(j, key)) refuse(origin, "missing key " + quoted(key));
  const Json& v = j.at(key);
  if (!v.is_number_integer()) refuse(origin, quoted(key) + " is " + v.dump() + ", not an integer");
  const bool inside = v.is_number_unsigned() ? v.get<uint64_t>() >= 1 &&
                                                   v.get<uint64_t>() <= static_cast<uint64_t>(most)
                                             : v.get<int64_t>() >= 1 && v.get<int64_t>() <= most;
  if (!inside)
    refuse(origin, quoted(key) + " is " + v.dump() + ", outside 1.." + std::to_string(most));
  return static_cast<int>(v.get<int64_t>());
}

const FamilyOf& family_of(const Json& j, const std::string& origin) {
  if (!given(j, "model_type") || !j.at("model_type").is_string())
    refuse(origin, "missing string key \"model_type\"");
  const std::string type = j.at("model_type").get<std::string>();
  for (const auto& f : kFamilies)
    if (type == f.model_type) return f;
  refuse(origin, "model_type \"" + type + "\" is not a family the layer model represents");
}

// torch_dtype (dtype in newer transformers): the weights' element type. Absent: fp16, said in
// the model's source.
DType weight_dtype(const Json& j, const std::string& origin, std::string& note) {
  const char* key = given(j, "torch_dtype") ? "torch_dtype" : given(j, "dtype") ? "dtype" : nullptr;
  if (!key) {
    note += (note.empty() ? "" : "; ") + std::string("no torch_dtype: fp16 assumed");
    return DType::f16;
  }
  const Json& v = j.at(key);
  const std::string s = v.is_string() ? v.get<std::string>() : v.dump();
  if (s == "float16") return DType::f16;
  if (s == "bfloat16") return DType::bf16;
  if (s == "float32") return DType::f32;
  refuse(origin, quoted(key) + " is \"" + s + "\", not float16, bfloat16 or float32");
}

void refuse_experts(const Json& j, const std::string& origin) {
  for (const char* k : kExpertKeys)
    if (given(j, k) && j.at(k) != Json(0) && j.at(k) != Json(1))  // 0 or 1 expert: dense
      refuse(origin,
             quoted(k) + " says mixture-of-experts, which the dense layer model cannot price");
}

void refuse_projected_embeddings(const Json& j, const ModelPreset& m, const std::string& origin) {
  if (m.family == ModelFamily::opt && given(j, "word_embed_proj_dim") &&
      j.at("word_embed_proj_dim") != Json(m.hidden))
    refuse(origin,
           "\"word_embed_proj_dim\" differs from hidden_size (an OPT with projected "
           "embeddings, like opt-350m), which the layer model does not represent");
}

std::string model_name(const Json& j, const std::string& fallback) {
  if (!given(j, "_name_or_path") || !j.at("_name_or_path").is_string()) return fallback;
  const std::string n = j.at("_name_or_path").get<std::string>();
  // A name must read back from the report's comma-separated model list.
  if (n.empty() ||
      std::any_of(n.begin(), n.end(), [](unsigned char c) { return c < 0x20 || c == ','; }))
    return fallback;
  // A local checkpoint path says where it was saved, not what it is: its last component.
  if (n.front() == '/' || n.front() == '.') {
    std::filesystem::path path = std::filesystem::path(n).lexically_normal();
    if (!path.has_filename()) path = path.parent_path();  // "./ckpt/my-opt/"
    const std::string leaf = path.filename().string();
    return leaf.empty() ? fallback : leaf;
  }
  return n;
}

std::string errno_text() { return std::strerror(errno); }

std::string read_bounded(const std::string& file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0)
    throw Error("cannot read model config " + file + ": " + errno_text(),
                "give a config.json, a folder holding one, or a preset (run --list-models)");
  if (!S_ISREG(st.st_mode))
    throw Error("model config " + file + " is not a regular file",
                "give a config.json, a folder holding one, or a preset (run --list-models)");
  if (st.st_size > kMaxModelConfigBytes)
    throw Error("model config " + file + " has " + std::to_string(st.st_size) +
                    " bytes, more than the " + std::to_string(kMaxModelConfigBytes) +
                    " a config.json can have",
                "give the model's config.json, not a checkpoint file");
  std::ifstream in(file, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  if (!in && !in.eof())
    throw Error("cannot read model config " + file + ": " + errno_text(), "check the file",
                kExitFailure);
  return ss.str();
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

bool is_model_config_path(std::string_view item) {
  for (const auto& p : model_presets())
    if (p.name == lower(std::string(item))) return false;
  const bool json = item.size() >= 5 && item.substr(item.size() - 5) == ".json";
  std::error_code ec;
  return item.find('/') != std::string_view::npos || json ||
         std::filesystem::exists(std::filesystem::path(item), ec);
}

ModelPreset parse_model_config(const std::string& text, const std::string& origin,
                               const std::string& name) {
  Json j;
  try {
    j = parse_json_text<Json>(text);
  } catch (const Json::exception& e) {
    throw Error(origin + ": not JSON (" + e.what() + ")", "give " + std::string(kNeeds));
  }
  if (!j.is_object()) refuse(origin, "expected a JSON object");
  const FamilyOf& f = family_of(j, origin);
  refuse_experts(j, origin);
  std::string note = f.note;
  ModelPreset m;
  m.name = model_name(j, name);
  m.family = f.family;
  m.layers = positive(j, "num_hidden_layers", 1 << 12, origin);
  m.hidden = positive(j, "hidden_size", 1 << 20, origin);
  m.ffn =
      positive(j, f.family == ModelFamily::opt ? "ffn_dim" : "intermediate_size", 1 << 22, origin);
  m.vocab = positive(j, "vocab_size", 1 << 24, origin);
  m.max_context = positive(j, "max_position_embeddings", 1 << 30, origin);
  m.shape.q_heads = positive(j, "num_attention_heads", 1 << 16, origin);
  m.shape.kv_heads = given(j, "num_key_value_heads")
                         ? positive(j, "num_key_value_heads", 1 << 16, origin)
                         : m.shape.q_heads;  // absent: every query head has its own KV (MHA)
  if (given(j, "head_dim")) {
    m.shape.head_dim = positive(j, "head_dim", 1 << 16, origin);
  } else if (m.hidden % m.shape.q_heads != 0) {
    refuse(origin, "no \"head_dim\" and hidden_size " + std::to_string(m.hidden) +
                       " is not a multiple of num_attention_heads " +
                       std::to_string(m.shape.q_heads));
  } else {
    m.shape.head_dim = m.hidden / m.shape.q_heads;
  }
  m.shape.kv_dtype = weight_dtype(j, origin, note);
  refuse_projected_embeddings(j, m, origin);
  try {
    m.shape.validate();
  } catch (const Error& e) {
    refuse(origin, e.problem());
  }
  m.source = origin + (note.empty() ? "" : " (" + note + ")");
  return m;
}

ModelPreset read_model_config(const std::string& path) {
  std::error_code ec;
  std::filesystem::path file(path);
  if (std::filesystem::is_directory(file, ec)) file /= "config.json";
  std::string fallback = file.stem().string();
  if (file.filename() == "config.json") {
    const auto folder = std::filesystem::absolute(file, ec).parent_path().filename().string();
    if (!folder.empty()) fallback = folder;
  }
  return parse_model_config(read_bounded(file.string()), file.string(), fallback);
}

void resolve_model_configs(SweepSpec& spec) {
  for (auto& item : spec.models) {
    const bool resolved = std::any_of(spec.own_models.begin(), spec.own_models.end(),
                                      [&](const ModelPreset& o) { return o.name == item; });
    if (resolved || !is_model_config_path(item)) continue;
    ModelPreset m = read_model_config(item);
    auto same = std::find_if(spec.own_models.begin(), spec.own_models.end(),
                             [&](const ModelPreset& o) { return o.name == m.name; });
    if (same != spec.own_models.end() && same->source != m.source)
      throw Error("two --model configs are both named '" + m.name + "' (" + same->source + ", " +
                      m.source + ")",
                  "give each model once, or set a distinct _name_or_path in one config.json");
    item = m.name;
    if (same == spec.own_models.end()) spec.own_models.push_back(std::move(m));
  }
}

}  // namespace hb::bench
