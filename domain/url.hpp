#pragma once
// http(s) URLs split the way cpp-httplib wants them: an origin for the client
// and a request target for each call; and the "host:port" of a listener.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

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

/// Addresses a callback may never reach unless MG_CALLBACK_ALLOW_PRIVATE
/// (SPEC §5): loopback, 0/8, 10/8, 100.64/10, 169.254/16, 172.16/12,
/// 192.0.0/24, 192.168/16, 198.18/15, 224/4, 240/4 (broadcast included).
/// `address` in host byte order.
bool is_refused_ipv4(uint32_t address);
/// ::, ::1, fc00::/7, fe80::/10, fec0::/10, ff00::/8, and any address that
/// embeds an IPv4 address refused above: IPv4-mapped (::ffff:0:0/96),
/// IPv4-compatible (::/96), NAT64 (64:ff9b::/96) and 6to4 (2002::/16).
bool is_refused_ipv6(const std::array<uint8_t, 16>& address);
/// A refused address written as an IP literal: IPv6 (no brackets) or IPv4,
/// including the shorthands ("127.1", "0x7f000001", "2130706433") that
/// clients resolve without DNS. nullopt when `host` is not an IP literal.
std::optional<bool> is_refused_ip_literal(const std::string& host);

/// The host of an absolute URL ("" when there is none; nullopt when the
/// authority is malformed), an IPv6 literal without its brackets.
std::optional<std::string> url_host(std::string_view url);

/// Why `url` may not receive callbacks ("" when it may): an absolute
/// http or https URL with a host, no userinfo, no zone id, no spaces or
/// control characters; and unless `allow_private` a host that is not
/// "localhost" nor a refused IP literal. Names are checked again at each
/// delivery, against what they resolve to.
std::string callback_url_problem(std::string_view url, bool allow_private);

} // namespace mg::domain
