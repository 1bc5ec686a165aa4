#pragma once
// The one reader for JSON that enters the process (SPEC §5 "Hostile
// input"): strict UTF-8, no U+0000, no lone surrogate, no member name twice
// in one object, at most `max_depth` levels, and an iterative parse (the
// input's depth never becomes the stack's).
//
// Besides the document it returns its own serialisation of what it read,
// built from the same parse events: compact, strings re-escaped, numbers
// written back exactly as the literals sent (the document holds them as
// int64/uint64 when they fit, else as the nearest double). That text is
// what gets stored, so what is checked is what is stored.
#include <map>
#include <optional>
#include <rapidjson/document.h>
#include <string>
#include <string_view>

namespace mg::json {

constexpr int max_input_depth = 64;

struct read_limits {
  int max_depth = max_input_depth; // nesting levels of objects and arrays
  bool refuse_duplicates = true;   // a member name twice in one object
};

struct read_result {
  rapidjson::Document doc;
  /// Compact serialisation of the whole document, numbers as sent.
  std::string text;
  /// When the root is an object: each member's value as serialised in `text`.
  std::map<std::string, std::string> members;
};

/// Reads `text`; on failure returns nullopt and, when `error` is given, says
/// why and at which byte offset.
std::optional<read_result> read(std::string_view text, std::string* error = nullptr,
                                const read_limits& limits = {});

} // namespace mg::json
