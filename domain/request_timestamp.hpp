#pragma once
// X-QTG-Timestamp (SPEC §5): unix seconds as a decimal integer.
#include <optional>
#include <string_view>

namespace mg::api {

/// An optional '-' and 1–18 ASCII digits (so it always fits a long long);
/// nullopt for anything else (spaces, '+', exponents, empty).
std::optional<long long> parse_request_timestamp(std::string_view text);

} // namespace mg::api
