#include "domain/api_auth.hpp"

#include <algorithm>
#include <openssl/crypto.h>
#include <set>
#include <stdexcept>
#include <utility>

#include "domain/hash.hpp"
#include "domain/json.hpp"

namespace mg::api {

namespace {

bool unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

std::string field(const std::string& where, const char* name) {
  return where + "." + name;
}

} // namespace

std::string percent_decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    // A '%' not followed by two hex digits is kept as a literal '%' (it is
    // then signed as %25), so malformed input still has one canonical form.
    if (s[i] == '%' && i + 2 < s.size()) {
      int hi = domain::hex_digit_value(s[i + 1]), lo = domain::hex_digit_value(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += s[i]; // '+' stays a literal plus, never a space
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> decode_query(std::string_view raw_query) {
  std::vector<std::pair<std::string, std::string>> pairs;
  size_t start = 0;
  while (start <= raw_query.size()) {
    size_t end = raw_query.find('&', start);
    if (end == std::string_view::npos)
      end = raw_query.size();
    std::string_view piece = raw_query.substr(start, end - start);
    // Empty pieces ("a=1&&b=2", a trailing '&') carry nothing and are skipped.
    if (!piece.empty()) {
      size_t eq = piece.find('=');
      if (eq == std::string_view::npos)
        pairs.emplace_back(percent_decode(piece), std::string());
      else
        pairs.emplace_back(percent_decode(piece.substr(0, eq)),
                           percent_decode(piece.substr(eq + 1)));
    }
    start = end + 1;
  }
  return pairs;
}

std::string canonical_query(std::string_view raw_query) {
  std::vector<std::pair<std::string, std::string>> encoded;
  for (const auto& [k, v] : decode_query(raw_query))
    encoded.emplace_back(percent_encode(k), percent_encode(v));
  std::sort(encoded.begin(), encoded.end());
  std::string out;
  for (size_t i = 0; i < encoded.size(); ++i) {
    if (i)
      out += '&';
    out += encoded[i].first + "=" + encoded[i].second;
  }
  return out;
}

std::string canonical_request(std::string_view method, std::string_view path,
                              std::string_view raw_query, std::string_view body,
                              std::string_view timestamp, std::string_view nonce) {
  std::string out;
  out.append(method).append("\n");
  out.append(path).append("\n");
  out.append(canonical_query(raw_query)).append("\n");
  out.append(domain::sha256_hex(body)).append("\n");
  out.append(timestamp).append("\n");
  out.append(nonce);
  return out;
}

std::string sign_request(std::string_view secret, std::string_view method, std::string_view path,
                         std::string_view raw_query, std::string_view body,
                         std::string_view timestamp, std::string_view nonce) {
  return domain::hmac_sha256_hex(
      secret, canonical_request(method, path, raw_query, body, timestamp, nonce));
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size())
    return false;
  if (a.empty())
    return true;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

bool valid_nonce(std::string_view nonce) {
  if (nonce.size() < 16 || nonce.size() > 128)
    return false;
  return std::all_of(nonce.begin(), nonce.end(), [](unsigned char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

std::optional<scope> parse_scope(std::string_view name) {
  for (scope s : {scope::create, scope::approve, scope::read, scope::admin})
    if (name == to_string(s))
      return s;
  return std::nullopt;
}

std::vector<api_key> parse_api_keys(std::string_view json_text) {
  std::string parse_error;
  auto doc = json::parse(json_text, &parse_error);
  if (!doc)
    throw std::invalid_argument("API keys: not JSON: " + parse_error);
  if (!doc->IsObject() || !doc->HasMember("keys") || !(*doc)["keys"].IsArray())
    throw std::invalid_argument("API keys: expected {\"keys\": [...]}");
  std::vector<api_key> keys;
  std::set<std::string> seen;
  const auto& list = (*doc)["keys"];
  for (rapidjson::SizeType i = 0; i < list.Size(); ++i) {
    const std::string where = "API keys: keys[" + std::to_string(i) + "]";
    const auto& entry = list[i];
    if (!entry.IsObject())
      throw std::invalid_argument(where + ": must be an object");
    api_key key;
    if (!entry.HasMember("key_id") || !entry["key_id"].IsString() ||
        entry["key_id"].GetStringLength() == 0)
      throw std::invalid_argument(field(where, "key_id") + ": missing or empty");
    key.key_id = entry["key_id"].GetString();
    const std::string named = where + " (" + key.key_id + ")";
    if (!seen.insert(key.key_id).second)
      throw std::invalid_argument(named + ": duplicate key_id");
    // The secret's value never appears in a message, only what is wrong with it.
    if (!entry.HasMember("secret") || !entry["secret"].IsString())
      throw std::invalid_argument(field(named, "secret") + ": missing or not a string");
    key.secret.assign(entry["secret"].GetString(), entry["secret"].GetStringLength());
    if (key.secret.size() < 16)
      throw std::invalid_argument(field(named, "secret") + ": shorter than 16 characters");
    if (!entry.HasMember("scopes") || !entry["scopes"].IsArray() || entry["scopes"].Empty())
      throw std::invalid_argument(field(named, "scopes") + ": must be a non-empty array");
    for (const auto& s : entry["scopes"].GetArray()) {
      auto parsed = s.IsString() ? parse_scope(s.GetString()) : std::nullopt;
      if (!parsed)
        throw std::invalid_argument(field(named, "scopes") + ": unknown scope " +
                                    (s.IsString() ? json::quote(s.GetString()) : "(not a string)") +
                                    " (create|approve|read|admin)");
      if (std::find(key.scopes.begin(), key.scopes.end(), *parsed) == key.scopes.end())
        key.scopes.push_back(*parsed);
    }
    keys.push_back(std::move(key));
  }
  return keys;
}

std::string percent_encode(std::string_view s) {
  static const char digits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (unreserved(c)) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += digits[c >> 4];
      out += digits[c & 0x0F];
    }
  }
  return out;
}

std::string sign_cluster_login(std::string_view secret, std::string_view key_id,
                               std::string_view timestamp, std::string_view nonce) {
  return sign_request(secret, "LOGIN", "/v3/cluster/login", "", key_id, timestamp, nonce);
}

} // namespace mg::api
