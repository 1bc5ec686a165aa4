#pragma once
// A /v3 client for tests that signs like SPEC §5 and can be told to get it
// wrong (no signature, a stale timestamp, a reused nonce, another secret).
// The target is sent byte for byte as given.
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mg::test {

/// A fresh valid nonce (32 hex characters from OpenSSL's RAND_bytes).
std::string new_nonce();

struct api_reply {
  int status = 0;
  std::string body;
  std::multimap<std::string, std::string> headers;

  /// First value of `name` (case-insensitive), "" when absent.
  std::string header(const std::string& name) const;
};

struct request_options {
  bool sign = true;                                         // false: no X-QTG-* headers at all
  std::optional<std::string> timestamp;                     // default: now
  std::optional<std::string> nonce;                         // default: new_nonce()
  std::optional<std::string> secret;                        // sign with this instead of the key's
  std::optional<std::string> key_id;                        // send this key id instead
  std::optional<std::string> signature;                     // send this signature verbatim
  std::vector<std::string> omit_headers;                    // drop these after signing
  std::vector<std::pair<std::string, std::string>> headers; // extra / override
  std::vector<std::pair<std::string, std::string>> repeat_headers; // added again, after the rest
};

class api_client {
public:
  api_client(int port, std::string key_id, std::string secret, std::string host = "127.0.0.1");

  /// `target` = path plus optional "?query", sent unmodified.
  api_reply request(const std::string& method, const std::string& target,
                    const std::string& body = "", const request_options& options = {});

  api_reply get(const std::string& target, const request_options& options = {}) {
    return request("GET", target, "", options);
  }
  api_reply post(const std::string& target, const std::string& body = "",
                 const request_options& options = {}) {
    return request("POST", target, body, options);
  }

  /// The nonce the last signed request used (to replay it).
  const std::string& last_nonce() const { return last_nonce_; }

private:
  int port_;
  std::string key_id_;
  std::string secret_;
  std::string host_;
  std::string last_nonce_;
};

} // namespace mg::test
