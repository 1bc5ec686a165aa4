#include "domain/url.hpp"

namespace mg::domain {

std::optional<url_parts> split_url(const std::string& url) {
  auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos)
    return std::nullopt;
  auto scheme = url.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https")
    return std::nullopt;
  auto path_at = url.find_first_of("/?#", scheme_end + 3);
  url_parts p;
  p.origin = url.substr(0, path_at);
  p.target = path_at == std::string::npos ? "/" : url.substr(path_at);
  if (auto hash = p.target.find('#'); hash != std::string::npos)
    p.target.resize(hash);
  if (p.target.empty() || p.target[0] != '/')
    p.target = "/" + p.target;
  return p;
}

} // namespace mg::domain
