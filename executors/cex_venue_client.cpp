#include "executors/cex_venue_client.hpp"

#include <cctype>
#include <stdexcept>

namespace mg::executors {

namespace {

/// RFC 3986 unreserved characters stay, everything else is %XX.
std::string percent_encode(std::string_view s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

} // namespace

cex_venue_client::cex_venue_client(const std::string& base_url, double timeout_seconds)
    : http_(base_url, timeout_seconds) {}

cex_transfer_page
cex_venue_client::fetch_transfers(const std::string& venue,
                                  const std::optional<std::string>& cursor) const {
  if (!is_valid_venue_name(venue))
    throw std::invalid_argument("invalid venue name");
  auto path = "/" + venue + "/transfers";
  if (cursor)
    path += "?since=" + percent_encode(*cursor);
  auto reply = http_.get(path, {{"Accept", "application/json"}});
  if (reply.status != 200)
    throw venue_reply_error("venue reply refused: HTTP " + std::to_string(reply.status));
  return parse_cex_transfer_page(reply.body);
}

} // namespace mg::executors
