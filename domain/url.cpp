#include "domain/url.hpp"

#include <cctype>
#include <stdexcept>

namespace mg::domain {

std::optional<url_parts> split_url(const std::string& url) {
  auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos)
    return std::nullopt;
  // Schemes are case-insensitive (RFC 3986 §3.1); the HTTP client reads
  // only lower case, so the origin carries it lower-cased.
  auto scheme = url.substr(0, scheme_end);
  for (auto& c : scheme)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (scheme != "http" && scheme != "https")
    return std::nullopt;
  auto path_at = url.find_first_of("/?#", scheme_end + 3);
  url_parts p;
  p.origin = scheme +
             url.substr(scheme_end, path_at == std::string::npos ? path_at : path_at - scheme_end);
  p.target = path_at == std::string::npos ? "/" : url.substr(path_at);
  if (auto hash = p.target.find('#'); hash != std::string::npos)
    p.target.resize(hash);
  if (p.target.empty() || p.target[0] != '/')
    p.target = "/" + p.target;
  return p;
}

host_port parse_host_port(const std::string& address) {
  auto colon = address.rfind(':');
  if (colon == std::string::npos)
    throw std::invalid_argument("'" + address + "': expected host:port");
  host_port a;
  a.host = address.substr(0, colon);
  if (a.host.size() >= 2 && a.host.front() == '[' && a.host.back() == ']')
    a.host = a.host.substr(1, a.host.size() - 2);
  std::string port = address.substr(colon + 1);
  if (a.host.empty() || port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) > 65535)
    throw std::invalid_argument("'" + address + "': expected host:port with a port 0..65535");
  a.port = std::stoi(port);
  return a;
}

} // namespace mg::domain
