#pragma once
// The `evm_local` signer (issue 8): a raw secp256k1 private key read from a
// file, signing EVM transaction signing hashes with libsecp256k1
// (deterministic RFC 6979 nonces, low s, recoverable), so the `evm`
// executor can assemble EIP-155 / EIP-1559 raw transactions.
//
// What it signs: the request's payload_hash, which must equal
// intent.allowed_payload_hash, and which the payload must account for:
// payload_format "evm_signing_data": payload is the hex of the bytes the
// hash was taken over (the unsigned transaction's signing data); the signer
// checks Keccak-256(payload) == payload_hash. Anything else is refused, a
// bare hash ("evm_signing_hash") included: the signer never signs a hash it
// cannot tie to the transaction it was shown.
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "domain/evm_tx.hpp"
#include "domain/executor.hpp"

namespace mg::executors {

inline constexpr const char* evm_signing_data_format = "evm_signing_data";

class evm_local_signer : public domain::signer {
public:
  /// Reads the key: 64 hex digits, `0x` optional, surrounding whitespace
  /// (a trailing newline) ignored. Throws std::runtime_error naming the file,
  /// never its content, when it is unreadable or not a valid secp256k1
  /// private key.
  explicit evm_local_signer(const std::string& key_file);
  ~evm_local_signer() override;
  evm_local_signer(const evm_local_signer&) = delete;
  evm_local_signer& operator=(const evm_local_signer&) = delete;

  /// Refuses (domain::executor_error) before touching the key when
  /// payload_hash differs from intent.allowed_payload_hash, is not 32 bytes
  /// of hex, or does not match the payload (see above). Returns the
  /// signature as `0x` + r ‖ s ‖ v (65 bytes, v = 27 + recid; parse it with
  /// domain::parse_signature_65) and this signer's address.
  domain::sign_result sign(const domain::sign_request& req) override;
  /// Up, with signer_address = address().
  domain::health_result health() override;

  /// Signs a 32-byte hash (raw bytes): deterministic, low s.
  domain::evm_signature sign_hash(std::string_view hash32) const;

  /// The key's EIP-55 checksummed address.
  const std::string& address() const { return address_; }

private:
  struct key;
  std::unique_ptr<key> key_;
  std::string address_;
};

/// The EIP-55 address that signed `hash32` with `sig`, or nullopt when the
/// signature does not recover (what a node does to find a sender; the
/// executor uses it to check a signature before broadcasting).
std::optional<std::string> recover_evm_address(std::string_view hash32,
                                               const domain::evm_signature& sig);

} // namespace mg::executors
