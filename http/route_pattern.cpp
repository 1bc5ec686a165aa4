#include "http/route_pattern.hpp"

namespace mg::http {

std::vector<std::string_view> path_segments(std::string_view path) {
  std::vector<std::string_view> out;
  if (!path.empty() && path.front() == '/')
    path.remove_prefix(1);
  size_t start = 0;
  while (true) {
    size_t slash = path.find('/', start);
    out.push_back(path.substr(start, slash == std::string_view::npos ? slash : slash - start));
    if (slash == std::string_view::npos)
      return out;
    start = slash + 1;
  }
}

route_pattern::route_pattern(const std::string& pattern) {
  for (auto s : path_segments(pattern)) {
    bool capture = s.size() >= 2 && s.front() == '{' && s.back() == '}';
    segments_.push_back({std::string(s), capture});
  }
}

std::optional<std::vector<std::string>> route_pattern::match(std::string_view raw_path) const {
  auto parts = path_segments(raw_path);
  if (parts.size() != segments_.size())
    return std::nullopt;
  std::vector<std::string> captures;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (segments_[i].capture) {
      if (parts[i].empty())
        return std::nullopt;
      captures.emplace_back(parts[i]);
    } else if (parts[i] != segments_[i].text) {
      return std::nullopt;
    }
  }
  return captures;
}

} // namespace mg::http
