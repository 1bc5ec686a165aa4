// The CEX venue history protocol (executors/cex_venue_client.hpp): what a
// page parses to, and the replies it refuses without echoing them.
#include <boost/test/unit_test.hpp>

#include <string>

#include "executors/cex_venue_client.hpp"

using namespace mg;

namespace {

const std::string good_item =
    R"({"id": "wd-1", "direction": "withdrawal", "asset": "USDC", "amount": "0.000001",)"
    R"( "status": "completed", "occurred_at": "2024-05-01T12:00:00.123+02:00",)"
    R"( "tx_hash": null, "network": "base", "memo": "kept raw"})";

std::string refusal(const std::string& body) {
  try {
    executors::parse_cex_transfer_page(body);
  } catch (const executors::venue_reply_error& e) {
    return e.what();
  }
  return "accepted";
}

} // namespace

BOOST_AUTO_TEST_SUITE(cex_venue_client)

BOOST_AUTO_TEST_CASE(a_page_parses_to_transfers_cursor_and_has_more) {
  auto p = executors::parse_cex_transfer_page(R"({"transfers": [)" + good_item +
                                              R"(], "next_cursor": "n1", "has_more": true})");
  BOOST_REQUIRE(p.transfers.size() == 1u);
  auto& t = p.transfers[0];
  BOOST_TEST(t.venue_transfer_id == "wd-1");
  BOOST_TEST(t.direction == "withdrawal");
  BOOST_TEST(t.amount == "0.000001"); // kept as the exact decimal string
  BOOST_TEST(t.tx_hash == "");
  BOOST_TEST(t.network == "base");
  BOOST_TEST(t.address == "");
  BOOST_TEST(t.raw_json.find("\"memo\":\"kept raw\"") != std::string::npos);
  BOOST_TEST(p.next_cursor.value_or("") == "n1");
  BOOST_TEST(p.has_more);

  auto empty = executors::parse_cex_transfer_page(R"({"transfers": []})");
  BOOST_TEST(empty.transfers.empty());
  BOOST_TEST(!empty.next_cursor.has_value()); // absent: the cursor stays
  BOOST_TEST(!empty.has_more);
}

BOOST_AUTO_TEST_CASE(bad_pages_are_refused_naming_the_problem_not_the_body) {
  BOOST_TEST(refusal("{\"transfers\": [").find("not JSON") != std::string::npos);
  BOOST_TEST(refusal(R"({"transfers": [{"id": "secret-looking-id", "direction": "deposit",)"
                     R"( "asset": "USDC", "amount": 1.5, "status": "x",)"
                     R"( "occurred_at": "2024-05-01T12:00:00Z"}]})") ==
             "venue reply refused: transfers[0].amount must be a string");
  BOOST_TEST(refusal(R"({"transfers": [{"id": "", "direction": "deposit", "asset": "USDC",)"
                     R"( "amount": "1", "status": "x", "occurred_at": "2024-05-01T12:00:00Z"}]})")
                 .find("transfers[0].id") != std::string::npos);
  BOOST_TEST(refusal(R"({"transfers": [{"id": "a", "direction": "deposit", "asset": "USDC",)"
                     R"( "amount": "1", "status": "x", "occurred_at": "2024-13-01T12:00:00Z"}]})")
                 .find("occurred_at") != std::string::npos);
  BOOST_TEST(refusal(R"({"transfers": [], "next_cursor": ""})").find("next_cursor") !=
             std::string::npos);
  std::string many = R"({"transfers": [)";
  for (size_t i = 0; i <= executors::cex_page_max_items; ++i)
    many += (i ? "," : "") + good_item;
  BOOST_TEST(refusal(many + "]}").find("more than 1000") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(venue_names_are_path_segments) {
  for (auto* ok : {"binance", "okx-eu", "kraken_1", "a.b"})
    BOOST_TEST(executors::is_valid_venue_name(ok));
  for (auto* bad : {"", ".", "..", "a/b", "a b", "a?b", "é"})
    BOOST_TEST(!executors::is_valid_venue_name(bad));
}

BOOST_AUTO_TEST_SUITE_END()
