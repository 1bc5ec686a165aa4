#pragma once
// The system's name lookup for outgoing calls whose destination must be
// checked before connecting (callback receivers, SPEC §5).
#include <functional>
#include <string>
#include <vector>

namespace mg::workers {

/// Every address `host` resolves to (numeric text, IPv4 and IPv6); empty
/// when the lookup fails.
std::vector<std::string> resolve_host(const std::string& host);

using host_resolver = std::function<std::vector<std::string>(const std::string& host)>;

} // namespace mg::workers
