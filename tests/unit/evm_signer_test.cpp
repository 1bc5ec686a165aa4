// The `evm_local` signer: known key → address vectors, the EIP-155 example
// signature reproduced byte for byte, an EIP-1559 transaction whose sender
// recovers to ganache's deterministic account, and refusals that happen
// before the key is used.
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "domain/evm_tx.hpp"
#include "domain/keccak.hpp"
#include "executors/evm_local_signer.hpp"
#include "executors/registry.hpp"

using namespace mg;
using domain::uint256;

namespace {

const std::string eip155_key = "4646464646464646464646464646464646464646464646464646464646464646";
const std::string eip155_address = "0x9d8A62f656a8d1615C1294fd71e9CFb3E4855A4F";
// ganache --wallet.deterministic, account 0
const std::string ganache_key = "4f3edf983ac636a65a842ce7c78d9aa706d3b113bce9c46f30d7d21715b23b1d";
const std::string ganache_address = "0x90F8bf6A479f320ead074411a4B0e7944Ea8c9C1";
// secp256k1 group order n: keys must lie in [1, n-1].
const std::string curve_order = "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141";

/// A key file that removes itself.
struct key_file {
  std::string path;
  explicit key_file(const std::string& content) {
    char name[] = "/tmp/mg_evm_key_XXXXXX";
    int fd = mkstemp(name);
    ::close(fd);
    path = name;
    std::ofstream(path) << content;
  }
  ~key_file() { std::remove(path.c_str()); }
};

uint256 dec(const char* d) {
  return uint256::from_decimal(d).value();
}

std::string bytes(const std::string& hex) {
  return domain::parse_0x_hex(hex).value();
}

domain::legacy_tx eip155_example() {
  domain::legacy_tx tx;
  tx.nonce = 9;
  tx.gas_price = dec("20000000000");
  tx.gas_limit = 21000;
  tx.to = bytes("0x3535353535353535353535353535353535353535");
  tx.value = dec("1000000000000000000");
  tx.chain_id = 1;
  return tx;
}

domain::eip1559_tx ganache_transfer() {
  domain::eip1559_tx tx;
  tx.chain_id = 1337;
  tx.nonce = 0;
  tx.max_priority_fee_per_gas = dec("1000000000");
  tx.max_fee_per_gas = dec("2000000000");
  tx.gas_limit = 21000;
  tx.to = bytes("0x3535353535353535353535353535353535353535");
  tx.value = dec("1000000000000000000");
  return tx;
}

/// A request the way the dispatcher builds it: allowed hash = payload hash.
domain::sign_request request_for(const std::string& signing_data) {
  domain::sign_request r;
  r.payload_format = executors::evm_signing_data_format;
  r.payload = domain::to_0x_hex(signing_data);
  r.payload_hash = "0x" + domain::keccak256_hex(signing_data);
  r.intent.allowed_payload_hash = r.payload_hash;
  return r;
}

/// The message of the executor_error `sign` throws ("" when it signs).
std::string refusal(executors::evm_local_signer& signer, const domain::sign_request& r) {
  try {
    signer.sign(r);
  } catch (const domain::executor_error& e) {
    return e.what();
  }
  return "";
}

} // namespace

BOOST_AUTO_TEST_SUITE(evm_signer)

BOOST_AUTO_TEST_CASE(addresses_of_known_keys) {
  key_file eip155(eip155_key);
  BOOST_TEST(executors::evm_local_signer(eip155.path).address() == eip155_address);
  key_file ganache("0x" + ganache_key + "\n"); // 0x and a trailing newline are fine
  executors::evm_local_signer signer(ganache.path);
  BOOST_TEST(signer.address() == ganache_address);
  auto h = signer.health();
  BOOST_TEST(h.up);
  BOOST_TEST(h.signer_address == ganache_address);
}

