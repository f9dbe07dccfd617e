// UTF-8 and JSON string escaping, header-only so that libraries built on
// the public API alone (the MPI integration) escape exactly as the SDK's
// reports do.
//
//   size_t n = common::ValidUtf8Length("caf\xc3\xa9", 3);  // 2
//   std::string out;
//   common::AppendJsonString("caf\xc3\xa9 \x01", &out);  // "café \u0001"
//
// Guarantees: pure functions; never read past the view.  JSON strings:
// '"', '\\', \b \f \n \r \t escaped, other controls and DEL as \u00XX, valid
// UTF-8 copied as is, any other byte as \u00XX (the byte read as Latin-1),
// so the output is valid UTF-8 and valid JSON for any input.
#ifndef UNCORE_SDK_COMMON_UTF8_H_
#define UNCORE_SDK_COMMON_UTF8_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace uncore::common {

// Length (1-4) of the valid UTF-8 sequence starting at text[i], or 0 when
// the byte there does not start one (overlong forms, surrogates and code
// points above U+10FFFF are invalid).  Requires i < text.size().
inline size_t ValidUtf8Length(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) {
    return static_cast<unsigned char>(text[k]);
  };
  const unsigned char c = byte(i);
  size_t len = 0;
  uint32_t min = 0;
  uint32_t cp = 0;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) {
    len = 2, min = 0x80, cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3, min = 0x800, cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4, min = 0x10000, cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + len > text.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

// Appends `value` to `out` as a quoted, escaped JSON string.
inline void AppendJsonString(std::string_view value, std::string* out) {
  constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (size_t i = 0; i < value.size();) {
    const unsigned char c = static_cast<unsigned char>(value[i]);
    const char* escape = nullptr;
    switch (c) {
      case '"':
        escape = "\\\"";
        break;
      case '\\':
        escape = "\\\\";
        break;
      case '\n':
        escape = "\\n";
        break;
      case '\r':
        escape = "\\r";
        break;
      case '\t':
        escape = "\\t";
        break;
      case '\b':
        escape = "\\b";
        break;
      case '\f':
        escape = "\\f";
        break;
      default:
        break;
    }
    if (escape != nullptr) {
      *out += escape;
      ++i;
      continue;
    }
    const size_t len = c < 0x20 || c == 0x7F ? 0 : ValidUtf8Length(value, i);
    if (len == 0) {
      *out += "\\u00";
      out->push_back(kHex[c >> 4]);
      out->push_back(kHex[c & 0xF]);
      ++i;
      continue;
    }
    out->append(value.substr(i, len));
    i += len;
  }
  out->push_back('"');
}

}  // namespace uncore::common

#endif  // UNCORE_SDK_COMMON_UTF8_H_
