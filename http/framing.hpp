#pragma once
// SPEC §5's HTTP framing rules, checked on a request's headers before any
// byte of its body is read: bodies are framed by one plain decimal
// Content-Length, never by Transfer-Encoding, and are never compressed.
#include <cstddef>
#include <optional>

#include <httplib.h>

#include "domain/api.hpp"

namespace mg::http {

/// The refusal for a request whose framing is not allowed (411, 415, 400,
/// or 413 when Content-Length is over `max_body_bytes`); nullopt when the
/// body may be read. The connection must be closed after any refusal: its
/// unread body would otherwise be taken for the next request.
std::optional<api::error> framing_refusal(const httplib::Headers& headers, size_t max_body_bytes);

} // namespace mg::http
