#include "domain/json_writer.hpp"

#include <cmath>
#include <cstdio>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "domain/utf8.hpp"

namespace mg::json {

struct writer::impl {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w{buffer};
};

writer::writer() : impl_(std::make_unique<impl>()) {}
writer::~writer() = default;

writer& writer::begin_object() {
  impl_->w.StartObject();
  return *this;
}
writer& writer::end_object() {
  impl_->w.EndObject();
  return *this;
}
writer& writer::begin_array() {
  impl_->w.StartArray();
  return *this;
}
writer& writer::end_array() {
  impl_->w.EndArray();
  return *this;
}
writer& writer::key(std::string_view name) {
  const std::string text = domain::to_valid_utf8(name);
  impl_->w.Key(text.data(), static_cast<rapidjson::SizeType>(text.size()));
  return *this;
}
writer& writer::string(std::string_view s) {
  const std::string text = domain::to_valid_utf8(s);
  impl_->w.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
  return *this;
}
writer& writer::signed_number(int64_t n) {
  impl_->w.Int64(n);
  return *this;
}
writer& writer::unsigned_number(uint64_t n) {
  impl_->w.Uint64(n);
  return *this;
}
writer& writer::number(double d) {
  if (!std::isfinite(d))
    return null();
  char text[32];
  const int n = std::snprintf(text, sizeof text, "%.17g", d);
  impl_->w.RawValue(text, static_cast<size_t>(n), rapidjson::kNumberType);
  return *this;
}
writer& writer::boolean(bool b) {
  impl_->w.Bool(b);
  return *this;
}
writer& writer::member_or_null(std::string_view name, std::string_view s) {
  key(name);
  return s.empty() ? null() : string(s);
}
writer& writer::null() {
  impl_->w.Null();
  return *this;
}
writer& writer::raw(std::string_view json) {
  impl_->w.RawValue(json.data(), json.size(), rapidjson::kObjectType);
  return *this;
}

std::string writer::str() const {
  return std::string(impl_->buffer.GetString(), impl_->buffer.GetSize());
}

} // namespace mg::json
