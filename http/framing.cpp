#include "http/framing.hpp"

#include <strings.h>

#include "http/server_common.hpp"

namespace mg::http {

namespace {

bool plain_decimal(const std::string& s) {
  return !s.empty() && s.size() <= 19 && s.find_first_not_of("0123456789") == std::string::npos;
}

} // namespace

std::optional<api::error> framing_refusal(const httplib::Headers& headers, size_t max_body_bytes) {
  // httplib reads chunked bodies without a size limit and trusts the first
  // of several lengths: neither framing is accepted.
  if (headers.count("Transfer-Encoding") > 0)
    return api::error{
        411, "length_required", "Transfer-Encoding is not accepted; send a Content-Length", {}};
  // httplib would inflate a gzip body before any size check.
  auto encodings = headers.equal_range("Content-Encoding");
  for (auto it = encodings.first; it != encodings.second; ++it)
    if (strcasecmp(it->second.c_str(), "identity") != 0)
      return api::error{415, "unsupported_media_type", "Content-Encoding is not accepted", {}};
  if (headers.count("Content-Length") > 1)
    return api::error{400, "invalid_request", "Content-Length given more than once", {}};
  auto length = headers.find("Content-Length");
  if (length == headers.end())
    return std::nullopt;
  // httplib reads "1e3" as 1 (strtoull): only digits are a length.
  if (!plain_decimal(length->second))
    return api::error{400, "invalid_request", "Content-Length is not a decimal number", {}};
  if (std::stoull(length->second) > max_body_bytes)
    return payload_too_large();
  return std::nullopt;
}

} // namespace mg::http
