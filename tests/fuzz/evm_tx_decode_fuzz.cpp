// libFuzzer target for domain/evm_tx_decode: the engine decodes what an
// executor (possibly remote, possibly hostile) prepared before anything is
// signed. Any input must be refused or decoded without a crash, and what
// decodes must encode back to exactly the same bytes (canonical RLP only),
// and decode again to the same transaction.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "domain/evm_tx_decode.hpp"

namespace {

bool same(const mg::domain::decoded_evm_tx& a, const mg::domain::decoded_evm_tx& b) {
  return a.kind == b.kind && a.chain_id == b.chain_id && a.nonce == b.nonce &&
         a.gas_limit == b.gas_limit && a.max_fee_per_gas == b.max_fee_per_gas &&
         a.max_priority_fee_per_gas == b.max_priority_fee_per_gas && a.to == b.to &&
         a.value == b.value && a.data == b.data && a.access_list == b.access_list;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto tx = mg::domain::decode_evm_signing_data(bytes);
  if (!tx)
    return 0;
  auto encoded = mg::domain::encode_evm_signing_data(*tx);
  if (encoded != bytes)
    std::abort(); // decode accepted a non-canonical form
  auto again = mg::domain::decode_evm_signing_data(encoded);
  if (!again || !same(*tx, *again))
    std::abort();
  (void)mg::domain::max_fee_wei(*tx);
  return 0;
}
