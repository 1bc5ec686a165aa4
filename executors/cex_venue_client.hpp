#pragma once
// The client of a CEX venue's deposit/withdrawal history, as served at
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
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "executors/json_http_client.hpp"
#include "persistence/cex_transfer_store.hpp"

namespace mg::executors {

/// The venue answered, but not with a page of the protocol above.
struct venue_reply_error : domain::executor_error {
  using domain::executor_error::executor_error;
};

struct cex_transfer_page {
  std::vector<db::cex_transfer> transfers;
  std::optional<std::string> next_cursor;
  bool has_more = false;
};

inline constexpr size_t cex_page_max_items = 1000;

/// Venue names are path segments: 1–64 of [A-Za-z0-9._-].
bool is_valid_venue_name(std::string_view venue);

/// Parses and validates a 200 body; throws venue_reply_error naming the
/// first problem (never echoing the body).
cex_transfer_page parse_cex_transfer_page(std::string_view body);

class cex_venue_client {
public:
  /// Throws std::invalid_argument when `base_url` is not http(s).
  cex_venue_client(const std::string& base_url, double timeout_seconds);

  /// One page of `venue`'s history after `cursor` (nullopt: from the start).
  /// Transport failures throw domain::executor_error, anything but a valid
  /// 200 page throws venue_reply_error.
  cex_transfer_page fetch_transfers(const std::string& venue,
                                    const std::optional<std::string>& cursor) const;

private:
  json_http_client http_;
};

} // namespace mg::executors
