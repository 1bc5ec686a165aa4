#pragma once
// Route patterns such as "/v3/movements/{id}/nodes/{node_key}/complete",
// matched segment by segment on the raw path (as sent, not decoded).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mg::http {

class route_pattern {
public:
  explicit route_pattern(const std::string& pattern);

  /// The captures in pattern order (raw), or nullopt when `raw_path` does
  /// not match. A capture never matches an empty segment.
  std::optional<std::vector<std::string>> match(std::string_view raw_path) const;

private:
  struct segment {
    std::string text;
    bool capture;
  };
  std::vector<segment> segments_;
};

/// Splits a path on '/' (the leading '/' gives no empty first segment).
std::vector<std::string_view> path_segments(std::string_view path);

} // namespace mg::http
