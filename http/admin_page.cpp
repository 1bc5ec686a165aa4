#include "http/admin_page.hpp"

namespace mg::http {

namespace {

// Everything from the listener's own origin, nothing inline, no frames;
// the token can only travel to the page's origin (connect-src 'self').
constexpr const char* content_security_policy =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'";

const embedded_file* find_file(const std::string& name) {
  for (const auto& f : admin_page_files())
    if (name == f.name)
      return &f;
  return nullptr;
}

api::reply serve_file(const std::string& name) {
  const embedded_file* f = find_file(name);
  if (!f)
    return api::error_reply(api::not_found("no such asset"));
  return {200,
          std::string(reinterpret_cast<const char*>(f->data), f->size),
          {{"Content-Type", content_type_for(name)},
           {"Cache-Control", "no-store"},
           {"Content-Security-Policy", content_security_policy},
           {"X-Content-Type-Options", "nosniff"},
           {"Referrer-Policy", "no-referrer"}}};
}

bool ends_with(const std::string& s, const char* suffix) {
  std::string x(suffix);
  return s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
}

} // namespace

std::string content_type_for(const std::string& name) {
  if (ends_with(name, ".html"))
    return "text/html; charset=utf-8";
  if (ends_with(name, ".js"))
    return "text/javascript; charset=utf-8";
  if (ends_with(name, ".css"))
    return "text/css; charset=utf-8";
  if (ends_with(name, ".svg"))
    return "image/svg+xml";
  if (ends_with(name, ".png"))
    return "image/png";
  return "application/octet-stream";
}

std::vector<admin_route> admin_page_routes() {
  return {
      {"GET", "/", false,
       [](const admin_request&) {
         return serve_file("index.html");
       }},
      {"GET", "/assets/([A-Za-z0-9_.-]+)", false,
       [](const admin_request& r) {
         return serve_file(r.params.at(0));
       }},
  };
}

} // namespace mg::http
