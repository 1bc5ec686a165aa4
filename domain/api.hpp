#pragma once
// The shapes every front door shares (HTTP /v3, admin, cluster sessions):
// who is calling, what a call answers, and SPEC §5's error body.
#include <string>
#include <utility>
#include <vector>

namespace mg::api {

/// Key scopes (SPEC §5); none implies another.
enum class scope { create, approve, read, admin };

const char* to_string(scope s);

/// The verified key behind a call.
struct caller {
  std::string key_id;
  std::vector<scope> scopes;

  bool has(scope s) const;
};

struct field_error {
  std::string field;
  std::string message;
};

/// A refusal: HTTP status, a stable machine code and a human message.
struct error {
  int status = 400;
  std::string code;    // e.g. "invalid_request", "not_found", "conflict"
  std::string message; // never carries a secret
  std::vector<field_error> details;
};

/// What a call answers: a status and a JSON body (plus extra headers, e.g.
/// Retry-After).
struct reply {
  int status = 200;
  std::string body = "{}";
  std::vector<std::pair<std::string, std::string>> headers;
};

/// `{"error": {"code", "message", "details": [{"field", "message"}]}}`.
std::string error_body(const error& e);

reply error_reply(const error& e);

/// Common refusals with SPEC §5's statuses.
error bad_request(std::string message, std::vector<field_error> details = {});
error not_found(std::string message);
error unprocessable(std::string message, std::vector<field_error> details = {});
error conflict(std::string message);
error forbidden(std::string message);
error unavailable(std::string message = "database unavailable; retry later");

} // namespace mg::api
