#include "domain/url.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cctype>
#include <cstring>
#include <netinet/in.h>
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

namespace mg::domain {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool all_digits(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

uint32_t v4_at(const std::array<uint8_t, 16>& b, size_t at) {
  return uint32_t(b[at]) << 24 | uint32_t(b[at + 1]) << 16 | uint32_t(b[at + 2]) << 8 |
         uint32_t(b[at + 3]);
}

/// The authority of an absolute URL: between "://" and the path.
std::string_view authority_of(std::string_view url) {
  auto sep = url.find("://");
  auto rest = sep == std::string_view::npos ? url : url.substr(sep + 3);
  return rest.substr(0, rest.find_first_of("/?#\\"));
}

} // namespace

bool is_refused_ipv4(uint32_t ip) {
  auto in = [&](uint32_t net, int bits) {
    uint32_t mask = bits == 0 ? 0 : 0xffffffffu << (32 - bits);
    return (ip & mask) == net;
  };
  return in(0x00000000, 8)     // "this network", 0.0.0.0
         || in(0x0a000000, 8)  // 10/8
         || in(0x64400000, 10) // shared address space (carrier NAT), 100.64/10
         || in(0x7f000000, 8)  // loopback
         || in(0xa9fe0000, 16) // link-local (cloud metadata)
         || in(0xac100000, 12) // 172.16/12
         || in(0xc0000000, 24) // IETF protocol assignments, 192.0.0/24
         || in(0xc0a80000, 16) // 192.168/16
         || in(0xc6120000, 15) // benchmarking, 198.18/15
         || in(0xe0000000, 4)  // multicast, 224/4
         || in(0xf0000000, 4); // reserved and broadcast, 240/4
}

bool is_refused_ipv6(const std::array<uint8_t, 16>& b) {
  auto zero = [&](size_t from, size_t to) {
    return std::all_of(b.begin() + from, b.begin() + to, [](uint8_t x) { return x == 0; });
  };
  // ::/96 (IPv4-compatible, with :: and ::1) and ::ffff:0:0/96 (mapped).
  if (zero(0, 10) && ((b[10] == 0 && b[11] == 0) || (b[10] == 0xff && b[11] == 0xff)))
    return is_refused_ipv4(v4_at(b, 12));
  if (b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && zero(4, 12)) // NAT64
    return is_refused_ipv4(v4_at(b, 12));
  if (b[0] == 0x20 && b[1] == 0x02) // 6to4
    return is_refused_ipv4(v4_at(b, 2));
  return (b[0] & 0xfe) == 0xfc                      // unique local, fc00::/7
         || (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) // link-local, fe80::/10
         || (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) // site-local, fec0::/10 (deprecated)
         || b[0] == 0xff;                           // multicast, ff00::/8
}

std::optional<bool> is_refused_ip_literal(const std::string& host) {
  in6_addr v6;
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    std::array<uint8_t, 16> b;
    std::memcpy(b.data(), v6.s6_addr, 16);
    return is_refused_ipv6(b);
  }
  in_addr v4;
  if (inet_aton(host.c_str(), &v4) == 1)
    return is_refused_ipv4(ntohl(v4.s_addr));
  return std::nullopt;
}

std::optional<std::string> url_host(std::string_view url) {
  auto authority = authority_of(url);
  auto at = authority.rfind('@');
  if (at != std::string_view::npos)
    authority = authority.substr(at + 1);
  if (!authority.empty() && authority.front() == '[') {
    auto close = authority.find(']');
    if (close == std::string_view::npos)
      return std::nullopt;
    auto after = authority.substr(close + 1);
    if (!after.empty() && (after.front() != ':' || !all_digits(after.substr(1))))
      return std::nullopt;
    return std::string(authority.substr(1, close - 1));
  }
  auto colon = authority.find(':');
  auto host = authority.substr(0, colon);
  if (colon != std::string_view::npos) {
    auto port = authority.substr(colon + 1);
    if (!all_digits(port) || port.size() > 5)
      return std::nullopt;
  }
  return std::string(host);
}

std::string callback_url_problem(std::string_view url, bool allow_private) {
  auto sep = url.find("://");
  if (sep == std::string_view::npos)
    return "must be an absolute http or https URL";
  auto scheme = lower(url.substr(0, sep));
  if (scheme != "http" && scheme != "https")
    return "scheme must be http or https";
  if (std::any_of(url.begin(), url.end(), [](char c) {
        return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f || c == '\\';
      }))
    return "must not contain spaces, backslashes or control characters";
  auto authority = authority_of(url);
  if (authority.find('@') != std::string_view::npos)
    return "must not carry a user name or password";
  auto host = url_host(url);
  if (!host || host->empty())
    return "must name a host";
  // A zone id ("fe80::1%25eth0") or a percent-encoded name: what the client
  // would connect to is not what was checked.
  if (host->find('%') != std::string::npos)
    return "host must not contain '%' (no zone ids or encoded names)";
  if (allow_private)
    return "";
  auto name = lower(*host);
  while (!name.empty() && name.back() == '.')
    name.pop_back();
  if (name == "localhost" || (name.size() > 10 && name.substr(name.size() - 10) == ".localhost"))
    return "host is local (set MG_CALLBACK_ALLOW_PRIVATE=true to allow)";
  if (is_refused_ip_literal(name).value_or(false))
    return "host is a private, loopback, link-local or reserved address";
  return "";
}

} // namespace mg::domain
