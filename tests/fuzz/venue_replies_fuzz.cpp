// What CEX and gateway venues answer (domain/venue_replies): the first byte
// picks the parser, the rest is the reply body. Invariants: a bad reply
// throws the parser's own error and nothing else; an accepted one holds
// only what the protocol allows (decimal amounts, bounded fields, known
// directions, at most cex_page_max_items transfers).
#include "domain/movement_requests.hpp"
#include "domain/venue_replies.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using namespace mg::domain;

namespace {

void check_cex_page(std::string_view body) {
  cex_transfer_page page;
  try {
    page = parse_cex_transfer_page(body);
  } catch (const venue_reply_error&) {
    return;
  }
  MG_FUZZ_CHECK(page.transfers.size() <= cex_page_max_items, "page size is bounded");
  if (page.next_cursor)
    MG_FUZZ_CHECK(!page.next_cursor->empty() && page.next_cursor->size() <= 512,
                  "cursor is 1-512 characters");
  for (auto& t : page.transfers) {
    MG_FUZZ_CHECK(t.direction == "deposit" || t.direction == "withdrawal", "known direction");
    MG_FUZZ_CHECK(is_decimal(t.amount), "amount is a decimal string");
    MG_FUZZ_CHECK(!t.venue_transfer_id.empty() && t.venue_transfer_id.size() <= 128,
                  "id is 1-128 characters");
    MG_FUZZ_CHECK(!t.asset.empty() && t.asset.size() <= 32, "asset is 1-32 characters");
    MG_FUZZ_CHECK(t.tx_hash.size() <= 256 && t.network.size() <= 64 && t.address.size() <= 256,
                  "optional fields are bounded");
    MG_FUZZ_CHECK(!t.raw_json.empty(), "the raw item is kept");
  }
}

void check_gateway_balance(const std::string& body) {
  balance_amount b;
  try {
    b = parse_gateway_balance(body);
  } catch (const balance_fetch_error&) {
    return;
  }
  MG_FUZZ_CHECK(b.asset == "USDC", "only USDC is accepted");
  MG_FUZZ_CHECK(is_decimal(b.amount), "amount is a decimal string");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1)
    return 0;
  auto body = mg::fuzz::bytes(data + 1, size - 1);
  if (data[0] % 2 == 0)
    check_cex_page(body);
  else
    check_gateway_balance(std::string(body));
  return 0;
}
