#pragma once
// Strict UTF-8 (RFC 3629): what every string that enters must be. No
// overlong forms, no encoded surrogates (U+D800..U+DFFF), nothing above
// U+10FFFF.
#include <string>
#include <string_view>

namespace mg::domain {

/// True when `s` is well-formed UTF-8.
bool is_valid_utf8(std::string_view s);

/// True when `s` is well-formed UTF-8 and holds no U+0000: what PostgreSQL
/// text and jsonb accept.
bool is_clean_text(std::string_view s);

/// `s` with each ill-formed sequence replaced by U+FFFD, so that text
/// echoing hostile input can go into a JSON body.
std::string to_valid_utf8(std::string_view s);

} // namespace mg::domain
