#pragma once
// http(s) URLs split the way cpp-httplib wants them: an origin for the client
// and a request target for each call; and the "host:port" of a listener.
#include <optional>
#include <string>

namespace mg::domain {

struct url_parts {
  std::string origin; // scheme://host[:port]
  std::string target; // path?query, at least "/"
};

/// nullopt unless the scheme is http or https; a fragment is dropped.
std::optional<url_parts> split_url(const std::string& url);

struct host_port {
  std::string host;
  int port = 0; // 0: pick a free one
};

/// Splits at the last ':' ("[::1]:80" loses its brackets); throws
/// std::invalid_argument when the host is empty or the port not 0..65535.
host_port parse_host_port(const std::string& address);

} // namespace mg::domain
