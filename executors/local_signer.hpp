#pragma once
// The built-in `local` signer (SPEC §4): a secp256k1 private key read from a
// PEM file, held in memory; signs payload hashes with ECDSA and reports the
// key's EVM address as its identity.
#include <memory>
#include <set>
#include <string>

#include "domain/executor.hpp"

namespace mg::executors {

class local_signer : public domain::signer {
public:
  /// Loads the key; throws std::runtime_error naming the file (never its
  /// content) when it is unreadable or not a secp256k1 private key.
  /// `accepted_formats`: the payload formats it signs. evm_signing_data is
  /// checked as Keccak-256 of the payload's bytes; any other format named
  /// here as SHA-256 of the payload text. A bare hash is never signed.
  explicit local_signer(const std::string& pem_file,
                        std::set<std::string> accepted_formats = {"evm_signing_data"});
  ~local_signer() override;
  local_signer(const local_signer&) = delete;
  local_signer& operator=(const local_signer&) = delete;

  /// Refuses (domain::executor_error) a payload_hash that differs from
  /// intent.allowed_payload_hash, before the key is touched, and a payload
  /// of a format it does not accept or that does not hash to payload_hash;
  /// else signs the hash bytes (32 bytes of hex, optional 0x). The signature is `0x` +
  /// r ‖ s, 32 bytes each, with low s (EIP-2).
  domain::sign_result sign(const domain::sign_request& req) override;
  /// Up, with signer_address = the key's EVM address.
  domain::health_result health() override;
  /// The key is in memory: signing never waits.
  bool signs_in_process() const override { return true; }

  /// `0x` + 40 lower-case hex: the last 20 bytes of Keccak-256 of the
  /// uncompressed public key without its 0x04 prefix.
  const std::string& address() const { return address_; }

private:
  bool payload_matches(const domain::sign_request& req, const std::string& digest) const;
  struct key;
  std::unique_ptr<key> key_;
  std::string address_;
  std::set<std::string> accepted_formats_;
};

/// Keccak-256 (the pre-standard padding Ethereum uses), lower-case hex.
std::string keccak256_hex(const std::string& bytes);

} // namespace mg::executors
