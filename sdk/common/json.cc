#include "sdk/common/json.h"

#include <cmath>

#include "fmt/format.h"

namespace uncore::common {

size_t ValidUtf8Length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
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
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

void AppendJsonString(std::string_view value, std::string* out) {
  out->push_back('"');
  for (size_t i = 0; i < value.size();) {
    const unsigned char c = static_cast<unsigned char>(value[i]);
    switch (c) {
      case '"':
        *out += "\\\"";
        ++i;
        continue;
      case '\\':
        *out += "\\\\";
        ++i;
        continue;
      case '\n':
        *out += "\\n";
        ++i;
        continue;
      case '\r':
        *out += "\\r";
        ++i;
        continue;
      case '\t':
        *out += "\\t";
        ++i;
        continue;
      case '\b':
        *out += "\\b";
        ++i;
        continue;
      case '\f':
        *out += "\\f";
        ++i;
        continue;
      default:
        break;
    }
    if (c < 0x20 || c == 0x7F) {
      *out += fmt::format("\\u{:04x}", c);
      ++i;
      continue;
    }
    const size_t len = ValidUtf8Length(value, i);
    if (len == 0) {
      *out += fmt::format("\\u{:04x}", c);  // the byte, read as Latin-1
      ++i;
      continue;
    }
    out->append(value.substr(i, len));
    i += len;
  }
  out->push_back('"');
}

void JsonWriter::Newline() {
  if (!pretty_) return;
  out_.push_back('\n');
  out_.append(2 * counts_.size(), ' ');
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!counts_.empty()) {
    if (counts_.back()++ > 0) out_.push_back(',');
    Newline();
  }
}

void JsonWriter::BeginObject() {
  BeforeValue();
  out_.push_back('{');
  counts_.push_back(0);
}

void JsonWriter::EndObject() {
  const bool had_items = counts_.back() > 0;
  counts_.pop_back();
  if (had_items) Newline();
  out_.push_back('}');
}

void JsonWriter::BeginArray() {
  BeforeValue();
  out_.push_back('[');
  counts_.push_back(0);
}

void JsonWriter::EndArray() {
  const bool had_items = counts_.back() > 0;
  counts_.pop_back();
  if (had_items) Newline();
  out_.push_back(']');
}

void JsonWriter::Key(std::string_view key) {
  BeforeValue();
  AppendJsonString(key, &out_);
  out_ += pretty_ ? ": " : ":";
  after_key_ = true;
}

void JsonWriter::String(std::string_view value) {
  BeforeValue();
  AppendJsonString(value, &out_);
}

void JsonWriter::StringArray(const std::vector<std::string>& values) {
  BeginArray();
  for (const std::string& value : values) String(value);
  EndArray();
}

void JsonWriter::Int(int64_t value) {
  BeforeValue();
  out_ += fmt::format("{}", value);
}

void JsonWriter::Uint(uint64_t value) {
  BeforeValue();
  out_ += fmt::format("{}", value);
}

void JsonWriter::Double(double value) {
  BeforeValue();
  if (!std::isfinite(value)) {
    out_ += "null";
    return;
  }
  out_ += fmt::format("{}", value);
}

void JsonWriter::Bool(bool value) {
  BeforeValue();
  out_ += value ? "true" : "false";
}

void JsonWriter::Null() {
  BeforeValue();
  out_ += "null";
}

}  // namespace uncore::common
