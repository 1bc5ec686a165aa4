#pragma once
// What CEX and gateway venues answer, parsed and checked before anything of
// it is stored: pure functions over the reply bodies (the clients that
// fetch them are in executors/).
//
// A CEX venue's deposit/withdrawal history, as served at
// MG_CEX_VENUE_API_URL (directly by a venue adapter, or by a gateway in
// front of several venues). The protocol, one call:
//
//   GET {MG_CEX_VENUE_API_URL}/{venue}/transfers[?since=<cursor>]
//   Accept: application/json
//   200 → {"transfers": [ITEM, ...],          up to 1000 items, oldest first
//          "next_cursor": "opaque" | null,   where the next pull starts
//                                            (absent or null: stay put)
//          "has_more": true | false}         optional, default false: more
//                                            pages are ready right now
//   ITEM = {"id": "wd-1001",                 the venue's transfer id (1–128 chars)
//           "direction": "deposit" | "withdrawal",
//           "asset": "USDC",                 1–32 chars
//           "amount": "2500.00",             decimal string: digits with an
//                                            optional .fraction, no sign, no
//                                            exponent — never a JSON number
//           "status": "completed",           the venue's word (1–64 chars)
//           "occurred_at": "2024-05-01T12:00:00Z",   RFC 3339
//           "tx_hash": "0x…" | null,         optional
//           "network": "ethereum" | null,    optional
//           "address": "0x…" | null}         optional; other members are
//                                            kept in the raw copy only
//
// `since` is omitted on the first pull and percent-encoded otherwise. Any
// other status, a body that is not this shape, or a single bad item
// rejects the whole page: nothing of it is stored and the cursor stays.
//
// The gateway's unified balance, at MG_GATEWAY_API_URL:
//   GET {MG_GATEWAY_API_URL}/v1/balances/unified
//   200 {"asset": "USDC", "amount": "1234.500000"}
// `amount` is a decimal string (digits, optional .fraction, no sign, no
// exponent, at most 78 digits; a JSON number is refused so no float ever
// touches it); other members are ignored. Any other status, a body that is
// not such an object, or a transport failure is a failed fetch.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/balance_fetcher.hpp"
#include "domain/executor.hpp"

namespace mg::domain {

/// One deposit or withdrawal as the venue reported it.
struct cex_transfer {
  std::string venue_transfer_id;
  std::string direction; // deposit | withdrawal
  std::string asset;
  std::string amount;      // decimal string
  std::string status;      // the venue's own word
  std::string occurred_at; // RFC 3339
  std::string tx_hash;     // "" → none
  std::string network;     // "" → none
  std::string address;     // "" → none
  std::string raw_json;    // the item as received
};

/// The venue answered, but not with a page of the protocol above.
struct venue_reply_error : executor_error {
  using executor_error::executor_error;
};

struct cex_transfer_page {
  std::vector<cex_transfer> transfers;
  std::optional<std::string> next_cursor;
  bool has_more = false;
};

inline constexpr size_t cex_page_max_items = 1000;

/// Venue names are path segments: 1–64 of [A-Za-z0-9._-].
bool is_valid_venue_name(std::string_view venue);

/// Parses and validates a 200 body; throws venue_reply_error naming the
/// first problem (never echoing the body).
cex_transfer_page parse_cex_transfer_page(std::string_view body);

/// Parses a gateway balance reply body (see above); throws
/// balance_fetch_error naming the problem.
balance_amount parse_gateway_balance(const std::string& body);

} // namespace mg::domain
