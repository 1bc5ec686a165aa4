#include "domain/venue_replies.hpp"

#include <cctype>
#include <regex>

#include "domain/json.hpp"
#include "domain/movement_requests.hpp"

namespace mg::domain {

namespace {

[[noreturn]] void refuse(const std::string& what) {
  throw venue_reply_error("venue reply refused: " + what);
}

/// A string member of 1..max chars; `where` names it in the error.
std::string required_string(const json::value& item, const char* key, size_t max,
                            const std::string& where) {
  auto it = item.FindMember(key);
  if (it == item.MemberEnd() || !it->value.IsString())
    refuse(where + "." + key + " must be a string");
  std::string s(it->value.GetString(), it->value.GetStringLength());
  if (s.empty() || s.size() > max)
    refuse(where + "." + key + " must have 1-" + std::to_string(max) + " characters");
  return s;
}

/// An optional string member: absent or null → "".
std::string optional_string(const json::value& item, const char* key, size_t max,
                            const std::string& where) {
  auto it = item.FindMember(key);
  if (it == item.MemberEnd() || it->value.IsNull())
    return {};
  if (!it->value.IsString() || it->value.GetStringLength() > max)
    refuse(where + "." + key + " must be a string of at most " + std::to_string(max) +
           " characters or null");
  return std::string(it->value.GetString(), it->value.GetStringLength());
}

bool is_rfc3339(const std::string& s) {
  static const std::regex re(
      R"(^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[Tt ]([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,9})?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)$)");
  return std::regex_match(s, re);
}

cex_transfer parse_item(const json::value& item, size_t index) {
  auto where = "transfers[" + std::to_string(index) + "]";
  if (!item.IsObject())
    refuse(where + " must be an object");
  cex_transfer t;
  t.venue_transfer_id = required_string(item, "id", 128, where);
  t.direction = required_string(item, "direction", 16, where);
  if (t.direction != "deposit" && t.direction != "withdrawal")
    refuse(where + ".direction must be deposit or withdrawal");
  t.asset = required_string(item, "asset", 32, where);
  t.amount = required_string(item, "amount", 80, where);
  if (!domain::is_decimal(t.amount))
    refuse(where + ".amount must be a decimal string");
  t.status = required_string(item, "status", 64, where);
  t.occurred_at = required_string(item, "occurred_at", 40, where);
  if (!is_rfc3339(t.occurred_at))
    refuse(where + ".occurred_at must be an RFC 3339 time");
  t.tx_hash = optional_string(item, "tx_hash", 256, where);
  t.network = optional_string(item, "network", 64, where);
  t.address = optional_string(item, "address", 256, where);
  t.raw_json = json::dump(item);
  return t;
}

} // namespace

bool is_valid_venue_name(std::string_view venue) {
  if (venue.empty() || venue.size() > 64 || venue == "." || venue == "..")
    return false;
  for (unsigned char c : venue)
    if (!std::isalnum(c) && c != '.' && c != '_' && c != '-')
      return false;
  return true;
}

cex_transfer_page parse_cex_transfer_page(std::string_view body) {
  std::string error;
  auto doc = json::parse(body, &error);
  if (!doc)
    refuse("not JSON (" + error + ")");
  if (!doc->IsObject())
    refuse("not a JSON object");
  auto transfers = doc->FindMember("transfers");
  if (transfers == doc->MemberEnd() || !transfers->value.IsArray())
    refuse("transfers must be an array");
  if (transfers->value.Size() > cex_page_max_items)
    refuse("more than " + std::to_string(cex_page_max_items) + " transfers in one page");
  cex_transfer_page page;
  for (rapidjson::SizeType i = 0; i < transfers->value.Size(); ++i)
    page.transfers.push_back(parse_item(transfers->value[i], i));
  if (auto c = doc->FindMember("next_cursor"); c != doc->MemberEnd() && !c->value.IsNull()) {
    if (!c->value.IsString() || c->value.GetStringLength() == 0 || c->value.GetStringLength() > 512)
      refuse("next_cursor must be a string of 1-512 characters or null");
    page.next_cursor = std::string(c->value.GetString(), c->value.GetStringLength());
  }
  if (auto m = doc->FindMember("has_more"); m != doc->MemberEnd()) {
    if (!m->value.IsBool())
      refuse("has_more must be a boolean");
    page.has_more = m->value.GetBool();
  }
  return page;
}

balance_amount parse_gateway_balance(const std::string& body) {
  std::string error;
  auto doc = json::parse(body, &error);
  if (!doc)
    throw balance_fetch_error("reply is not JSON (" + error + ")");
  if (!doc->IsObject())
    throw balance_fetch_error("reply is not a JSON object");
  auto member = [&](const char* name) -> const json::value& {
    auto it = doc->FindMember(name);
    if (it == doc->MemberEnd())
      throw balance_fetch_error(std::string("reply has no '") + name + "'");
    if (!it->value.IsString())
      throw balance_fetch_error(std::string("'") + name + "' is not a string");
    return it->value;
  };
  std::string asset = member("asset").GetString();
  std::string amount = member("amount").GetString();
  // The gateway's unified balance is USDC by contract; anything else means
  // we are talking to something we do not understand.
  if (asset != "USDC")
    throw balance_fetch_error("asset is '" + asset.substr(0, 32) + "', expected 'USDC'");
  if (!domain::is_decimal(amount))
    throw balance_fetch_error("amount is not a decimal string");
  return {asset, amount};
}

} // namespace mg::domain
