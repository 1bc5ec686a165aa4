#include "executors/local_signer.hpp"

#include <cryptopp/keccak.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <openssl/pem.h>

#include <optional>
#include <stdexcept>

#include "domain/evm_tx.hpp"
#include "domain/hash.hpp"
#include "domain/keccak.hpp"
#include "domain/signing_policy.hpp"

namespace mg::executors {

namespace {

/// 32 bytes from 64 hex digits (optional 0x), or nullopt.
std::optional<std::string> hash_bytes(const std::string& hex) {
  std::string_view h = hex;
  if (h.size() >= 2 && h[0] == '0' && (h[1] == 'x' || h[1] == 'X'))
    h.remove_prefix(2);
  if (h.size() != 64)
    return std::nullopt;
  return domain::from_hex(h);
}

struct bn_deleter {
  void operator()(BIGNUM* b) const { BN_free(b); }
};
using bn_ptr = std::unique_ptr<BIGNUM, bn_deleter>;

/// A public-key coordinate as 32 big-endian bytes.
std::string coordinate(EVP_PKEY* pkey, const char* name) {
  BIGNUM* raw = nullptr;
  if (EVP_PKEY_get_bn_param(pkey, name, &raw) != 1)
    throw std::runtime_error("local signer: cannot read the public key");
  bn_ptr bn(raw);
  unsigned char buf[32];
  if (BN_bn2binpad(bn.get(), buf, sizeof buf) != 32)
    throw std::runtime_error("local signer: public key coordinate too large");
  return std::string(reinterpret_cast<char*>(buf), sizeof buf);
}

/// DER ECDSA signature → r ‖ s with s in the lower half of the group order.
std::string compact_low_s(const unsigned char* der, size_t der_len) {
  const unsigned char* p = der;
  ECDSA_SIG* sig = d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der_len));
  if (!sig)
    throw domain::executor_error("local signer: malformed signature");
  const BIGNUM *r = nullptr, *s = nullptr;
  ECDSA_SIG_get0(sig, &r, &s);
  bn_ptr order(BN_new()), half(BN_new()), low_s(BN_dup(s));
  EC_GROUP* group = EC_GROUP_new_by_curve_name(NID_secp256k1);
  EC_GROUP_get_order(group, order.get(), nullptr);
  EC_GROUP_free(group);
  BN_rshift1(half.get(), order.get());
  if (BN_cmp(low_s.get(), half.get()) > 0)
    BN_sub(low_s.get(), order.get(), low_s.get());
  unsigned char out[64];
  BN_bn2binpad(r, out, 32);
  BN_bn2binpad(low_s.get(), out + 32, 32);
  ECDSA_SIG_free(sig);
  return "0x" + domain::to_hex(out, sizeof out);
}

} // namespace

struct local_signer::key {
  EVP_PKEY* pkey = nullptr;
  ~key() { EVP_PKEY_free(pkey); }
};

std::string keccak256_hex(const std::string& bytes) {
  CryptoPP::Keccak_256 h;
  unsigned char digest[CryptoPP::Keccak_256::DIGESTSIZE];
  h.CalculateDigest(digest, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
  return domain::to_hex(digest, sizeof digest);
}

local_signer::local_signer(const std::string& pem_file, std::set<std::string> accepted_formats)
    : key_(std::make_unique<key>()), accepted_formats_(std::move(accepted_formats)) {
  BIO* in = BIO_new_file(pem_file.c_str(), "r");
  if (!in)
    throw std::runtime_error("MG_LOCAL_SIGNER_KEY_FILE: cannot open " + pem_file);
  key_->pkey = PEM_read_bio_PrivateKey(in, nullptr, nullptr, nullptr);
  BIO_free(in);
  char group[64] = {};
  size_t group_len = 0;
  if (!key_->pkey ||
      EVP_PKEY_get_utf8_string_param(key_->pkey, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof group,
                                     &group_len) != 1 ||
      std::string(group) != "secp256k1")
    throw std::runtime_error("MG_LOCAL_SIGNER_KEY_FILE: " + pem_file +
                             " is not a PEM secp256k1 private key");
  auto public_key = coordinate(key_->pkey, OSSL_PKEY_PARAM_EC_PUB_X) +
                    coordinate(key_->pkey, OSSL_PKEY_PARAM_EC_PUB_Y);
  address_ = "0x" + keccak256_hex(public_key).substr(24);
}

local_signer::~local_signer() = default;

bool local_signer::payload_matches(const domain::sign_request& req,
                                   const std::string& digest) const {
  if (!accepted_formats_.count(req.payload_format))
    return false;
  if (req.payload_format == domain::evm_signing_data_payload) {
    auto bytes = domain::parse_0x_hex(req.payload);
    return bytes && domain::keccak256(*bytes) == digest;
  }
  // Other accepted formats: the signer hashes what it was shown itself.
  return domain::from_hex(domain::sha256_hex(req.payload)) == digest;
}

domain::sign_result local_signer::sign(const domain::sign_request& req) {
  if (req.payload_hash != req.intent.allowed_payload_hash)
    throw domain::executor_error("payload_hash differs from allowed_payload_hash");
  auto digest = hash_bytes(req.payload_hash);
  if (!digest)
    throw domain::executor_error("payload_hash is not 32 bytes of hex");
  if (!payload_matches(req, *digest))
    throw domain::executor_error("local signer: payload_format '" + req.payload_format +
                                 "' is not accepted, or the payload does not hash to payload_hash");
  EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new_from_pkey(nullptr, key_->pkey, nullptr);
  unsigned char der[80];
  size_t der_len = sizeof der;
  bool ok =
      ctx && EVP_PKEY_sign_init(ctx) == 1 &&
      EVP_PKEY_sign(ctx, der, &der_len, reinterpret_cast<const unsigned char*>(digest->data()),
                    digest->size()) == 1;
  EVP_PKEY_CTX_free(ctx);
  if (!ok)
    throw domain::executor_error("local signer: ECDSA signing failed");
  return {compact_low_s(der, der_len), address_};
}

domain::health_result local_signer::health() {
  domain::health_result h;
  h.signer_address = address_;
  return h;
}

} // namespace mg::executors