BOOST_AUTO_TEST_CASE(reproduces_the_eip155_example_signature_byte_for_byte) {
  key_file key(eip155_key);
  executors::evm_local_signer signer(key.path);
  auto tx = eip155_example();
  auto sig = signer.sign_hash(domain::signing_hash(tx));
  BOOST_TEST(sig.r ==
             dec("18515461264373351373200002665853028612451056578545711640558177340181847433846"));
  BOOST_TEST(sig.s ==
             dec("46948507304638947509940763649030358759909902576025900602547168820602576006531"));
  BOOST_TEST(sig.recid == 0); // v = 37 on chain 1
  BOOST_TEST(domain::to_0x_hex(domain::signed_raw(tx, sig)) ==
             "0xf86c098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a76400"
             "008025a028ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276a067cbe9d899"
             "7f761aecb703304b3800ccf555c9f3dc64214b297fb1966a3b6d83");
  // The same through the signer port, with the dispatcher's request shape.
  auto result = signer.sign(request_for(domain::signing_data(tx)));
  BOOST_TEST(result.signer_address == eip155_address);
  auto parsed = domain::parse_signature_65(result.signature).value();
  BOOST_TEST((parsed.r == sig.r && parsed.s == sig.s && parsed.recid == sig.recid));
}

BOOST_AUTO_TEST_CASE(eip155_example_signature_recovers_its_sender) {
  // r, s from the EIP text, not from our signer: an independent check of
  // recovery (what a node does with a raw transaction).
  domain::evm_signature sig{
      dec("18515461264373351373200002665853028612451056578545711640558177340181847433846"),
      dec("46948507304638947509940763649030358759909902576025900602547168820602576006531"), 0};
  auto hash = domain::signing_hash(eip155_example());
  BOOST_TEST(executors::recover_evm_address(hash, sig).value() == eip155_address);
  // The wrong recovery id recovers someone else: the "insufficient funds" trap.
  sig.recid = 1;
  auto other = executors::recover_evm_address(hash, sig);
  BOOST_TEST((!other || *other != eip155_address));
}

BOOST_AUTO_TEST_CASE(eip1559_transaction_recovers_to_the_ganache_account) {
  key_file key(ganache_key);
  executors::evm_local_signer signer(key.path);
  auto tx = ganache_transfer();
  auto hash = domain::signing_hash(tx);
  BOOST_TEST(domain::to_0x_hex(hash) ==
             "0x10dad60c0ddedf2560d50738dd033b1264b0831649d1d8dfd7f7c68aab58127d");
  auto result = signer.sign(request_for(domain::signing_data(tx)));
  auto sig = domain::parse_signature_65(result.signature).value();
  BOOST_TEST(executors::recover_evm_address(hash, sig).value() == ganache_address);
  // the raw bytes carry the same r, s and yParity
  auto raw = domain::signed_raw(tx, sig);
  BOOST_TEST(raw[0] == '\x02');
  BOOST_TEST(raw.find(sig.r.to_big_endian()) != std::string::npos);
}

BOOST_AUTO_TEST_CASE(signatures_are_deterministic_and_low_s) {
  key_file key(ganache_key);
  executors::evm_local_signer signer(key.path);
  auto half_order =
      *uint256::from_hex("0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0");
  for (int i = 0; i < 32; ++i) {
    auto hash = domain::keccak256("message " + std::to_string(i));
    auto a = signer.sign_hash(hash), b = signer.sign_hash(hash);
    BOOST_TEST((a.r == b.r && a.s == b.s && a.recid == b.recid));
    BOOST_TEST(a.s <= half_order);
    BOOST_TEST(executors::recover_evm_address(hash, a).value() == ganache_address);
  }
}

