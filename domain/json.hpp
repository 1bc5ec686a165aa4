#pragma once
// Thin helpers over RapidJSON: parsing with a clear error, dumping, and the
// canonical form used for hashing (object keys sorted, no whitespace).
#include <optional>
#include <rapidjson/document.h>
#include <string>
#include <string_view>

namespace mg::json {

using document = rapidjson::Document;
using value = rapidjson::Value;

/// Parses `text`; on failure returns nullopt and, when `error` is given,
/// a message with the byte offset.
std::optional<document> parse(std::string_view text, std::string* error = nullptr);

/// Parses `text` that the program itself wrote (database columns); throws
/// std::runtime_error naming `what` when it is not JSON.
document parse_trusted(std::string_view text, const char* what);

/// Compact serialisation of `v`.
std::string dump(const value& v);

/// Canonical serialisation: object members sorted by key (byte order),
/// arrays in order, no whitespace. Equal JSON values give equal strings.
std::string canonical(const value& v);

/// Member `key` of object `v` as a string, or `fallback`.
std::string get_string(const value& v, const char* key, std::string fallback = {});

/// Quotes and escapes `s` as a JSON string literal.
std::string quote(std::string_view s);

} // namespace mg::json
