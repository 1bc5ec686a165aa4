// Route matching on the raw path (http/route_pattern), over the /v3
// patterns of http/routes.cpp. Invariants: a match's captures are
// non-empty and hold no '/', and putting them back into the pattern gives
// the raw path exactly (nothing is decoded or dropped on the way);
// path_segments joined with '/' is the path.
#include "http/route_pattern.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using namespace mg;

namespace {

const char* const patterns[] = {
    "/v3/movements",
    "/v3/movements/{id}",
    "/v3/movements/{id}/events",
    "/v3/movements/{id}/approve",
    "/v3/movements/{id}/reject",
    "/v3/movements/{id}/cancel",
    "/v3/movements/{id}/resume",
    "/v3/movements/{id}/retry",
    "/v3/movements/{id}/nodes/{node_key}/complete",
    "/v3/templates",
    "/v3/templates/{key}",
    "/v3/template-proposals",
    "/v3/template-proposals/{id}/approve",
    "/v3/template-proposals/{id}/reject",
    "/v3/executors",
    "/v3/signers",
    "/v3/signers/{signer_key}/expected-identity",
    "/v3/balances",
    "/admin/movements/{id}",
    "/admin/callbacks/{id}/redeliver",
};

std::string fill(std::string_view pattern, const std::vector<std::string>& captures) {
  std::string out;
  size_t next = 0;
  for (auto seg : http::path_segments(pattern)) {
    out += '/';
    bool capture = seg.size() >= 2 && seg.front() == '{' && seg.back() == '}';
    out += capture ? captures.at(next++) : std::string(seg);
  }
  return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path(fuzz::bytes(data, size));

  auto segs = http::path_segments(path);
  MG_FUZZ_CHECK(!segs.empty(), "at least one segment");
  std::string joined;
  for (size_t i = 0; i < segs.size(); ++i)
    joined.append(i ? "/" : "").append(segs[i]);
  MG_FUZZ_CHECK((!path.empty() && path[0] == '/' ? "/" + joined : joined) == path,
                "segments join back to the path");

  // The server refuses any path outside /v3/ (and /admin/) before routing.
  if (path.empty() || path[0] != '/')
    return 0;
  static const std::vector<http::route_pattern> compiled = [] {
    std::vector<http::route_pattern> out;
    for (const char* q : patterns)
      out.emplace_back(q);
    return out;
  }();
  for (size_t i = 0; i < compiled.size(); ++i) {
    auto m = compiled[i].match(path);
    if (!m)
      continue;
    for (const auto& c : *m)
      MG_FUZZ_CHECK(!c.empty() && c.find('/') == std::string::npos, "capture is one segment");
    MG_FUZZ_CHECK(fill(patterns[i], *m) == path, "captures rebuild the raw path");
  }
  return 0;
}
