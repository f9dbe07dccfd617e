// A small streaming JSON writer (no DOM, no dependencies).
//
//   JsonWriter w;
//   w.BeginObject();
//   w.Key("box"); w.String("imc");
//   w.Key("code"); w.Uint(4);
//   w.EndObject();
//   std::string text = w.Take();   // {"box":"imc","code":4}
//
// Strings are escaped per RFC 8259; bytes that are not valid UTF-8 are
// written as \u00XX escapes of each byte's Latin-1 reading, so the output is
// always valid JSON and no byte is silently dropped.  Non-finite numbers are
// written as null.
//
// Guarantees: output is well-formed as long as Begin/End calls pair up.
#ifndef UNCORE_SDK_COMMON_JSON_H_
#define UNCORE_SDK_COMMON_JSON_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace uncore {

class JsonWriter {
 public:
  explicit JsonWriter(bool pretty = false) : pretty_(pretty) {}

  void BeginObject();
  void EndObject();
  void BeginArray();
  void EndArray();
  void Key(std::string_view key);
  void String(std::string_view value);
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

// Appends `value` to `out` as a quoted, escaped JSON string.
void AppendJsonString(std::string_view value, std::string* out);

}  // namespace uncore

#endif  // UNCORE_SDK_COMMON_JSON_H_
