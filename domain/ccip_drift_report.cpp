#include "domain/ccip_drift_report.hpp"

#include <set>

#include "domain/json.hpp"

namespace mg::domain {

namespace {

constexpr size_t max_key_length = 200;
constexpr size_t max_value_length = 1000;

/// An optional string member; false when present but not a short string.
bool optional_string(const json::value& item, const char* name, std::string& out) {
  auto it = item.FindMember(name);
  if (it == item.MemberEnd() || it->value.IsNull())
    return true;
  if (!it->value.IsString() || it->value.GetStringLength() > max_value_length)
    return false;
  out.assign(it->value.GetString(), it->value.GetStringLength());
  return true;
}

std::optional<ccip_drift_item> parse_item(const json::value& v, std::string& why) {
  if (!v.IsObject()) {
    why = "not an object";
    return std::nullopt;
  }
  ccip_drift_item item;
  auto key = v.FindMember("key");
  if (key == v.MemberEnd() || !key->value.IsString() || key->value.GetStringLength() == 0 ||
      key->value.GetStringLength() > max_key_length) {
    why = "key must be a string of 1..200 characters";
    return std::nullopt;
  }
  item.key.assign(key->value.GetString(), key->value.GetStringLength());
  auto state = v.FindMember("state");
  std::string s = state != v.MemberEnd() && state->value.IsString() ? state->value.GetString() : "";
  if (s != "ok" && s != "drift") {
    why = "state must be \"ok\" or \"drift\"";
    return std::nullopt;
  }
  item.drift = s == "drift";
  if (!optional_string(v, "expected", item.expected) ||
      !optional_string(v, "observed", item.observed)) {
    why = "expected/observed must be strings of at most 1000 characters";
    return std::nullopt;
  }
  auto detail = v.FindMember("detail");
  if (detail != v.MemberEnd() && !detail->value.IsNull()) {
    if (!detail->value.IsObject()) {
      why = "detail must be an object";
      return std::nullopt;
    }
    item.detail_json = json::dump(detail->value);
  }
  return item;
}

} // namespace

std::optional<std::vector<ccip_drift_item>> parse_ccip_drift_report(std::string_view body,
                                                                    std::string& error) {
  std::string parse_error;
  auto doc = json::parse(body, &parse_error);
  if (!doc) {
    error = "not JSON: " + parse_error;
    return std::nullopt;
  }
  if (!doc->IsObject() || !doc->HasMember("items") || !(*doc)["items"].IsArray()) {
    error = "expected an object with an \"items\" array";
    return std::nullopt;
  }
  const auto& items = (*doc)["items"];
  if (items.Size() > ccip_drift_max_items) {
    error = "more than 10000 items";
    return std::nullopt;
  }
  std::vector<ccip_drift_item> out;
  std::set<std::string> keys;
  for (rapidjson::SizeType i = 0; i < items.Size(); ++i) {
    std::string why;
    auto item = parse_item(items[i], why);
    if (item && !keys.insert(item->key).second)
      why = "duplicate key", item.reset();
    if (!item) {
      error = "items[" + std::to_string(i) + "]: " + why;
      return std::nullopt;
    }
    out.push_back(std::move(*item));
  }
  return out;
}

} // namespace mg::domain
