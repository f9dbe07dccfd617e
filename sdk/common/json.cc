#include "sdk/common/json.h"

#include <cmath>

#include "fmt/format.h"

namespace uncore::common {

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
