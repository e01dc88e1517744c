#pragma once
// A model given by its Hugging Face config.json (`--model PATH`, a file or a folder holding
// config.json) instead of a preset name: the decoder's widths read from the llama, mistral, qwen2,
// gemma and opt families' keys. An architecture the layer model cannot represent (another
// model_type, mixture-of-experts, a missing or non-integer width) is refused with the keys it
// needs, never approximated.
#include <string>
#include <string_view>

#include "core/model_presets.h"

namespace hb::bench {

struct SweepSpec;

// The most bytes a config.json may have: real ones are a few KiB; this bounds what a wrong path
// (a checkpoint shard, a device file) could make the reader load.
inline constexpr int64_t kMaxModelConfigBytes = int64_t{1} << 20;

// True when a --model item names a file or folder rather than a preset: it is no preset's name
// and it contains a '/', ends in ".json" or exists on disk. Presets keep their names.
bool is_model_config_path(std::string_view item);

// The model the config text describes. `origin` names the file in every error; `name` is the
// model's name unless the config's _name_or_path gives one.
ModelPreset parse_model_config(const std::string& text, const std::string& origin,
                               const std::string& name);

// Reads `path` (a config.json, or a folder holding one): a regular file of at most
// kMaxModelConfigBytes. The model is named by its _name_or_path, else by the folder (for a file
// called config.json) or the file's stem; its source records the file.
ModelPreset read_model_config(const std::string& path);

// Replaces every path among spec.models by the name of the model read from it, added to
// spec.own_models (found before the presets by SweepSpec::model).
void resolve_model_configs(SweepSpec& spec);

}  // namespace hb::bench
