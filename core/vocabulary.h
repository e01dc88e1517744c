#pragma once
// A closed vocabulary: an enum whose values have fixed names. The names are written and read
// only where text crosses a boundary (report JSON, command-line options, rendered tables);
// inside the program the enum is compared, never its text, so a misspelt status is a compile
// error instead of a comparison that is silently never true.
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace hb {

// E's values must be 0 .. N-1 in the order of `names`.
template <class E, size_t N>
struct Vocabulary {
  std::array<const char*, N> names;

  // False for a value cast from an out-of-range integer (a bug): name() must not be asked then.
  bool contains(E e) const { return static_cast<size_t>(e) < N; }
  const char* name(E e) const { return contains(e) ? names[static_cast<size_t>(e)] : "?"; }
  // nullopt for a text outside the vocabulary (the caller says where it came from).
  std::optional<E> parse(std::string_view text) const {
    for (size_t i = 0; i < N; ++i)
      if (text == names[i]) return static_cast<E>(i);
    return std::nullopt;
  }
  // "ok, oom, unsupported": the allowed values, for error messages.
  std::string list() const {
    std::string s;
    for (const char* n : names) s += (s.empty() ? "" : ", ") + std::string(n);
    return s;
  }
};

}  // namespace hb