BOOST_AUTO_TEST_CASE(refuses_a_payload_hash_other_than_the_allowed_one_before_signing) {
  key_file key(ganache_key);
  executors::evm_local_signer signer(key.path);
  auto r = request_for(domain::signing_data(ganache_transfer()));
  r.intent.allowed_payload_hash = "0x" + domain::keccak256_hex("another transaction");
  BOOST_TEST(refusal(signer, r).find("allowed_payload_hash") != std::string::npos);
  // Checked first: even a malformed hash is refused for the mismatch, i.e.
  // nothing about the hash was parsed or signed.
  r.payload_hash = "not hex";
  BOOST_TEST(refusal(signer, r).find("allowed_payload_hash") != std::string::npos);
  r.intent.allowed_payload_hash = "";
  BOOST_TEST(refusal(signer, r).find("allowed_payload_hash") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(refuses_a_payload_that_does_not_hash_to_payload_hash) {
  key_file key(ganache_key);
  executors::evm_local_signer signer(key.path);
  auto tx = ganache_transfer();
  auto r = request_for(domain::signing_data(tx));
  BOOST_TEST(refusal(signer, r).empty());
  // Same (allowed) hash, but the payload shown is a different transaction.
  auto other = tx;
  other.value = dec("2000000000000000000");
  r.payload = domain::to_0x_hex(domain::signing_data(other));
  BOOST_TEST(refusal(signer, r).find("does not match") != std::string::npos);
  // A format the signer cannot check is refused.
  r = request_for(domain::signing_data(tx));
  r.payload_format = "json";
  BOOST_TEST(!refusal(signer, r).empty());
  // A bare hash (evm_signing_hash: the payload is the hash itself) is never
  // signed: the signer must see the transaction.
  r.payload_format = "evm_signing_hash";
  r.payload = r.payload_hash;
  BOOST_TEST(refusal(signer, r).find("does not match") != std::string::npos);
  // a 31-byte hash
  r = request_for(domain::signing_data(tx));
  r.payload_hash = r.intent.allowed_payload_hash = r.payload_hash.substr(0, 64);
  BOOST_TEST(refusal(signer, r).find("32 bytes") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(refuses_key_files_that_are_not_a_valid_key_without_echoing_them) {
  for (const std::string& bad : std::vector<std::string>{
           std::string(""), eip155_key.substr(2), eip155_key + "00", "zz" + eip155_key.substr(2),
           std::string(64, '0'), curve_order, "-----BEGIN EC PRIVATE KEY-----"}) {
    key_file key(bad);
    try {
      executors::evm_local_signer signer(key.path);
      BOOST_ERROR("accepted a bad key: " << bad);
    } catch (const std::runtime_error& e) {
      std::string what = e.what();
      BOOST_TEST(what.find(key.path) != std::string::npos);
      BOOST_TEST(what.find("MG_EVM_SIGNER_KEY_FILE") != std::string::npos);
      if (bad.size() > 8)
        BOOST_TEST(what.find(bad.substr(2, 8)) == std::string::npos);
    }
  }
  BOOST_CHECK_THROW(executors::evm_local_signer("/nonexistent/evm.key"), std::runtime_error);
}

BOOST_AUTO_TEST_CASE(registered_as_evm_local_only_when_its_key_file_is_set) {
  config::settings s;
  BOOST_TEST(executors::configured_providers(s).find_signer("evm_local") == nullptr);
  key_file key(ganache_key + "\n");
  s.evm_signer_key_file = key.path;
  auto providers = executors::configured_providers(s);
  auto* signer = providers.find_signer("evm_local");
  BOOST_REQUIRE(signer != nullptr);
  BOOST_TEST(signer->health().signer_address == ganache_address);
  BOOST_TEST(providers.find_signer("sim") != nullptr); // the built-ins stay
  s.evm_signer_key_file = "/nonexistent/evm.key";
  BOOST_CHECK_THROW(executors::configured_providers(s), std::runtime_error);
}

BOOST_AUTO_TEST_CASE(eip1559_signing_data_parses_back_to_its_transaction) {
  auto tx = ganache_transfer();
  tx.data = domain::erc20_transfer_calldata(tx.to, domain::uint256(7));
  auto parsed = domain::parse_eip1559_signing_data(domain::signing_data(tx));
  BOOST_REQUIRE(parsed);
  BOOST_TEST(domain::signing_data(*parsed) == domain::signing_data(tx));
  BOOST_TEST(parsed->chain_id == tx.chain_id);
  BOOST_TEST(parsed->to == tx.to);
  BOOST_TEST(parsed->data == tx.data);
  // A legacy transaction's signing data, or one byte more, is not one.
  domain::legacy_tx legacy;
  BOOST_TEST(!domain::parse_eip1559_signing_data(domain::signing_data(legacy)));
  BOOST_TEST(!domain::parse_eip1559_signing_data(domain::signing_data(tx) + "x"));
}

BOOST_AUTO_TEST_SUITE_END()
