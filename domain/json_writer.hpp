#pragma once
// Builds JSON text (response and error bodies) through RapidJSON's writer
// instead of string concatenation: every string is escaped, and text that
// echoes input has its ill-formed UTF-8 replaced by U+FFFD, so the result
// is always valid UTF-8 JSON.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

namespace mg::json {

class writer {
public:
  writer();
  ~writer();
  writer(const writer&) = delete;
  writer& operator=(const writer&) = delete;

  writer& begin_object();
  writer& end_object();
  writer& begin_array();
  writer& end_array();
  writer& key(std::string_view name);
  writer& string(std::string_view s);
  /// Any integer type, signed or unsigned, written exactly.
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  writer& number(T n) {
    if constexpr (std::is_signed_v<T>)
      return signed_number(n);
    else
      return unsigned_number(n);
  }
  /// A double as printf's %.17g (it round-trips); null when not finite,
  /// since JSON has no NaN or infinity.
  writer& number(double d);
  writer& boolean(bool b);
  writer& null();
  /// `json` must be a complete JSON value the program produced itself
  /// (a serialisation from dump(), read() or PostgreSQL).
  writer& raw(std::string_view json);

  /// Shorthand for key(name).string(s) and the like.
  writer& member(std::string_view name, std::string_view s) { return key(name).string(s); }
  writer& member(std::string_view name, const char* s) { return key(name).string(s); }
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  writer& member(std::string_view name, T n) {
    return key(name).number(n);
  }
  writer& member(std::string_view name, double d) { return key(name).number(d); }
  writer& member(std::string_view name, bool b) { return key(name).boolean(b); }
  /// key(name) then `s` as a string, or null when `s` is empty.
  writer& member_or_null(std::string_view name, std::string_view s);

  /// The text written so far.
  std::string str() const;

private:
  writer& signed_number(int64_t n);
  writer& unsigned_number(uint64_t n);

  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace mg::json
