#pragma once
// Pure checks of the movement calls' inputs (SPEC §5): bodies parsed into
// typed values or refused with every field error at once (400 for missing
// fields, wrong JSON types and unknown fields; 422 for well-formed but
// invalid values), decimal amounts compared as strings (never floats),
// callback URL hosts, path ids and list cursors.
#include <optional>
#include <string>
#include <string_view>

#include "domain/api.hpp"
#include "domain/json.hpp"
#include "domain/url.hpp" // callback_url_problem

namespace mg::domain {

/// A value, or the refusal that answers the call.
template <class T> struct checked {
  std::optional<T> value;
  api::error error;

  bool ok() const { return value.has_value(); }
};

/// POST /v3/movements.
struct create_body {
  std::string template_key;
  int template_version = 0;        // 0: latest
  std::string intent;              // the JSON object as given (compact)
  std::string input_params = "{}"; // JSON object
  std::string callback_url;        // "" = none
  std::string idempotency_key;
  std::string amount;    // intent.amount, a valid decimal > 0
  std::string body_hash; // sha256 of the body's canonical JSON
};

checked<create_body> parse_create_body(const json::value& body, bool allow_private_callbacks);

struct approve_body {
  std::string approver_id;
};
checked<approve_body> parse_approve_body(const json::value& body);

/// reject and cancel: `{reason?}`.
struct reason_body {
  std::string reason;
};
checked<reason_body> parse_reason_body(const json::value& body);

/// resume: `{}`.
checked<bool> parse_resume_body(const json::value& body);

struct retry_body {
  std::string node_key;
};
checked<retry_body> parse_retry_body(const json::value& body);

struct complete_body {
  std::string provider_refs = "{}"; // JSON object
};
checked<complete_body> parse_complete_body(const json::value& body);

/// Digits with an optional `.fraction`, no sign, no exponent, at most 78
/// digits in all (ASCII digits only).
bool is_decimal(std::string_view s);
/// A request amount (SPEC §5): a decimal with no leading zero before another
/// digit ("01" is refused, "0.5" is fine).
bool is_amount(std::string_view s);
/// A valid decimal that is not zero.
bool is_positive_decimal(std::string_view s);
/// Compares two valid decimals exactly: <0, 0, >0.
int compare_decimals(std::string_view a, std::string_view b);

/// 1–128 characters of [A-Za-z0-9._:-].
bool is_idempotency_key(std::string_view s);

/// Canonical textual UUID (8-4-4-4-12 hex digits, any case).
bool is_uuid(std::string_view s);

/// `limit` query parameter: "" → 50; else decimal 1..200.
std::optional<int> parse_limit(std::string_view s);

/// Keyset position (time in microseconds since the epoch, row id), carried
/// in an opaque hex cursor.
struct list_cursor {
  long long micros = 0;
  std::string id;
};
std::string encode_cursor(const list_cursor& c);
/// nullopt for anything encode_cursor did not produce.
std::optional<list_cursor> decode_cursor(std::string_view s);

} // namespace mg::domain
