#include "http/listen_address.hpp"

#include <stdexcept>

namespace mg::http {

listen_address parse_listen_address(const std::string& host_port) {
  auto colon = host_port.rfind(':');
  if (colon == std::string::npos)
    throw std::invalid_argument("listen address '" + host_port + "': expected host:port");
  listen_address a;
  a.host = host_port.substr(0, colon);
  if (a.host.size() >= 2 && a.host.front() == '[' && a.host.back() == ']')
    a.host = a.host.substr(1, a.host.size() - 2);
  std::string port = host_port.substr(colon + 1);
  if (a.host.empty() || port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) > 65535)
    throw std::invalid_argument("listen address '" + host_port + "': expected host:port");
  a.port = std::stoi(port);
  return a;
}

} // namespace mg::http
