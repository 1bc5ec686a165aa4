// parse_eip1559_signing_data: what the submitter reads back out of the
// bytes a signer signed. Invariants: an accepted input is exactly
// signing_data of the transaction read (nothing is ignored or normalised),
// and the signed raw transaction and hashes can be built from it.
#include "domain/evm_tx.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using namespace mg::domain;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in = mg::fuzz::bytes(data, size);
  auto tx = parse_eip1559_signing_data(in);
  if (!tx)
    return 0;
  MG_FUZZ_CHECK(signing_data(*tx) == in, "signing_data(parse(x)) == x");
  MG_FUZZ_CHECK(tx->to.empty() || tx->to.size() == 20, "to is 20 bytes or a creation");
  MG_FUZZ_CHECK(signing_hash(*tx).size() == 32, "32-byte signing hash");
  evm_signature sig{uint256(1), uint256(2), 1};
  auto raw = signed_raw(*tx, sig);
  MG_FUZZ_CHECK(!raw.empty() && raw[0] == 0x02, "typed transaction");
  MG_FUZZ_CHECK(transaction_hash(raw).size() == 32, "32-byte transaction hash");
  return 0;
}
