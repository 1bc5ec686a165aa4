#include "domain/json_reader.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <unordered_set>
#include <vector>

#include "domain/utf8.hpp"

namespace mg::json {

namespace {

using writer_t = rapidjson::Writer<rapidjson::StringBuffer>;

/// SAX handler between RapidJSON's iterative reader and the document being
/// built: refuses what SPEC §5 refuses the moment it is read, and writes
/// the serialisation alongside.
class checking_handler {
public:
  checking_handler(rapidjson::Document& doc, const read_limits& limits)
      : doc_(doc), limits_(limits), writer_(buffer_) {}

  bool Null() {
    return scalar([&] { return doc_.Null() && writer_.Null(); });
  }
  bool Bool(bool b) {
    return scalar([&] { return doc_.Bool(b) && writer_.Bool(b); });
  }
  // Unused with kParseNumbersAsStringsFlag; present for the Handler concept.
  bool Int(int) { return fail("unexpected number event"); }
  bool Uint(unsigned) { return fail("unexpected number event"); }
  bool Int64(int64_t) { return fail("unexpected number event"); }
  bool Uint64(uint64_t) { return fail("unexpected number event"); }
  bool Double(double) { return fail("unexpected number event"); }

  bool RawNumber(const char* s, rapidjson::SizeType n, bool) {
    return scalar([&] {
      return number_value(std::string(s, n)) && writer_.RawValue(s, n, rapidjson::kNumberType);
    });
  }

  bool String(const char* s, rapidjson::SizeType n, bool) {
    if (!clean(s, n, "string"))
      return false;
    return scalar([&] { return doc_.String(s, n, true) && writer_.String(s, n); });
  }

  bool StartObject() {
    if (!enter())
      return false;
    keys_.emplace_back();
    return doc_.StartObject() && writer_.StartObject();
  }

  bool Key(const char* s, rapidjson::SizeType n, bool) {
    if (!clean(s, n, "member name"))
      return false;
    if (limits_.refuse_duplicates && !keys_.back().emplace(s, n).second)
      return fail("member name \"" + domain::to_valid_utf8(std::string_view(s, n).substr(0, 64)) +
                  "\" given twice");
    if (!doc_.Key(s, n, true) || !writer_.Key(s, n))
      return false;
    if (depth_ == 1) {
      root_key_.assign(s, n);
      value_start_ = buffer_.GetSize() + 1; // after the ':' the value's prefix writes
      in_member_ = true;
    }
    return true;
  }

  bool EndObject(rapidjson::SizeType members) {
    keys_.pop_back();
    return leave([&] { return doc_.EndObject(members) && writer_.EndObject(members); });
  }

  bool StartArray() {
    if (!enter())
      return false;
    return doc_.StartArray() && writer_.StartArray();
  }

  bool EndArray(rapidjson::SizeType elements) {
    return leave([&] { return doc_.EndArray(elements) && writer_.EndArray(elements); });
  }

  const std::string& error() const { return error_; }
  void refuse(std::string why) { fail(std::move(why)); }
  std::string text() const { return std::string(buffer_.GetString(), buffer_.GetSize()); }
  std::map<std::string, std::string> take_members() { return std::move(members_); }

private:
  bool fail(std::string why) {
    if (error_.empty())
      error_ = std::move(why);
    return false;
  }

  bool clean(const char* s, rapidjson::SizeType n, const char* what) {
    std::string_view v(s, n);
    if (v.find('\0') != std::string_view::npos)
      return fail(std::string(what) + " holds U+0000");
    // RapidJSON 1.1 decodes a lone low surrogate escape (\udc00) into the
    // bytes of U+DC00; strict UTF-8 refuses those, and raw invalid bytes.
    if (!domain::is_valid_utf8(v))
      return fail(std::string(what) + " is not valid UTF-8 (or holds a lone surrogate)");
    return true;
  }

  bool enter() {
    if (++depth_ > limits_.max_depth)
      return fail("nested deeper than " + std::to_string(limits_.max_depth) + " levels");
    return true;
  }

  template <class F> bool leave(F&& close) {
    --depth_;
    if (!close())
      return false;
    if (depth_ == 1)
      member_done();
    return true;
  }

  template <class F> bool scalar(F&& write) {
    if (!write())
      return false;
    if (depth_ == 1)
      member_done();
    return true;
  }

  // Called when a value directly inside the root finished; only object
  // members are kept (array elements have no name).
  void member_done() {
    if (keys_.size() == 1 && in_member_) {
      members_[root_key_] =
          std::string(buffer_.GetString() + value_start_, buffer_.GetSize() - value_start_);
      in_member_ = false;
    }
  }

  bool number_value(const std::string& literal) {
    const bool integral = literal.find_first_of(".eE") == std::string::npos;
    if (integral) {
      errno = 0;
      char* end = nullptr;
      if (literal[0] == '-') {
        long long v = std::strtoll(literal.c_str(), &end, 10);
        if (errno == 0 && *end == '\0' && !(v == 0))
          return doc_.Int64(v);
      } else {
        unsigned long long v = std::strtoull(literal.c_str(), &end, 10);
        if (errno == 0 && *end == '\0')
          return doc_.Uint64(v);
      }
    }
    // A fraction, an exponent, -0 or an integer beyond 64 bits.
    errno = 0;
    char* end = nullptr;
    double d = std::strtod(literal.c_str(), &end);
    if (*end != '\0' || !std::isfinite(d))
      return fail("number " + literal.substr(0, 64) + " is too big");
    return doc_.Double(d);
  }

  rapidjson::Document& doc_;
  const read_limits& limits_;
  rapidjson::StringBuffer buffer_;
  writer_t writer_;
  int depth_ = 0;
  std::vector<std::unordered_set<std::string>> keys_; // one per open object
  std::string root_key_;
  size_t value_start_ = 0;
  bool in_member_ = false;
  std::map<std::string, std::string> members_;
  std::string error_;
};

constexpr unsigned parse_flags = rapidjson::kParseIterativeFlag |
                                 rapidjson::kParseValidateEncodingFlag |
                                 rapidjson::kParseNumbersAsStringsFlag;

} // namespace

std::optional<read_result> read(std::string_view text, std::string* error,
                                const read_limits& limits) {
  read_result out;
  checking_handler handler(out.doc, limits);
  rapidjson::ParseResult result;
  auto generate = [&](rapidjson::Document&) {
    rapidjson::MemoryStream stream(text.data(), text.size());
    rapidjson::Reader reader;
    result = reader.Parse<parse_flags>(stream, handler);
    // The stream reads a NUL byte as its end: bytes after one are not JSON.
    if (!result.IsError() && stream.Tell() != text.size()) {
      result.Set(rapidjson::kParseErrorDocumentRootNotSingular, stream.Tell());
      handler.refuse("a NUL byte outside a string");
    }
    return !result.IsError();
  };
  out.doc.Populate(generate);
  if (result.IsError()) {
    if (error) {
      std::string why =
          handler.error().empty() ? rapidjson::GetParseError_En(result.Code()) : handler.error();
      *error = why + " at offset " + std::to_string(result.Offset());
    }
    return std::nullopt;
  }
  out.text = handler.text();
  out.members = handler.take_members();
  return out;
}

} // namespace mg::json
