#pragma once
// "host:port" for the HTTP listeners (port 0 = pick a free one).
#include <string>

namespace mg::http {

struct listen_address {
  std::string host;
  int port = 0;
};

/// Splits at the last ':' ("[::1]:80" loses its brackets); throws
/// std::invalid_argument when the port is not 0..65535.
listen_address parse_listen_address(const std::string& host_port);

} // namespace mg::http
