// The built-in `local` signer: the EVM address of a known key, refusal of a
// payload hash that is not the allowed one, and signatures OpenSSL verifies.
#include <boost/test/unit_test.hpp>

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <unistd.h>

#include "domain/hash.hpp"
#include "executors/local_signer.hpp"
#include "executors/registry.hpp"

using namespace mg;

namespace {

/// Known vector: this private key's address is 0x2c7536...5c23.
const std::string vector_key = "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318";
const std::string vector_address = "0x2c7536e3605d9c16a7a3d7b1898e529396a65c23";

std::string unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2)
    out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

/// A PEM "EC PRIVATE KEY" (SEC1, no public key: OpenSSL derives it) for a
/// raw secp256k1 private key.
std::string sec1_pem(const std::string& private_hex) {
  std::string der = unhex("302e0201010420") + unhex(private_hex) + unhex("a00706052b8104000a");
  std::string b64(4 * ((der.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(&b64[0]),
                          reinterpret_cast<const unsigned char*>(der.data()),
                          static_cast<int>(der.size()));
  b64.resize(n);
  return "-----BEGIN EC PRIVATE KEY-----\n" + b64 + "\n-----END EC PRIVATE KEY-----\n";
}

/// A file that removes itself.
struct temp_file {
  std::string path;
  explicit temp_file(const std::string& content) {
    char name[] = "/tmp/mg_local_signer_XXXXXX";
    int fd = mkstemp(name);
    ::close(fd);
    path = name;
    std::ofstream(path) << content;
  }
  ~temp_file() { std::remove(path.c_str()); }
};

domain::sign_request request_for(const std::string& payload) {
  domain::sign_request r;
  r.payload_format = "json";
  r.payload = payload;
  r.payload_hash = domain::sha256_hex(payload);
  r.intent.allowed_payload_hash = r.payload_hash;
  return r;
}

/// Verifies a 0x r‖s signature over `digest` with the key in `pem_path`.
bool openssl_verifies(const std::string& pem_path, const std::string& digest,
                      const std::string& signature) {
  BOOST_REQUIRE(signature.size() == 2 + 128);
  auto rs = unhex(signature.substr(2));
  ECDSA_SIG* sig = ECDSA_SIG_new();
  ECDSA_SIG_set0(sig, BN_bin2bn(reinterpret_cast<const unsigned char*>(rs.data()), 32, nullptr),
                 BN_bin2bn(reinterpret_cast<const unsigned char*>(rs.data() + 32), 32, nullptr));
  unsigned char* der = nullptr;
  int der_len = i2d_ECDSA_SIG(sig, &der);
  ECDSA_SIG_free(sig);
  BIO* in = BIO_new_file(pem_path.c_str(), "r");
  EVP_PKEY* pkey = PEM_read_bio_PrivateKey(in, nullptr, nullptr, nullptr);
  BIO_free(in);
  EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new_from_pkey(nullptr, pkey, nullptr);
  bool ok =
      EVP_PKEY_verify_init(ctx) == 1 &&
      EVP_PKEY_verify(ctx, der, der_len, reinterpret_cast<const unsigned char*>(digest.data()),
                      digest.size()) == 1;
  EVP_PKEY_CTX_free(ctx);
  EVP_PKEY_free(pkey);
  OPENSSL_free(der);
  return ok;
}

} // namespace

BOOST_AUTO_TEST_SUITE(local_signer)

BOOST_AUTO_TEST_CASE(keccak256_is_the_ethereum_variant) {
  BOOST_TEST(executors::keccak256_hex("") ==
             "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470");
}

BOOST_AUTO_TEST_CASE(address_of_the_known_key) {
  temp_file pem(sec1_pem(vector_key));
  executors::local_signer s(pem.path);
  BOOST_TEST(s.address() == vector_address);
  auto h = s.health();
  BOOST_TEST(h.implemented);
  BOOST_TEST(h.up);
  BOOST_TEST(h.signer_address == vector_address);
}

BOOST_AUTO_TEST_CASE(refuses_a_payload_hash_that_is_not_the_allowed_one) {
  temp_file pem(sec1_pem(vector_key));
  executors::local_signer s(pem.path);
  auto r = request_for("payload");
  r.intent.allowed_payload_hash = domain::sha256_hex("something else");
  BOOST_CHECK_THROW(s.sign(r), domain::executor_error);
  r = request_for("payload");
  r.payload_hash = r.intent.allowed_payload_hash = "abc"; // equal, but not a 32-byte hash
  BOOST_CHECK_THROW(s.sign(r), domain::executor_error);
}

BOOST_AUTO_TEST_CASE(signing_policy_local_signer_never_signs_a_bare_hash_or_an_unnamed_format) {
  temp_file pem(sec1_pem(vector_key));
  executors::local_signer s(pem.path);
  // json is not accepted unless configured by name.
  BOOST_CHECK_THROW(s.sign(request_for("payload")), domain::executor_error);
  // A bare hash: the payload is the hash itself.
  auto bare = request_for("payload");
  bare.payload_format = "evm_signing_hash";
  bare.payload = bare.payload_hash;
  BOOST_CHECK_THROW(s.sign(bare), domain::executor_error);
  executors::local_signer with_json(pem.path, {"json", "evm_signing_hash"});
  BOOST_CHECK_NO_THROW(with_json.sign(request_for("payload")));
  // Even when named, a payload that is not what the hash covers is refused.
  BOOST_CHECK_THROW(with_json.sign(bare), domain::executor_error);
  // evm_signing_data: Keccak-256 of the payload bytes.
  domain::sign_request tx;
  tx.payload_format = "evm_signing_data";
  tx.payload = "0x02c0";
  tx.payload_hash = tx.intent.allowed_payload_hash = "0x" + executors::keccak256_hex("\x02\xc0");
  BOOST_CHECK_NO_THROW(s.sign(tx));
  tx.payload = "0x02c1";
  BOOST_CHECK_THROW(s.sign(tx), domain::executor_error);
}

BOOST_AUTO_TEST_CASE(signature_verifies_with_openssl_and_has_low_s) {
  temp_file pem(sec1_pem(vector_key));
  executors::local_signer s(pem.path, {"json"});
  for (int i = 0; i < 8; ++i) {
    auto r = request_for("transfer " + std::to_string(i));
    auto out = s.sign(r);
    BOOST_TEST(out.signer_address == vector_address);
    BOOST_TEST(openssl_verifies(pem.path, unhex(r.payload_hash), out.signature));
    // s ≤ n/2 (EIP-2): the top nibble of s is at most 7.
    BOOST_TEST(std::stoi(out.signature.substr(2 + 64, 1), nullptr, 16) <= 7);
    // A different digest does not verify.
    BOOST_TEST(!openssl_verifies(pem.path, unhex(domain::sha256_hex("other")), out.signature));
  }
}

BOOST_AUTO_TEST_CASE(refuses_a_missing_or_foreign_key_file) {
  BOOST_CHECK_THROW(executors::local_signer("/nonexistent/key.pem"), std::runtime_error);
  temp_file garbage("not a key");
  BOOST_CHECK_THROW(executors::local_signer{garbage.path}, std::runtime_error);
  // A P-256 key is not secp256k1.
  EVP_PKEY* p256 = EVP_EC_gen("P-256");
  BIO* mem = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(mem, p256, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long len = BIO_get_mem_data(mem, &data);
  temp_file other(std::string(data, len));
  BIO_free(mem);
  EVP_PKEY_free(p256);
  BOOST_CHECK_THROW(executors::local_signer{other.path}, std::runtime_error);
}

BOOST_AUTO_TEST_CASE(registered_as_local_only_when_its_key_file_is_set) {
  config::settings s;
  BOOST_TEST(executors::configured_providers(s).find_signer("local") == nullptr);
  temp_file pem(sec1_pem(vector_key));
  s.local_signer_key_file = pem.path;
  auto providers = executors::configured_providers(s);
  auto* local = providers.find_signer("local");
  BOOST_REQUIRE(local != nullptr);
  BOOST_TEST(local->health().signer_address == vector_address);
  BOOST_TEST(providers.find_signer("sim") != nullptr); // the built-ins stay
  s.local_signer_key_file = "/nonexistent/key.pem";
  BOOST_CHECK_THROW(executors::configured_providers(s), std::runtime_error);
}

BOOST_AUTO_TEST_SUITE_END()
