#include "executors/evm_local_signer.hpp"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <secp256k1.h>
#include <secp256k1_recovery.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "domain/keccak.hpp"

namespace mg::executors {

namespace {

const char* const setting = "MG_EVM_SIGNER_KEY_FILE";

/// The file's text with surrounding whitespace and an optional 0x removed.
std::string read_key_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error(std::string(setting) + ": cannot open " + path);
  std::ostringstream buf;
  buf << in.rdbuf();
  std::string text = buf.str();
  size_t first = 0, last = text.size();
  while (first < last && std::isspace(static_cast<unsigned char>(text[first])))
    ++first;
  while (last > first && std::isspace(static_cast<unsigned char>(text[last - 1])))
    --last;
  text = text.substr(first, last - first);
  if (text.size() >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
    text.erase(0, 2);
  return text;
}

/// The public key's EIP-55 address.
std::string address_of(const secp256k1_context* ctx, const secp256k1_pubkey& pub) {
  unsigned char out[65];
  size_t len = sizeof out;
  secp256k1_ec_pubkey_serialize(ctx, out, &len, &pub, SECP256K1_EC_UNCOMPRESSED);
  // Drop the 0x04 prefix: the address hashes x ‖ y.
  return domain::evm_address_of_public_key(
      std::string_view(reinterpret_cast<const char*>(out) + 1, 64));
}

/// The 32 raw bytes of a 0x-optional 64-digit hex hash, or nullopt.
std::optional<std::string> hash_bytes(std::string_view hex) {
  auto bytes = domain::parse_0x_hex(hex);
  if (!bytes || bytes->size() != 32)
    return std::nullopt;
  return bytes;
}

/// Whether the payload is what payload_hash was computed over (see the
/// header): the signer signs nothing it cannot tie to what it was shown.
bool payload_matches(const domain::sign_request& req, const std::string& hash) {
  auto payload = domain::parse_0x_hex(req.payload);
  if (!payload)
    return false;
  // Never a bare hash: the signer must see the transaction it signs.
  return req.payload_format == evm_signing_data_format && domain::keccak256(*payload) == hash;
}

} // namespace

struct evm_local_signer::key {
  secp256k1_context* ctx = nullptr;
  unsigned char secret[32] = {};
  ~key() {
    OPENSSL_cleanse(secret, sizeof secret);
    if (ctx)
      secp256k1_context_destroy(ctx);
  }
};

evm_local_signer::evm_local_signer(const std::string& key_file) : key_(std::make_unique<key>()) {
  std::string text = read_key_text(key_file);
  auto secret = text.size() == 64 ? domain::parse_0x_hex(text) : std::nullopt;
  OPENSSL_cleanse(text.data(), text.size());
  key_->ctx = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
  if (secret)
    std::copy(secret->begin(), secret->end(), key_->secret);
  if (secret)
    OPENSSL_cleanse(secret->data(), secret->size());
  if (!secret || !secp256k1_ec_seckey_verify(key_->ctx, key_->secret))
    throw std::runtime_error(std::string(setting) + ": " + key_file +
                             " is not a hex secp256k1 private key (64 hex digits, 0x optional)");
  // Blinding against timing side channels; signing stays deterministic.
  unsigned char seed[32];
  if (RAND_bytes(seed, sizeof seed) != 1 || !secp256k1_context_randomize(key_->ctx, seed))
    throw std::runtime_error(std::string(setting) + ": cannot seed the signing context");
  secp256k1_pubkey pub;
  if (!secp256k1_ec_pubkey_create(key_->ctx, &pub, key_->secret))
    throw std::runtime_error(std::string(setting) + ": cannot derive the public key");
  address_ = address_of(key_->ctx, pub);
}

evm_local_signer::~evm_local_signer() = default;

domain::evm_signature evm_local_signer::sign_hash(std::string_view hash32) const {
  if (hash32.size() != 32)
    throw domain::executor_error("evm_local: a signing hash is 32 bytes");
  secp256k1_ecdsa_recoverable_signature sig;
  // A null nonce function selects RFC 6979: the same hash always yields the
  // same signature, and libsecp256k1 always emits low s.
  if (!secp256k1_ecdsa_sign_recoverable(key_->ctx, &sig,
                                        reinterpret_cast<const unsigned char*>(hash32.data()),
                                        key_->secret, nullptr, nullptr))
    throw domain::executor_error("evm_local: signing failed");
  unsigned char compact[64];
  int recid = 0;
  secp256k1_ecdsa_recoverable_signature_serialize_compact(key_->ctx, compact, &recid, &sig);
  std::string_view rs(reinterpret_cast<const char*>(compact), 64);
  return {*domain::uint256::from_big_endian(rs.substr(0, 32)),
          *domain::uint256::from_big_endian(rs.substr(32, 32)), recid};
}

domain::sign_result evm_local_signer::sign(const domain::sign_request& req) {
  if (req.payload_hash != req.intent.allowed_payload_hash)
    throw domain::executor_error("payload_hash differs from allowed_payload_hash");
  auto hash = hash_bytes(req.payload_hash);
  if (!hash)
    throw domain::executor_error("payload_hash is not 32 bytes of hex");
  if (!payload_matches(req, *hash))
    throw domain::executor_error(
        "payload does not match payload_hash (payload_format must be evm_signing_data)");
  return {domain::format_signature_65(sign_hash(*hash)), address_};
}

domain::health_result evm_local_signer::health() {
  domain::health_result h;
  h.signer_address = address_;
  return h;
}

std::optional<std::string> recover_evm_address(std::string_view hash32,
                                               const domain::evm_signature& sig) {
  if (hash32.size() != 32 || (sig.recid != 0 && sig.recid != 1))
    return std::nullopt;
  const secp256k1_context* ctx = secp256k1_context_static;
  std::string rs = sig.r.to_big_endian_32() + sig.s.to_big_endian_32();
  secp256k1_ecdsa_recoverable_signature parsed;
  secp256k1_pubkey pub;
  if (!secp256k1_ecdsa_recoverable_signature_parse_compact(
          ctx, &parsed, reinterpret_cast<const unsigned char*>(rs.data()), sig.recid) ||
      !secp256k1_ecdsa_recover(ctx, &pub, &parsed,
                               reinterpret_cast<const unsigned char*>(hash32.data())))
    return std::nullopt;
  return address_of(ctx, pub);
}

} // namespace mg::executors
