// A small streaming JSON writer (no DOM, no dependencies).
//
//   JsonWriter w;
//   w.BeginObject();
//   w.Key("box"); w.String("imc");
//   w.Key("code"); w.Uint(4);
//   w.EndObject();
//   std::string text = w.Take();   // {"box":"imc","code":4}
//
// Strings are escaped per RFC 8259: '"' and '\\' are escaped; \b \f \n \r \t
// get their short escapes; other control characters (U+0000-U+001F) and DEL
// are written as \u00XX; valid UTF-8 (overlong forms, surrogates and code
// points above U+10FFFF are invalid) is copied as is; each byte that is not
// part of valid UTF-8 is written as \u00XX, the byte read as Latin-1 (so
// "\xff" becomes "\u00ff", i.e. U+00FF).  The output is thus always valid
// JSON in valid UTF-8 and no byte is silently dropped; a reader cannot tell
// such a byte from the same code point written as real UTF-8.  Non-finite
// numbers are written as null; doubles use the shortest text that reads back
// exactly.
//
// Guarantees: output is well-formed as long as Begin/End calls pair up.
#ifndef UNCORE_SDK_COMMON_JSON_H_
#define UNCORE_SDK_COMMON_JSON_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sdk/common/utf8.h"

namespace uncore::common {

class JsonWriter {
 public:
  explicit JsonWriter(bool pretty = false) : pretty_(pretty) {}

  void BeginObject();
  void EndObject();
  void BeginArray();
  void EndArray();
  void Key(std::string_view key);
  void String(std::string_view value);
  // An array of strings.
  void StringArray(const std::vector<std::string>& values);
  void Int(int64_t value);
  void Uint(uint64_t value);
  void Double(double value);
  void Bool(bool value);
  void Null();

  std::string Take() { return std::move(out_); }
  const std::string& str() const { return out_; }

 private:
  void BeforeValue();
  void Newline();

  std::string out_;
  // One entry per open container: number of items written so far.
  std::vector<int> counts_;
  bool after_key_ = false;
  bool pretty_;
};

// AppendJsonString and ValidUtf8Length: sdk/common/utf8.h.

}  // namespace uncore::common

#endif  // UNCORE_SDK_COMMON_JSON_H_
