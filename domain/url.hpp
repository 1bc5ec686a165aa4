#pragma once
// http(s) URLs split the way cpp-httplib wants them: an origin for the client
// and a request target for each call.
#include <optional>
#include <string>

namespace mg::domain {

struct url_parts {
  std::string origin; // scheme://host[:port]
  std::string target; // path?query, at least "/"
};

/// nullopt unless the scheme is http or https; a fragment is dropped.
std::optional<url_parts> split_url(const std::string& url);

} // namespace mg::domain
