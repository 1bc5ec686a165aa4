// EVM transactions byte for byte: the EIP-155 example from the EIP itself, an
// EIP-1559 transaction whose signing hash was computed independently (a
// separate Keccak implementation in Python over hand-written RLP), EIP-55
// checksums from the EIP, and ERC-20 transfer calldata.
#include <boost/test/unit_test.hpp>

#include "domain/evm_address.hpp"
#include "domain/evm_tx.hpp"
#include "domain/keccak.hpp"

using namespace mg::domain;

namespace {

std::string bytes(const std::string& hex) {
  return parse_0x_hex(hex).value();
}

uint256 dec(const char* d) {
  return uint256::from_decimal(d).value();
}

/// The EIP-155 example: nonce 9, 20 gwei, 21000 gas, to 0x35…35, 1 ether.
legacy_tx eip155_example() {
  legacy_tx tx;
  tx.nonce = 9;
  tx.gas_price = dec("20000000000");
  tx.gas_limit = 21000;
  tx.to = bytes("0x3535353535353535353535353535353535353535");
  tx.value = dec("1000000000000000000");
  tx.chain_id = 1;
  return tx;
}

/// chain 1337 (ganache), nonce 0, 1 gwei tip, 2 gwei max fee, 21000 gas,
/// to 0x35…35, 1 ether, no data.
eip1559_tx fixed_1559() {
  eip1559_tx tx;
  tx.chain_id = 1337;
  tx.nonce = 0;
  tx.max_priority_fee_per_gas = dec("1000000000");
  tx.max_fee_per_gas = dec("2000000000");
  tx.gas_limit = 21000;
  tx.to = bytes("0x3535353535353535353535353535353535353535");
  tx.value = dec("1000000000000000000");
  return tx;
}

} // namespace

BOOST_AUTO_TEST_SUITE(evm_tx)

BOOST_AUTO_TEST_CASE(keccak256_is_not_sha3) {
  BOOST_TEST(keccak256_hex("") ==
             "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470");
}

BOOST_AUTO_TEST_CASE(eip155_example_signing_data_and_hash) {
  auto tx = eip155_example();
  BOOST_TEST(to_0x_hex(signing_data(tx)) ==
             "0xec098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a76400"
             "0080018080");
  BOOST_TEST(to_0x_hex(signing_hash(tx)) ==
             "0xdaf5a779ae972f972197303d7b574746c7ef83eadac0f2791ad23db92e4c8e53");
}

BOOST_AUTO_TEST_CASE(eip155_example_signed_transaction) {
  evm_signature sig{
      dec("18515461264373351373200002665853028612451056578545711640558177340181847433846"),
      dec("46948507304638947509940763649030358759909902576025900602547168820602576006531"),
      0}; // v = 37 = 0 + 1*2 + 35
  BOOST_TEST(to_0x_hex(signed_raw(eip155_example(), sig)) ==
             "0xf86c098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a76400"
             "008025a028ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276a067cbe9d899"
             "7f761aecb703304b3800ccf555c9f3dc64214b297fb1966a3b6d83");
}

BOOST_AUTO_TEST_CASE(eip155_v_grows_with_chain_id_and_recid) {
  auto tx = eip155_example();
  tx.chain_id = 1337;
  evm_signature sig{1, 1, 1}; // v = 1 + 1337*2 + 35 = 2710 = 0x0a96
  auto raw = to_0x_hex(signed_raw(tx, sig));
  BOOST_TEST(raw.find("820a960101") != std::string::npos); // v, then r=1, s=1 without zeros
}

BOOST_AUTO_TEST_CASE(eip1559_signing_data_and_hash_match_an_independent_computation) {
  auto tx = fixed_1559();
  BOOST_TEST(to_0x_hex(signing_data(tx)) ==
             "0x02f182053980843b9aca0084773594008252089435353535353535353535353535353535353535358"
             "80de0b6b3a764000080c0");
  BOOST_TEST(to_0x_hex(signing_hash(tx)) ==
             "0x10dad60c0ddedf2560d50738dd033b1264b0831649d1d8dfd7f7c68aab58127d");
}

BOOST_AUTO_TEST_CASE(eip1559_signed_bytes_carry_type_2_and_y_parity) {
  auto tx = fixed_1559();
  evm_signature sig{dec("1"), *uint256::from_hex("0x00ff"), 1};
  auto raw = to_0x_hex(signed_raw(tx, sig));
  // 0x02 ‖ rlp([...9 fields, yParity=1, r=1, s=0xff]): payload 49 + 1 + 1 + 2 = 53
  BOOST_TEST(raw == "0x02f5" + to_0x_hex(signing_data(tx)).substr(6) + "010181ff");
  BOOST_TEST(to_0x_hex(transaction_hash(bytes(raw))) == "0x" + keccak256_hex(bytes(raw)));
}

BOOST_AUTO_TEST_CASE(signatures_parse_in_both_v_conventions) {
  evm_signature sig{dec("5"), dec("6"), 1};
  auto text = format_signature_65(sig);
  BOOST_TEST(text.size() == 132u);
  BOOST_TEST(text.substr(130) == "1c"); // 27 + 1
  auto back = parse_signature_65(text).value();
  BOOST_TEST((back.r == sig.r && back.s == sig.s && back.recid == 1));
  BOOST_TEST(parse_signature_65(text.substr(0, 130) + "00")->recid == 0);
  BOOST_TEST(!parse_signature_65(text.substr(0, 130) + "02"));
  BOOST_TEST(!parse_signature_65(text.substr(0, 128)));
}

BOOST_AUTO_TEST_CASE(eip55_vectors_from_the_eip) {
  for (const char* a :
       {"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
        "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
        "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb"}) {
    std::string lower = *canonical_evm_address(a);
    BOOST_TEST(*eip55_checksum(lower) == a);
    BOOST_TEST((classify_evm_address(a) == address_case::checksummed), a);
  }
}

BOOST_AUTO_TEST_CASE(eip55_single_case_is_unchecksummed_and_a_wrong_mixed_case_invalid) {
  BOOST_TEST((classify_evm_address("0x52908400098527886E0F7030069857D2E4169EE7") ==
              address_case::unchecksummed));
  BOOST_TEST((classify_evm_address("0xde709f2102306220921060314715629080e2fb77") ==
              address_case::unchecksummed));
  // one letter's case flipped from the checksummed form
  BOOST_TEST((classify_evm_address("0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed") ==
              address_case::invalid));
  BOOST_TEST(!parse_evm_address("0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"));
  BOOST_TEST(
      (classify_evm_address("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe") == address_case::invalid));
  BOOST_TEST((classify_evm_address("5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed00") ==
              address_case::invalid));
  BOOST_TEST((classify_evm_address("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeg") ==
              address_case::invalid));
  BOOST_TEST(parse_evm_address("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed")->size() == 20u);
}

BOOST_AUTO_TEST_CASE(erc20_transfer_calldata_is_selector_address_amount) {
  auto to = *parse_evm_address("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed");
  auto data = erc20_transfer_calldata(to, dec("1000000000000000000000"));
  BOOST_TEST(data.size() == 68u);
  BOOST_TEST(to_0x_hex(data) ==
             "0xa9059cbb0000000000000000000000005aaeb6053f3e94c9b9a09f33669435e7ef1beaed"
             "00000000000000000000000000000000000000000000003635c9adc5dea00000");
  // the selector is the first 4 bytes of Keccak-256 of the signature
  BOOST_TEST(keccak256_hex("transfer(address,uint256)").substr(0, 8) == "a9059cbb");
  BOOST_CHECK_THROW(erc20_transfer_calldata("short", 1), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
