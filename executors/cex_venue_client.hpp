#pragma once
// The client of a CEX venue's deposit/withdrawal history; the protocol and
// its parser are in domain/venue_replies.hpp.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/venue_replies.hpp"
#include "executors/json_http_client.hpp"

namespace mg::executors {

using domain::cex_page_max_items;
using domain::cex_transfer_page;
using domain::is_valid_venue_name;
using domain::parse_cex_transfer_page;
using domain::venue_reply_error;

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
