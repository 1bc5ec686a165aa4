// movegate callbacks verify --secret S --headers FILE_OR_JSON --body FILE
//   [--scheme v3|standard-webhooks] [--now UNIX] [--check-age]
// Checks one captured callback delivery the way a receiver should: prints
// "valid" (exit 0) or "invalid: <reason>" (exit 1); usage errors exit 2.
// Headers: a JSON object of name → value, inline or in a file, or a file
// of "Name: value" lines. The secret may come from MG_CALLBACK_SECRET
// instead of --secret (keeps it out of the process list). The scheme is
// taken from the headers when --scheme is absent. v3 retries keep their
// enqueue timestamp, so its 300 s window applies only with --check-age;
// Standard Webhooks always checks it.
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>

#include "app/common.hpp"
#include "domain/callback_signature.hpp"
#include "domain/json.hpp"

namespace mg::app {

namespace {

int callbacks_usage() {
  std::cerr << "usage: movegate callbacks verify --secret S --headers FILE_OR_JSON --body FILE\n"
               "         [--scheme v3|standard-webhooks] [--now UNIX] [--check-age]\n";
  return 2;
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r\n");
  auto e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

/// A JSON object of strings, or "Name: value" lines; nullopt when neither.
std::optional<domain::header_list> parse_headers(const std::string& text) {
  domain::header_list out;
  auto t = trim(text);
  if (!t.empty() && t[0] == '{') {
    auto doc = json::parse(t);
    if (!doc || !doc->IsObject())
      return std::nullopt;
    for (auto& m : doc->GetObject()) {
      if (!m.value.IsString())
        return std::nullopt;
      out.emplace_back(m.name.GetString(), m.value.GetString());
    }
    return out;
  }
  std::istringstream in(t);
  std::string line;
  while (std::getline(in, line)) {
    auto colon = line.find(':');
    if (trim(line).empty())
      continue;
    if (colon == std::string::npos)
      return std::nullopt;
    out.emplace_back(trim(line.substr(0, colon)), trim(line.substr(colon + 1)));
  }
  return out;
}

int verify(const args& a) {
  auto secret = flag(a, "--secret", "");
  if (secret.empty())
    if (const char* env = std::getenv("MG_CALLBACK_SECRET"))
      secret = env;
  auto headers_arg = flag(a, "--headers", "");
  auto body_path = flag(a, "--body", "");
  if (secret.empty() || headers_arg.empty() || body_path.empty())
    return callbacks_usage();
  auto headers_text =
      trim(headers_arg)[0] == '{' ? std::optional(headers_arg) : read_file(headers_arg);
  if (!headers_text) {
    std::cerr << "movegate callbacks: cannot read " << headers_arg << "\n";
    return 2;
  }
  auto headers = parse_headers(*headers_text);
  if (!headers) {
    std::cerr << "movegate callbacks: --headers is neither a JSON object of strings nor "
                 "'Name: value' lines\n";
    return 2;
  }
  auto body = read_file(body_path);
  if (!body) {
    std::cerr << "movegate callbacks: cannot read " << body_path << "\n";
    return 2;
  }
  auto scheme_name = flag(a, "--scheme", "");
  auto scheme =
      scheme_name.empty()
          ? (domain::find_header(*headers, "webhook-signature")
                 ? domain::callback_scheme::standard_webhooks
                 : domain::callback_scheme::v3)
          : domain::parse_callback_scheme(scheme_name).value_or(domain::callback_scheme::v3);
  if (!scheme_name.empty() && !domain::parse_callback_scheme(scheme_name))
    return callbacks_usage();
  int64_t now = static_cast<int64_t>(std::time(nullptr));
  auto now_arg = flag(a, "--now", "");
  if (!now_arg.empty()) {
    if (now_arg.find_first_not_of("0123456789") != std::string::npos || now_arg.size() > 18)
      return callbacks_usage();
    now = std::stoll(now_arg);
  }
  auto r = scheme == domain::callback_scheme::v3
               ? domain::verify_v3(secret, *headers, *body, now, has_flag(a, "--check-age"))
               : domain::verify_standard_webhooks(secret, *headers, *body, now);
  if (r.valid) {
    std::cout << "valid\n";
    return 0;
  }
  std::cout << "invalid: " << r.reason << "\n";
  return 1;
}

} // namespace

int cmd_callbacks(const args& a) {
  if (a.empty() || a[0] != "verify")
    return callbacks_usage();
  return verify(a);
}

} // namespace mg::app
