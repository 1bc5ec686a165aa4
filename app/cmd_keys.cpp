// movegate keys new --scopes create,read [--key-id ID]: prints a fresh
// MG_API_KEYS_FILE entry (the secret is 32 random bytes, hex).
#include <algorithm>
#include <iostream>
#include <stdexcept>
#include <vector>

#include "app/common.hpp"
#include "domain/api_auth.hpp"
#include "domain/hash.hpp"
#include "domain/json_writer.hpp"

namespace mg::app {

namespace {

int keys_usage() {
  std::cerr << "usage: movegate keys new --scopes create,approve,read,admin [--key-id ID]\n";
  return 2;
}

} // namespace

int cmd_keys(const args& a) {
  if (a.empty() || a[0] != "new")
    return keys_usage();
  const std::string scopes_csv = flag(a, "--scopes", "");
  if (scopes_csv.empty())
    return keys_usage();
  std::vector<std::string> scopes;
  size_t start = 0;
  while (start <= scopes_csv.size()) {
    size_t comma = scopes_csv.find(',', start);
    std::string name =
        scopes_csv.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!api::parse_scope(name)) {
      std::cerr << "movegate keys: unknown scope '" << name
                << "' (expected create, approve, read or admin)\n";
      return 2;
    }
    if (std::find(scopes.begin(), scopes.end(), name) == scopes.end())
      scopes.push_back(name);
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  const std::string key_id = flag(a, "--key-id", "key-" + domain::random_hex(4));
  if (key_id.empty()) {
    std::cerr << "movegate keys: --key-id must not be empty\n";
    return 2;
  }
  json::writer out;
  out.begin_object()
      .member("key_id", key_id)
      .member("secret", domain::random_hex(32))
      .key("scopes")
      .begin_array();
  for (const auto& s : scopes)
    out.string(s);
  std::cout << out.end_array().end_object().str() << std::endl;
  return 0;
}

} // namespace mg::app
