#pragma once
// Thin helpers over RapidJSON: parsing with a clear error, dumping, and the
// canonical form used for hashing (object keys sorted, no whitespace).
#include <optional>
#include <rapidjson/document.h>
#include <string>
#include <string_view>

#include "domain/json_reader.hpp"

namespace mg::json {

using document = rapidjson::Document;
using value = rapidjson::Value;

/// Nesting allowed when reading our own database columns.
constexpr int trusted_max_depth = 256;

/// Parses `text` with the hostile-input reader (json_reader.hpp: strict
/// UTF-8, no U+0000, no duplicate names, depth ≤ 64, iterative); on failure
/// returns nullopt and, when `error` is given, a message with the byte
/// offset. Use read() when the exact serialisation is needed too.
std::optional<document> parse(std::string_view text, std::string* error = nullptr);

/// Parses `text` that the program itself wrote (database columns): the same
/// iterative reader, depth ≤ trusted_max_depth, duplicates tolerated; throws
/// std::runtime_error naming `what` when it is not JSON.
document parse_trusted(std::string_view text, const char* what);

/// Compact serialisation of `v` (iterative: never recurses on its depth).
std::string dump(const value& v);

/// Canonical serialisation: object members sorted by key (byte order),
/// arrays in order, no whitespace. Equal JSON values give equal strings.
std::string canonical(const value& v);

/// Member `key` of object `v` as a string, or `fallback`.
std::string get_string(const value& v, const char* key, std::string fallback = {});

/// `base` with the members of `overlay` set over it, as PostgreSQL's
/// `jsonb || jsonb` does for two objects. `base` is our own text (parsed as
/// trusted); an `overlay` that is not a JSON object leaves `base` as it is.
std::string merge_members(std::string_view base, std::string_view overlay);

/// Quotes and escapes `s` as a JSON string literal; ill-formed UTF-8 in `s`
/// is replaced by U+FFFD, so the result is always valid.
std::string quote(std::string_view s);

} // namespace mg::json
