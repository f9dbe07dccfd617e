// Tests of sdk/report: the table, JSON and CSV formats, WriteReport, and the
// JSON string escaping of sdk/common/json.h.
//
// Golden files live in tests/report/golden/ (UNCORE_GOLDEN_DIR).  After an
// intended format change, regenerate them and review the diff:
//
//   UNCORE_UPDATE_GOLDEN=1 build-report/tests/report_test
//   git diff tests/report/golden/
//
// With UNCORE_UPDATE_GOLDEN=1 the golden tests write the files instead of
// comparing (and still check everything else).
#include "sdk/report/report.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/common/json.h"
#include "sdk/common/status_macros.h"

namespace uncore::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// ---------------------------------------------------------------------------
// A strict UTF-8 decoder and JSON parser, written for the tests (independent
// of sdk/common/json.cc).

// Decodes the UTF-8 sequence at text[i]: its length, or 0 when invalid
// (overlong, surrogate, above U+10FFFF, truncated, stray continuation).
size_t DecodeUtf8(std::string_view text, size_t i, uint32_t* code_point) {
  const auto b = [&](size_t k) -> uint32_t {
    return static_cast<unsigned char>(text[k]);
  };
  const uint32_t first = b(i);
  size_t len;
  uint32_t cp;
  if (first < 0x80) {
    *code_point = first;
    return 1;
  } else if (first >= 0xC2 && first <= 0xDF) {
    len = 2, cp = first & 0x1F;
  } else if (first >= 0xE0 && first <= 0xEF) {
    len = 3, cp = first & 0x0F;
  } else if (first >= 0xF0 && first <= 0xF4) {
    len = 4, cp = first & 0x07;
  } else {
    return 0;
  }
  if (i + len > text.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
      (cp >= 0xD800 && cp <= 0xDFFF)) {
    return 0;
  }
  *code_point = cp;
  return len;
}

bool IsValidUtf8(std::string_view text) {
  uint32_t cp = 0;
  for (size_t i = 0; i < text.size();) {
    const size_t len = DecodeUtf8(text, i, &cp);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

struct JsonValue {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  bool boolean = false;
  std::string text;  // a number's text, or a string's decoded value
  std::vector<JsonValue> items;
  // An object's members, in order (two vectors: std::pair of an incomplete
  // type does not compile everywhere).
  std::vector<std::string> member_names;
  std::vector<JsonValue> member_values;

  bool is_null() const { return type == Type::kNull; }
  const JsonValue* Find(std::string_view key) const {
    for (size_t i = 0; i < member_names.size(); ++i) {
      if (member_names[i] == key) return &member_values[i];
    }
    return nullptr;
  }
  // The member `key`; a failed expectation (and null) when absent.
  const JsonValue& operator[](std::string_view key) const {
    static const JsonValue kMissing;
    const JsonValue* value = Find(key);
    EXPECT_NE(value, nullptr) << "missing key " << key;
    return value != nullptr ? *value : kMissing;
  }
  const JsonValue& operator[](size_t i) const {
    static const JsonValue kMissing;
    EXPECT_LT(i, items.size());
    return i < items.size() ? items[i] : kMissing;
  }
  double number() const {
    EXPECT_EQ(type, Type::kNumber);
    return std::strtod(text.c_str(), nullptr);
  }
  std::vector<std::string> keys() const { return member_names; }
};

// RFC 8259, strictly: no trailing commas, no comments, no NaN, no leading
// zeros, no raw control characters, valid UTF-8, paired surrogates, no
// duplicate keys, nothing after the value but whitespace.
class StrictJsonParser {
 public:
  explicit StrictJsonParser(std::string_view text) : text_(text) {}

  bool Parse(JsonValue* value) {
    if (!IsValidUtf8(text_)) return Fail("not valid UTF-8");
    SkipSpace();
    if (!ParseValue(value, 0)) return false;
    SkipSpace();
    if (pos_ != text_.size()) return Fail("text after the value");
    return true;
  }
  const std::string& error() const { return error_; }

 private:
  bool Fail(std::string_view what) {
    if (error_.empty()) error_ = fmt::format("{} at offset {}", what, pos_);
    return false;
  }
  void SkipSpace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' ||
            text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Consume(std::string_view literal) {
    if (text_.substr(pos_, literal.size()) != literal) return false;
    pos_ += literal.size();
    return true;
  }
  bool ParseValue(JsonValue* value, int depth) {
    if (depth > 64) return Fail("nesting too deep");
    if (pos_ >= text_.size()) return Fail("unexpected end");
    const char c = text_[pos_];
    if (c == '{') return ParseObject(value, depth);
    if (c == '[') return ParseArray(value, depth);
    if (c == '"') {
      value->type = JsonValue::Type::kString;
      return ParseString(&value->text);
    }
    if (Consume("null")) {
      value->type = JsonValue::Type::kNull;
      return true;
    }
    if (Consume("true")) {
      value->type = JsonValue::Type::kBool;
      value->boolean = true;
      return true;
    }
    if (Consume("false")) {
      value->type = JsonValue::Type::kBool;
      return true;
    }
    return ParseNumber(value);
  }
  bool ParseNumber(JsonValue* value) {
    const size_t start = pos_;
    const auto digit = [&] {
      return pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9';
    };
    if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
    if (!digit()) return Fail("bad value");
    if (text_[pos_] == '0') {
      ++pos_;
      if (digit()) return Fail("leading zero");
    } else {
      while (digit()) ++pos_;
    }
    if (pos_ < text_.size() && text_[pos_] == '.') {
      ++pos_;
      if (!digit()) return Fail("digit expected after '.'");
      while (digit()) ++pos_;
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) {
        ++pos_;
      }
      if (!digit()) return Fail("digit expected in exponent");
      while (digit()) ++pos_;
    }
    value->type = JsonValue::Type::kNumber;
    value->text = std::string(text_.substr(start, pos_ - start));
    return true;
  }
  bool ParseHex4(uint32_t* out) {
    if (pos_ + 4 > text_.size()) return Fail("short \\u escape");
    *out = 0;
    for (int k = 0; k < 4; ++k) {
      const char h = text_[pos_++];
      *out <<= 4;
      if (h >= '0' && h <= '9') {
        *out |= static_cast<uint32_t>(h - '0');
      } else if (h >= 'a' && h <= 'f') {
        *out |= static_cast<uint32_t>(h - 'a' + 10);
      } else if (h >= 'A' && h <= 'F') {
        *out |= static_cast<uint32_t>(h - 'A' + 10);
      } else {
        return Fail("bad hex digit");
      }
    }
    return true;
  }
  bool ParseString(std::string* out) {
    ++pos_;  // the opening quote
    out->clear();
    while (true) {
      if (pos_ >= text_.size()) return Fail("unterminated string");
      const unsigned char c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c < 0x20) return Fail("raw control character in string");
      if (c != '\\') {
        out->push_back(static_cast<char>(c));
        ++pos_;
        continue;
      }
      ++pos_;
      if (pos_ >= text_.size()) return Fail("unterminated escape");
      const char e = text_[pos_++];
      switch (e) {
        case '"':
          *out += '"';
          break;
        case '\\':
          *out += '\\';
          break;
        case '/':
          *out += '/';
          break;
        case 'b':
          *out += '\b';
          break;
        case 'f':
          *out += '\f';
          break;
        case 'n':
          *out += '\n';
          break;
        case 'r':
          *out += '\r';
          break;
        case 't':
          *out += '\t';
          break;
        case 'u': {
          uint32_t cp = 0;
          if (!ParseHex4(&cp)) return false;
          if (cp >= 0xDC00 && cp <= 0xDFFF) return Fail("lone low surrogate");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            uint32_t low = 0;
            if (!Consume("\\u") || !ParseHex4(&low) || low < 0xDC00 ||
                low > 0xDFFF) {
              return Fail("lone high surrogate");
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          AppendUtf8(cp, out);
          break;
        }
        default:
          return Fail("bad escape");
      }
    }
  }
  bool ParseArray(JsonValue* value, int depth) {
    ++pos_;
    value->type = JsonValue::Type::kArray;
    SkipSpace();
    if (Consume("]")) return true;
    while (true) {
      SkipSpace();
      JsonValue item;
      if (!ParseValue(&item, depth + 1)) return false;
      value->items.push_back(std::move(item));
      SkipSpace();
      if (Consume("]")) return true;
      if (!Consume(",")) return Fail("',' or ']' expected");
    }
  }
  bool ParseObject(JsonValue* value, int depth) {
    ++pos_;
    value->type = JsonValue::Type::kObject;
    SkipSpace();
    if (Consume("}")) return true;
    while (true) {
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != '"') {
        return Fail("key expected");
      }
      std::string key;
      if (!ParseString(&key)) return false;
      if (value->Find(key) != nullptr) return Fail("duplicate key");
      SkipSpace();
      if (!Consume(":")) return Fail("':' expected");
      SkipSpace();
      JsonValue member;
      if (!ParseValue(&member, depth + 1)) return false;
      value->member_names.push_back(std::move(key));
      value->member_values.push_back(std::move(member));
      SkipSpace();
      if (Consume("}")) return true;
      if (!Consume(",")) return Fail("',' or '}' expected");
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::string error_;
};

JsonValue MustParseJson(std::string_view text) {
  StrictJsonParser parser(text);
  JsonValue value;
  EXPECT_TRUE(parser.Parse(&value)) << parser.error() << "\n" << text;
  return value;
}

// RFC 4180, strictly: CRLF record ends, quoted fields with doubled quotes,
// no quote inside an unquoted field, every record ends with CRLF.
bool ParseCsv(std::string_view text,
              std::vector<std::vector<std::string>>* records,
              std::string* error) {
  size_t i = 0;
  std::vector<std::string> record;
  while (i < text.size()) {
    std::string field;
    if (text[i] == '"') {
      ++i;
      while (true) {
        if (i >= text.size()) {
          *error = "unterminated quoted field";
          return false;
        }
        if (text[i] == '"') {
          if (i + 1 < text.size() && text[i + 1] == '"') {
            field.push_back('"');
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        field.push_back(text[i++]);
      }
    } else {
      while (i < text.size() && text[i] != ',' && text[i] != '\r' &&
             text[i] != '\n') {
        if (text[i] == '"') {
          *error = fmt::format("quote in an unquoted field at {}", i);
          return false;
        }
        field.push_back(text[i++]);
      }
    }
    record.push_back(std::move(field));
    if (i < text.size() && text[i] == ',') {
      ++i;
      continue;
    }
    if (text.substr(i, 2) != "\r\n") {
      *error = fmt::format("CRLF expected at {}", i);
      return false;
    }
    i += 2;
    records->push_back(std::move(record));
    record.clear();
  }
  return true;
}

// ---------------------------------------------------------------------------
// The results the tests format.

const std::string kWeirdName = "a \"quoted\", comma\nnewline \xff\xfe";
// kWeirdName as JSON gives it back: each invalid byte read as Latin-1.
const std::string kWeirdNameFromJson =
    "a \"quoted\", comma\nnewline \xC3\xBF\xC3\xBE";
// kWeirdName in CSV: invalid bytes replaced by U+FFFD.
const std::string kWeirdNameInCsv =
    "a \"quoted\", comma\nnewline \xEF\xBF\xBD\xEF\xBF\xBD";
// kWeirdName in the table.
const std::string kWeirdNameInTable = R"(a "quoted", comma\nnewline \xff\xfe)";

constexpr uint64_t kHugeCount = (uint64_t{1} << 60) + 1;  // beyond 2^53

EventCounts Counts(uint64_t socket0, uint64_t socket1, bool estimated = false) {
  EventCounts c;
  c.total = socket0 + socket1;
  c.per_socket = {socket0, socket1};
  c.per_instance = {{0, "box0", socket0 - socket0 / 4},
                    {0, "box1", socket0 / 4},
                    {1, "box0", socket1}};
  c.estimated = estimated;
  return c;
}

RegionResult Region(std::string name, std::string path, int depth,
                    uint64_t calls, uint64_t wall_ns, uint64_t min_ns,
                    uint64_t max_ns) {
  RegionResult r;
  r.name = std::move(name);
  r.path = std::move(path);
  r.depth = depth;
  r.calls = calls;
  r.wall_ns = wall_ns;
  r.min_ns = min_ns;
  r.max_ns = max_ns;
  return r;
}

// Two sockets; three shown events (one in Joules, one estimated in places)
// and one needed only by a metric; a valid and an invalid metric; nested
// regions, one entered after a later root, one with a weird name.
Results MakeResults(bool simulated) {
  Results results;
  RunInfo& run = results.run;
  run.backend = simulated ? "sim" : "direct";
  run.simulated = simulated;
  run.host = "node17";
  run.cpu = "GenuineIntel family 6 model 0x3e";
  run.sockets = {0, 1};
  run.start_unix_ns = 1'700'000'000'000'000'000;
  run.duration_ns = 2'500'000'000;
  run.frozen_ns = 12'345;
  run.errors = {"region \"io\" closed on another thread"};
  run.warnings = {
      "multiplexing: cbo/LLC_VICTIMS.M_STATE counted 50% of the "
      "time"};

  results.events = {
      {"imc/cas_count.rd", "imc/CAS_COUNT.RD", "ctl=0x00400304", "", 1.0,
       false},
      {"power/energy-pkg", "power/energy-pkg", "config=0x2", "Joules",
       6.103515625e-05, false},
      {"cbo/llc_victims.m_state", "cbo/LLC_VICTIMS.M_STATE", "ctl=0x00400137",
       "", 1.0, false},
      {"imc/CAS_COUNT.WR", "imc/CAS_COUNT.WR", "ctl=0x00400c04", "", 1.0, true},
  };
  results.metrics = {
      {"MEM_BW_READS", "{imc/CAS_COUNT.RD} * 64 / ELAPSED_SECONDS", "bytes/s"},
      {"PCT_WRITES", "100 * {imc/CAS_COUNT.WR} / {imc/CAS_COUNT.RD}", "%"},
  };

  auto add = [&](RegionResult r, std::vector<EventCounts> inclusive,
                 std::vector<EventCounts> exclusive,
                 std::vector<MetricValue> metrics) {
    r.inclusive = std::move(inclusive);
    r.exclusive = std::move(exclusive);
    r.metrics = std::move(metrics);
    results.regions.push_back(std::move(r));
  };
  add(Region("main", "main", 0, 1, 2'400'000'000, 2'400'000'000, 2'400'000'000),
      {Counts(30'000'000, 20'000'000), Counts(20'165, 19'000),
       Counts(1'200'000, 800'000), Counts(9'000'000, 6'000'000)},
      {Counts(10'000'000, 5'000'000), Counts(5'000, 4'000),
       Counts(200'000, 100'000), Counts(3'000'000, 2'000'000)},
      {{1'333'333'333.3, true}, {30.0, true}});
  add(Region("solve", "main/solve", 1, 10, 1'800'000'000, 150'000'000,
             210'000'000),
      {Counts(15'000'000, 12'000'000), Counts(10'000, 9'000),
       Counts(900'000, 650'000, true), Counts(5'000'000, 3'000'000)},
      {Counts(5'000'000, 4'000'000), Counts(4'000, 3'000),
       Counts(300'000, 250'000, true), Counts(2'000'000, 1'000'000)},
      {{960'000'000, true}, {0, false}});
  add(Region("assemble", "main/solve/assemble", 2, 100, 600'000'000, 5'000'000,
             7'500'000),
      {Counts(10'000'000, 8'000'000), Counts(6'000, 6'000),
       Counts(600'000, 400'000, true), Counts(3'000'000, 2'000'000)},
      {Counts(10'000'000, 8'000'000), Counts(6'000, 6'000),
       Counts(600'000, 400'000, true), Counts(3'000'000, 2'000'000)},
      {{1'920'000'000, true}, {27.78, true}});
  add(Region(kWeirdName, "main/" + kWeirdName, 1, 3, 1'234, 400, 434),
      {Counts(5, 0), Counts(0, 0), Counts(7, 1), Counts(0, 0)},
      {Counts(5, 0), Counts(0, 0), Counts(7, 1), Counts(0, 0)},
      {{259'319'286'871.96, true}, {0, true}});
  add(Region("io", "io", 0, 2, 45'600, 20'000, 25'600),
      {Counts(1'000, 24), Counts(1, 0), Counts(3, 3), Counts(1'024, 0)},
      {Counts(1'000, 24), Counts(1, 0), Counts(3, 3), Counts(1'024, 0)},
      {{1'437'192.98, true}, {100, true}});
  add(Region("late", "main/late", 1, 1, 999, 999, 999),
      {Counts(kHugeCount - 1, 1), Counts(0, 0), Counts(0, 0), Counts(0, 0)},
      {Counts(kHugeCount - 1, 1), Counts(0, 0), Counts(0, 0), Counts(0, 0)},
      {{0, false}, {0, false}});
  return results;
}

// ---------------------------------------------------------------------------
// Golden files.

bool UpdatingGoldens() {
  const char* update = std::getenv("UNCORE_UPDATE_GOLDEN");
  return update != nullptr && std::string_view(update) == "1";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void ExpectMatchesGolden(const std::string& actual, std::string_view name) {
  const std::string path = fmt::format("{}/{}", UNCORE_GOLDEN_DIR, name);
  if (UpdatingGoldens()) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << actual;
    ASSERT_TRUE(out.good()) << "cannot write " << path;
    std::fprintf(stderr, "updated golden file %s\n", path.c_str());
    return;
  }
  std::ifstream probe(path);
  ASSERT_TRUE(probe.good())
      << path << " is missing: run with UNCORE_UPDATE_GOLDEN=1 to create it";
  const std::string expected = ReadFile(path);
  if (actual == expected) return;
  // Point at the first line that differs, then show the whole text.
  std::istringstream a(actual);
  std::istringstream e(expected);
  std::string line_a;
  std::string line_e;
  int line = 0;
  while (true) {
    ++line;
    const bool more_a = static_cast<bool>(std::getline(a, line_a));
    const bool more_e = static_cast<bool>(std::getline(e, line_e));
    if (!more_a && !more_e) break;
    if (line_a != line_e || more_a != more_e) break;
  }
  ADD_FAILURE() << name << " differs from the golden file at line " << line
                << "\n  expected: " << line_e << "\n  actual:   " << line_a
                << "\n(UNCORE_UPDATE_GOLDEN=1 regenerates it)\nactual text:\n"
                << actual;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

std::string TempPath(std::string_view name) {
  const ::testing::TestInfo* info =
      ::testing::UnitTest::GetInstance()->current_test_info();
  return fmt::format("{}/report_test_{}_{}_{}", ::testing::TempDir(), getpid(),
                     info->name(), name);
}

// ---------------------------------------------------------------------------
// Building blocks.

TEST(ReportHelpersTest, GroupDigits) {
  EXPECT_EQ(GroupDigits(0), "0");
  EXPECT_EQ(GroupDigits(999), "999");
  EXPECT_EQ(GroupDigits(1000), "1,000");
  EXPECT_EQ(GroupDigits(1234567), "1,234,567");
  EXPECT_EQ(GroupDigits(std::numeric_limits<uint64_t>::max()),
            "18,446,744,073,709,551,615");
}

TEST(ReportHelpersTest, FormatDurationPicksAUnit) {
  EXPECT_EQ(FormatDuration(0), "0 ns");
  EXPECT_EQ(FormatDuration(999), "999 ns");
  EXPECT_EQ(FormatDuration(1000), "1.00 us");
  EXPECT_EQ(FormatDuration(12'345), "12.3 us");
  EXPECT_EQ(FormatDuration(999'999), "1.00 ms");  // rounds up a unit
  EXPECT_EQ(FormatDuration(45'600'000), "45.6 ms");
  EXPECT_EQ(FormatDuration(1'500'000'000), "1.50 s");
  EXPECT_EQ(FormatDuration(123'400'000'000), "123 s");
  EXPECT_EQ(FormatDuration(12'345'600'000'000), "12,346 s");
}

TEST(ReportHelpersTest, FormatEventValueAppliesScaleUnitAndEstimate) {
  EXPECT_EQ(FormatEventValue(1234567, 1.0, "", false), "1,234,567");
  EXPECT_EQ(FormatEventValue(1234567, 1.0, "", true), "~1,234,567");
  EXPECT_EQ(FormatEventValue(4200, 1.0, "cycles", false), "4,200 cycles");
  // 20165 * 2^-14 J = 1.2307... J
  EXPECT_EQ(FormatEventValue(20165, 6.103515625e-05, "Joules", false),
            "1.23 Joules");
  EXPECT_EQ(FormatEventValue(20'000'000, 6.103515625e-05, "Joules", true),
            "~1,220.70 Joules");
  EXPECT_EQ(FormatEventValue(1, 6.103515625e-05, "Joules", false),
            "6.10e-05 Joules");
  EXPECT_EQ(FormatEventValue(10000, 6.103515625e-05, "Joules", false),
            "0.610 Joules");
  EXPECT_EQ(FormatEventValue(0, 6.103515625e-05, "Joules", false),
            "0.00 Joules");
}

TEST(ReportHelpersTest, FormatMetricValueUsesSiPrefixes) {
  EXPECT_EQ(FormatMetricValue(1.234e9, "bytes/s"), "1.23 Gbytes/s");
  EXPECT_EQ(FormatMetricValue(999.96, "bytes"), "1.00 kbytes");
  EXPECT_EQ(FormatMetricValue(0, "bytes"), "0 bytes");
  EXPECT_EQ(FormatMetricValue(-2.5e-6, "cycles"), "-2.50 ucycles");
  EXPECT_EQ(FormatMetricValue(12.345, "%"), "12.3 %");
  EXPECT_EQ(FormatMetricValue(0.5, "ratio"), "0.500 ratio");
  EXPECT_EQ(FormatMetricValue(1e-15, "bytes"), "0.00100 pbytes");
  EXPECT_EQ(FormatMetricValue(12'345.6, "MB"), "12,346 MB");  // has a prefix
  EXPECT_EQ(FormatMetricValue(7.2, "GT/s"), "7.20 GT/s");
  EXPECT_EQ(FormatMetricValue(4.5e6, ""), "4.50 M");
  EXPECT_EQ(FormatMetricValue(42, ""), "42.0");
  EXPECT_EQ(FormatMetricValue(std::nan(""), "bytes"), "n/a");
  EXPECT_EQ(FormatMetricValue(1e30, "bytes"), "1000000000000 Ebytes");
}

TEST(ReportHelpersTest, EscapeForTableKeepsOneLine) {
  EXPECT_EQ(EscapeForTable("plain name"), "plain name");
  EXPECT_EQ(EscapeForTable("a\nb\rc\td"), R"(a\nb\rc\td)");
  EXPECT_EQ(EscapeForTable("back\\slash"), R"(back\\slash)");
  EXPECT_EQ(EscapeForTable(std::string("nul\0bell\a", 9)),
            R"(nul\x00bell\x07)");
  EXPECT_EQ(EscapeForTable("\x7f"), R"(\x7f)");
  EXPECT_EQ(EscapeForTable("\xff\xfe"), R"(\xff\xfe)");
  EXPECT_EQ(EscapeForTable("caf\xC3\xA9"), "caf\xC3\xA9");       // valid UTF-8
  EXPECT_EQ(EscapeForTable("\xC2\x85"), R"(\xc2\x85)");          // C1 control
  EXPECT_EQ(EscapeForTable("\xC0\x80"), R"(\xc0\x80)");          // overlong NUL
  EXPECT_EQ(EscapeForTable("\xED\xA0\x80"), R"(\xed\xa0\x80)");  // surrogate
  EXPECT_EQ(EscapeForTable("\xF0\x9F\x98\x80"), "\xF0\x9F\x98\x80");
  EXPECT_EQ(DisplayWidth("caf\xC3\xA9"), 4u);
}

TEST(ReportHelpersTest, CsvFieldQuotesAndRepairs) {
  EXPECT_EQ(CsvField("plain"), "plain");
  EXPECT_EQ(CsvField(""), "");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(CsvField("cr\r"), "\"cr\r\"");
  EXPECT_EQ(CsvField("x\xffy"), "x\xEF\xBF\xBDy");
  EXPECT_EQ(CsvField("caf\xC3\xA9"), "caf\xC3\xA9");
}

TEST(ReportHelpersTest, ParseOutputChoosesFormat) {
  auto parse = [](std::string_view text) {
    absl::StatusOr<ReportDestination> d = ParseOutput(text);
    EXPECT_TRUE(d.ok()) << text << ": " << d.status();
    return d.ok() ? *d : ReportDestination{};
  };
  EXPECT_EQ(parse("-").format, ReportFormat::kTable);
  EXPECT_EQ(parse("-").path, "");
  EXPECT_EQ(parse("out/run.json").format, ReportFormat::kJson);
  EXPECT_EQ(parse("out/run.json").path, "out/run.json");
  EXPECT_EQ(parse("RUN.JSON").format, ReportFormat::kJson);
  EXPECT_EQ(parse("run.csv").format, ReportFormat::kCsv);
  EXPECT_EQ(parse("run.txt").format, ReportFormat::kTable);
  EXPECT_EQ(parse("run.txt").path, "run.txt");
  EXPECT_EQ(parse("json").format, ReportFormat::kTable);
  const absl::StatusOr<ReportDestination> empty = ParseOutput("");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
}

// ---------------------------------------------------------------------------
// JSON string escaping (sdk/common/json.cc).

// What AppendJsonString's output decodes to: valid UTF-8 as is, each other
// byte as the code point of its Latin-1 reading.
std::string ExpectedJsonRoundTrip(std::string_view bytes) {
  std::string out;
  for (size_t i = 0; i < bytes.size();) {
    uint32_t cp = 0;
    const size_t len = DecodeUtf8(bytes, i, &cp);
    if (len == 0) {
      AppendUtf8(static_cast<unsigned char>(bytes[i]), &out);
      ++i;
    } else {
      out.append(bytes.substr(i, len));
      i += len;
    }
  }
  return out;
}

void ExpectJsonStringRoundTrips(std::string_view bytes) {
  std::string json;
  common::AppendJsonString(bytes, &json);
  StrictJsonParser parser(json);
  JsonValue value;
  ASSERT_TRUE(parser.Parse(&value))
      << parser.error() << " for " << EscapeForTable(bytes) << ": " << json;
  ASSERT_EQ(value.type, JsonValue::Type::kString);
  EXPECT_EQ(value.text, ExpectedJsonRoundTrip(bytes))
      << "input " << EscapeForTable(bytes) << " json " << json;
}

TEST(JsonEscapingTest, EverySingleByteGivesValidJson) {
  for (int b = 0; b < 256; ++b) {
    ExpectJsonStringRoundTrips(std::string(1, static_cast<char>(b)));
  }
}

TEST(JsonEscapingTest, ControlAndInvalidBytesAreEscaped) {
  auto escaped = [](std::string_view bytes) {
    std::string json;
    common::AppendJsonString(bytes, &json);
    return json;
  };
  EXPECT_EQ(escaped(std::string("\0\x01\x1f\x7f", 4)),
            R"("\u0000\u0001\u001f\u007f")");
  EXPECT_EQ(escaped("\"\\\n\r\t\b\f"), R"("\"\\\n\r\t\b\f")");
  EXPECT_EQ(escaped("\xff\xfe"), R"("\u00ff\u00fe")");
  EXPECT_EQ(escaped("\xC0\x80"), R"("\u00c0\u0080")");            // overlong
  EXPECT_EQ(escaped("\xED\xA0\x80"), R"("\u00ed\u00a0\u0080")");  // surrogate
  EXPECT_EQ(escaped("\xF4\x90\x80\x80"),
            R"("\u00f4\u0090\u0080\u0080")");           // above U+10FFFF
  EXPECT_EQ(escaped("\xE2\x82"), R"("\u00e2\u0082")");  // truncated
  EXPECT_EQ(escaped("\xF0\x9F\x98\x80 caf\xC3\xA9"),
            "\"\xF0\x9F\x98\x80 caf\xC3\xA9\"");  // valid: copied
}

TEST(JsonEscapingTest, RandomBytesGiveValidJson) {
  std::mt19937 rng(12345);
  // Pieces that make both valid and broken UTF-8 likely.
  const std::vector<std::string> pieces = {"a",
                                           "\"",
                                           "\\",
                                           "\n",
                                           std::string(1, '\0'),
                                           "\x1f",
                                           "\x7f",
                                           "\xC3\xA9",
                                           "\xE2\x82\xAC",
                                           "\xF0\x9F\x98\x80",
                                           "\xC3",
                                           "\xE2\x82",
                                           "\x80",
                                           "\xBF",
                                           "\xFF",
                                           "\xC0\xAF",
                                           "\xED\xB0\x80",
                                           "\xF5\x80\x80\x80"};
  for (int round = 0; round < 2000; ++round) {
    std::string bytes;
    const int n = static_cast<int>(rng() % 12);
    for (int k = 0; k < n; ++k) {
      if (rng() % 3 == 0) {
        bytes.push_back(static_cast<char>(rng() % 256));
      } else {
        bytes += pieces[rng() % pieces.size()];
      }
    }
    ExpectJsonStringRoundTrips(bytes);
  }
}

TEST(JsonEscapingTest, StrictParserRejectsBadJson) {
  // The checks above are only as good as this parser.
  for (std::string_view bad :
       {"", "{", "[1,]", "{\"a\":1,}", "01", "1.", "-", "NaN", "\"\x01\"",
        "\"\\x41\"", "\"\\ud800\"", "\"\xff\"", "{\"a\":1,\"a\":2}", "[1] 2",
        "tru", "\"abc"}) {
    StrictJsonParser parser(bad);
    JsonValue value;
    EXPECT_FALSE(parser.Parse(&value)) << bad;
  }
  StrictJsonParser parser(R"({"a": [1, -0.5e+3, true, null, "\ud83d\ude00"]})");
  JsonValue value;
  ASSERT_TRUE(parser.Parse(&value)) << parser.error();
  EXPECT_EQ(value["a"][4].text, "\xF0\x9F\x98\x80");
  EXPECT_TRUE(value["a"][2].boolean);
}

// ---------------------------------------------------------------------------
// The table.

TEST(TableTest, MatchesGolden) {
  ExpectMatchesGolden(FormatTable(MakeResults(false)), "table.txt");
}

TEST(TableTest, SimulatedMatchesGolden) {
  ExpectMatchesGolden(FormatTable(MakeResults(true)), "table_simulated.txt");
}

TEST(TableTest, SimulatedBannerIffSimulated) {
  const std::string banner =
      "SIMULATED — every count below is made up by the simulator, not "
      "measured";
  EXPECT_THAT(FormatTable(MakeResults(true)), HasSubstr(banner));
  EXPECT_THAT(FormatTable(MakeResults(false)), Not(HasSubstr("SIMULATED")));
  Results vertical = MakeResults(true);
  vertical.events[0].canonical = std::string(200, 'x');
  EXPECT_THAT(FormatTable(vertical), HasSubstr(banner));
}

TEST(TableTest, NamesNeverBreakLines) {
  const Results results = MakeResults(false);
  const std::string table = FormatTable(results);
  EXPECT_TRUE(IsValidUtf8(table));
  EXPECT_THAT(table, HasSubstr(kWeirdNameInTable));
  EXPECT_THAT(table, Not(HasSubstr("comma\nnewline")));
  const std::vector<std::string> lines = Lines(table);
  // The weird region's row (main table) starts with its indented name.
  int rows = 0;
  for (const std::string& line : lines) {
    if (line.starts_with("  " + kWeirdNameInTable + "  ")) ++rows;
  }
  EXPECT_EQ(rows, 2);  // the main table and the per-socket table
}

TEST(TableTest, ShowsUnitsEstimatesMetricsAndHidesMetricOnlyEvents) {
  const std::string table = FormatTable(MakeResults(false));
  EXPECT_THAT(table, HasSubstr("imc/CAS_COUNT.RD"));
  EXPECT_THAT(table, HasSubstr("cbo/LLC_VICTIMS.M_STATE"));
  EXPECT_THAT(table, Not(HasSubstr("imc/CAS_COUNT.WR")));  // from_metric
  EXPECT_THAT(table, HasSubstr("1 event needed only by metrics not shown"));
  EXPECT_THAT(table, HasSubstr("2.39 Joules"));  // (20165 + 19000) * 2^-14
  EXPECT_THAT(table, HasSubstr("~1,550,000"));   // solve, estimated
  EXPECT_THAT(table, HasSubstr("~ estimated"));
  EXPECT_THAT(table, HasSubstr("1.33 Gbytes/s"));
  EXPECT_THAT(table, HasSubstr("n/a"));
  EXPECT_THAT(table, HasSubstr("1,152,921,504,606,846,977"));  // exact
  EXPECT_THAT(table, HasSubstr("errors (1):\n  - region \"io\" closed"));
  EXPECT_THAT(table, HasSubstr("warnings (1):\n  - multiplexing"));
}

TEST(TableTest, RegionsInTreeOrder) {
  const std::vector<std::string> lines = Lines(FormatTable(MakeResults(false)));
  std::vector<std::string> names;
  for (const std::string& line : lines) {
    for (std::string_view name :
         {"main ", "  solve ", "    assemble ", "  late ", "io "}) {
      if (line.starts_with(name)) names.emplace_back(name);
    }
    if (line.starts_with("per socket")) break;
  }
  // "late" was entered after "io" but belongs under "main".
  EXPECT_THAT(names, ::testing::ElementsAre("main ", "  solve ",
                                            "    assemble ", "  late ", "io "));
}

TEST(TableTest, OrphanRegionShowsItsPath) {
  Results results = MakeResults(false);
  results.regions.erase(results.regions.begin() + 1);  // drop main/solve
  const std::string table = FormatTable(results);
  EXPECT_THAT(table, HasSubstr("\n    main/solve/assemble "));
}

TEST(TableTest, TooWideSwitchesToVerticalLayout) {
  Results results = MakeResults(false);
  results.events[2].canonical =
      "cbo/LLC_LOOKUP.DATA_READ:filter_state=0x1f,filter_tid=0x3f,"
      "filter_nid=0x1,filter_opc=0x182";
  const std::string table = FormatTable(results);
  ExpectMatchesGolden(table, "table_vertical.txt");
  EXPECT_THAT(table, HasSubstr("calls 100, wall 600 ms (min 5.00 ms, max "
                               "7.50 ms)"));
  EXPECT_THAT(table, HasSubstr("(socket 0: 15,000,000; socket 1: 12,000,000)"));
  for (const std::string& line : Lines(FormatTable(MakeResults(false)))) {
    EXPECT_LE(DisplayWidth(line), static_cast<size_t>(kMaxTableWidth)) << line;
  }
}

TEST(TableTest, SingleSocketHasNoBreakdown) {
  Results results = MakeResults(false);
  results.run.sockets = {0};
  for (RegionResult& region : results.regions) {
    for (EventCounts& counts : region.inclusive) {
      counts.per_socket.resize(1);
    }
  }
  EXPECT_THAT(FormatTable(results), Not(HasSubstr("per socket")));
  EXPECT_THAT(FormatTable(MakeResults(false)), HasSubstr("per socket"));
}

TEST(TableTest, EmptyAndInconsistentResults) {
  Results empty;
  const std::string table = FormatTable(empty);
  EXPECT_THAT(table, HasSubstr("(no regions were recorded)"));
  EXPECT_THAT(table, HasSubstr("backend ?"));
  Results short_vectors = MakeResults(false);
  short_vectors.regions[0].inclusive.clear();
  short_vectors.regions[0].metrics.clear();
  const std::vector<std::string> lines = Lines(FormatTable(short_vectors));
  bool found = false;
  for (const std::string& line : lines) {
    if (line.starts_with("main ")) {
      found = true;
      EXPECT_THAT(line,
                  ::testing::MatchesRegex(".* 2.40 s +- +- +- +n/a +n/a"));
      break;
    }
  }
  EXPECT_TRUE(found);
}

// ---------------------------------------------------------------------------
// JSON.

TEST(JsonReportTest, MatchesGolden) {
  ExpectMatchesGolden(FormatJson(MakeResults(true)), "report.json");
}

TEST(JsonReportTest, ParsesBackWithEveryField) {
  const Results results = MakeResults(true);
  const JsonValue root = MustParseJson(FormatJson(results));
  ASSERT_EQ(root.type, JsonValue::Type::kObject);
  EXPECT_THAT(root.keys(),
              ::testing::ElementsAre(
                  "schema_version", "backend", "simulated", "host", "cpu",
                  "sockets", "start_unix_ns", "duration_ns", "frozen_ns",
                  "errors", "warnings", "events", "metrics", "regions"));
  EXPECT_EQ(root["schema_version"].text,
            fmt::format("{}", Results::kSchemaVersion));
  EXPECT_EQ(root["backend"].text, "sim");
  EXPECT_TRUE(root["simulated"].boolean);
  EXPECT_EQ(root["host"].text, "node17");
  EXPECT_EQ(root["cpu"].text, "GenuineIntel family 6 model 0x3e");
  ASSERT_EQ(root["sockets"].items.size(), 2u);
  EXPECT_EQ(root["sockets"][1].text, "1");
  EXPECT_EQ(root["start_unix_ns"].text, "1700000000000000000");
  EXPECT_EQ(root["duration_ns"].text, "2500000000");
  EXPECT_EQ(root["frozen_ns"].text, "12345");
  ASSERT_EQ(root["errors"].items.size(), 1u);
  EXPECT_EQ(root["errors"][0].text, results.run.errors[0]);
  EXPECT_EQ(root["warnings"][0].text, results.run.warnings[0]);

  const JsonValue& events = root["events"];
  ASSERT_EQ(events.items.size(), 4u);
  EXPECT_EQ(events[1]["spec"].text, "power/energy-pkg");
  EXPECT_EQ(events[1]["canonical"].text, "power/energy-pkg");
  EXPECT_EQ(events[1]["encoding"].text, "config=0x2");
  EXPECT_EQ(events[1]["unit"].text, "Joules");
  EXPECT_EQ(events[1]["scale"].number(), 6.103515625e-05);
  EXPECT_FALSE(events[1]["from_metric"].boolean);
  EXPECT_TRUE(events[3]["from_metric"].boolean);
  EXPECT_EQ(events[0]["spec"].text, "imc/cas_count.rd");

  const JsonValue& metrics = root["metrics"];
  ASSERT_EQ(metrics.items.size(), 2u);
  EXPECT_EQ(metrics[0]["name"].text, "MEM_BW_READS");
  EXPECT_EQ(metrics[0]["expression"].text,
            "{imc/CAS_COUNT.RD} * 64 / ELAPSED_SECONDS");
  EXPECT_EQ(metrics[0]["unit"].text, "bytes/s");

  const JsonValue& regions = root["regions"];
  ASSERT_EQ(regions.items.size(), results.regions.size());
  const JsonValue& solve = regions[1];
  EXPECT_THAT(solve.keys(), ::testing::ElementsAre(
                                "name", "path", "depth", "calls", "wall_ns",
                                "min_ns", "max_ns", "events", "metrics"));
  EXPECT_EQ(solve["name"].text, "solve");
  EXPECT_EQ(solve["path"].text, "main/solve");
  EXPECT_EQ(solve["depth"].text, "1");
  EXPECT_EQ(solve["calls"].text, "10");
  EXPECT_EQ(solve["wall_ns"].text, "1800000000");
  EXPECT_EQ(solve["min_ns"].text, "150000000");
  EXPECT_EQ(solve["max_ns"].text, "210000000");
  EXPECT_THAT(
      solve["events"].keys(),
      ::testing::ElementsAre("imc/CAS_COUNT.RD", "power/energy-pkg",
                             "cbo/LLC_VICTIMS.M_STATE", "imc/CAS_COUNT.WR"));
  const JsonValue& victims = solve["events"]["cbo/LLC_VICTIMS.M_STATE"];
  EXPECT_THAT(victims.keys(),
              ::testing::ElementsAre("total", "per_socket", "per_instance",
                                     "exclusive_total", "exclusive_per_socket",
                                     "estimated"));
  EXPECT_EQ(victims["total"].text, "1550000");
  EXPECT_EQ(victims["per_socket"][0].text, "900000");
  EXPECT_EQ(victims["per_socket"][1].text, "650000");
  ASSERT_EQ(victims["per_instance"].items.size(), 3u);
  EXPECT_EQ(victims["per_instance"][1]["socket"].text, "0");
  EXPECT_EQ(victims["per_instance"][1]["instance"].text, "box1");
  EXPECT_EQ(victims["per_instance"][1]["value"].text, "225000");
  EXPECT_EQ(victims["per_instance"][2]["socket"].text, "1");
  EXPECT_EQ(victims["exclusive_total"].text, "550000");
  EXPECT_EQ(victims["exclusive_per_socket"][1].text, "250000");
  EXPECT_TRUE(victims["estimated"].boolean);
  EXPECT_FALSE(solve["events"]["imc/CAS_COUNT.RD"]["estimated"].boolean);
  EXPECT_EQ(solve["metrics"]["MEM_BW_READS"].number(), 960'000'000);
  EXPECT_TRUE(solve["metrics"]["PCT_WRITES"].is_null());
  EXPECT_EQ(regions[0]["metrics"]["MEM_BW_READS"].number(), 1'333'333'333.3);

  // Counts beyond 2^53 stay exact.
  EXPECT_EQ(regions[5]["events"]["imc/CAS_COUNT.RD"]["total"].text,
            fmt::format("{}", kHugeCount));
}

TEST(JsonReportTest, WeirdNamesRoundTrip) {
  const JsonValue root = MustParseJson(FormatJson(MakeResults(false)));
  const JsonValue& weird = root["regions"][3];
  EXPECT_EQ(weird["name"].text, kWeirdNameFromJson);
  EXPECT_EQ(weird["path"].text, "main/" + kWeirdNameFromJson);
  EXPECT_EQ(weird["depth"].text, "1");
}

TEST(JsonReportTest, DuplicateKeysAreMadeUnique) {
  Results results = MakeResults(false);
  results.events[2].canonical = "imc/CAS_COUNT.RD";
  results.events[3].canonical = "imc/CAS_COUNT.RD#2";
  results.metrics[1].name = "MEM_BW_READS";
  const JsonValue root = MustParseJson(FormatJson(results));
  EXPECT_THAT(
      root["regions"][0]["events"].keys(),
      ::testing::ElementsAre("imc/CAS_COUNT.RD", "power/energy-pkg",
                             "imc/CAS_COUNT.RD#3", "imc/CAS_COUNT.RD#2"));
  EXPECT_THAT(root["regions"][0]["metrics"].keys(),
              ::testing::ElementsAre("MEM_BW_READS", "MEM_BW_READS#2"));
}

TEST(JsonReportTest, EmptyAndInconsistentResultsStayValid) {
  const JsonValue empty = MustParseJson(FormatJson(Results{}));
  EXPECT_TRUE(empty["regions"].items.empty());
  EXPECT_FALSE(empty["simulated"].boolean);
  Results results = MakeResults(false);
  results.regions[0].inclusive.resize(1);
  results.regions[0].exclusive.clear();
  results.regions[0].metrics.clear();
  results.regions[1].metrics[0].value = std::numeric_limits<double>::infinity();
  const JsonValue root = MustParseJson(FormatJson(results));
  const JsonValue& main = root["regions"][0];
  EXPECT_THAT(main["events"].keys(),
              ::testing::ElementsAre("imc/CAS_COUNT.RD"));
  EXPECT_TRUE(main["events"]["imc/CAS_COUNT.RD"]["exclusive_total"].is_null());
  EXPECT_TRUE(main["metrics"]["MEM_BW_READS"].is_null());
  EXPECT_TRUE(root["regions"][1]["metrics"]["MEM_BW_READS"].is_null());
}

TEST(JsonReportTest, PythonAcceptsIt) {
  if (std::system("python3 -c pass >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "python3 is not available";
  }
  const std::string path = TempPath("python.json");
  ASSERT_TRUE(WriteReport(MakeResults(true), path).ok());
  const std::string command = fmt::format(
      "python3 -c 'import json, sys\n"
      "def bad(c): sys.exit(\"non-standard constant \" + c)\n"
      "with open(sys.argv[1], encoding=\"utf-8\", errors=\"strict\") as f:\n"
      "  d = json.load(f, parse_constant=bad)\n"
      "assert d[\"regions\"][3][\"name\"] == \"a \\\"quoted\\\", "
      "comma\\nnewline \\u00ff\\u00fe\", d[\"regions\"][3][\"name\"]\n' {}",
      path);
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  std::remove(path.c_str());
}

// ---------------------------------------------------------------------------
// CSV.

TEST(CsvReportTest, MatchesGolden) {
  ExpectMatchesGolden(FormatCsv(MakeResults(false)), "report.csv");
}

TEST(CsvReportTest, ParsesBackStrictly) {
  const Results results = MakeResults(false);
  const std::string csv = FormatCsv(results);
  EXPECT_TRUE(IsValidUtf8(csv));
  std::vector<std::vector<std::string>> records;
  std::string error;
  ASSERT_TRUE(ParseCsv(csv, &records, &error)) << error;
  ASSERT_FALSE(records.empty());
  EXPECT_THAT(records[0], ::testing::ElementsAre(
                              "region", "path", "depth", "calls", "wall_ns",
                              "event", "socket", "inclusive", "exclusive",
                              "estimated", "unit", "scale"));
  // Per region: 4 events x (2 sockets + "all") + 2 metrics.
  EXPECT_EQ(records.size(), 1 + results.regions.size() * (4 * 3 + 2));
  for (const auto& record : records) ASSERT_EQ(record.size(), 12u);

  std::map<std::string, std::vector<std::string>> by_key;
  for (const auto& r : records) {
    by_key[r[1] + "|" + r[5] + "|" + r[6]] = r;
  }
  const auto& solve_victims_1 = by_key["main/solve|cbo/LLC_VICTIMS.M_STATE|1"];
  EXPECT_THAT(solve_victims_1,
              ::testing::ElementsAre("solve", "main/solve", "1", "10",
                                     "1800000000", "cbo/LLC_VICTIMS.M_STATE",
                                     "1", "650000", "250000", "1", "", "1"));
  const auto& main_energy = by_key["main|power/energy-pkg|all"];
  ASSERT_EQ(main_energy.size(), 12u);
  EXPECT_EQ(main_energy[7], "39165");
  EXPECT_EQ(main_energy[8], "9000");
  EXPECT_EQ(main_energy[10], "Joules");
  EXPECT_EQ(std::strtod(main_energy[11].c_str(), nullptr), 6.103515625e-05);
  const auto& metric = by_key["main/solve|metric/MEM_BW_READS|all"];
  EXPECT_THAT(metric,
              ::testing::ElementsAre("solve", "main/solve", "1", "10",
                                     "1800000000", "metric/MEM_BW_READS", "all",
                                     "960000000", "", "", "bytes/s", "1"));
  EXPECT_EQ(by_key["main/solve|metric/PCT_WRITES|all"][7], "");  // invalid
  EXPECT_EQ(by_key["main/late|imc/CAS_COUNT.RD|all"][7],
            fmt::format("{}", kHugeCount));

  // The weird name: quoted, quotes doubled, newline kept, bad bytes U+FFFD.
  const auto& weird = by_key["main/" + kWeirdNameInCsv + "|imc/CAS_COUNT.RD|0"];
  ASSERT_EQ(weird.size(), 12u);
  EXPECT_EQ(weird[0], kWeirdNameInCsv);
  EXPECT_THAT(csv, HasSubstr("\"a \"\"quoted\"\", comma\nnewline "
                             "\xEF\xBF\xBD\xEF\xBF\xBD\""));
}

TEST(CsvReportTest, StrictParserRejectsBadCsv) {
  std::vector<std::vector<std::string>> records;
  std::string error;
  for (std::string_view bad : {"a,b\n", "a\"b\r\n", "\"open\r\n", "a,b"}) {
    records.clear();
    EXPECT_FALSE(ParseCsv(bad, &records, &error)) << bad;
  }
}

// ---------------------------------------------------------------------------
// WriteReport.

TEST(WriteReportTest, WritesEachFormatByName) {
  const Results results = MakeResults(false);
  const std::string json = TempPath("out.json");
  const std::string upper_json = TempPath("OUT.JSON");
  const std::string csv = TempPath("out.csv");
  const std::string txt = TempPath("out.txt");
  ASSERT_TRUE(WriteReport(results, json).ok());
  ASSERT_TRUE(WriteReport(results, upper_json).ok());
  ASSERT_TRUE(WriteReport(results, csv).ok());
  ASSERT_TRUE(WriteReport(results, txt).ok());
  EXPECT_EQ(ReadFile(json), FormatJson(results));
  EXPECT_EQ(ReadFile(upper_json), FormatJson(results));
  EXPECT_EQ(ReadFile(csv), FormatCsv(results));
  EXPECT_EQ(ReadFile(txt), FormatTable(results));
  // Writing again replaces the file.
  ASSERT_TRUE(WriteReport(Results{}, json).ok());
  EXPECT_EQ(ReadFile(json), FormatJson(Results{}));
  for (const std::string& path : {json, upper_json, csv, txt}) {
    std::remove(path.c_str());
  }
}

TEST(WriteReportTest, DashWritesTheTableToTheStream) {
  const Results results = MakeResults(true);
  std::FILE* stream = std::tmpfile();
  ASSERT_NE(stream, nullptr);
  ASSERT_TRUE(WriteReport(results, "-", stream).ok());
  std::rewind(stream);
  std::string text;
  char buffer[4096];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof(buffer), stream)) > 0) {
    text.append(buffer, n);
  }
  std::fclose(stream);
  EXPECT_EQ(text, FormatTable(results));
  EXPECT_THAT(text, HasSubstr("SIMULATED"));
  EXPECT_FALSE(WriteReport(results, "-", nullptr).ok());
}

TEST(WriteReportTest, UnwritablePathNamesPathAndReason) {
  const std::string path = TempPath("no/such/dir/run.json");
  const absl::Status status = WriteReport(MakeResults(false), path);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(common::StatusMessage(status), HasSubstr(path));
  EXPECT_THAT(common::StatusMessage(status), HasSubstr("No such file or directory"));

  const absl::Status dir =
      WriteReport(MakeResults(false), ::testing::TempDir() + "/.");
  ASSERT_FALSE(dir.ok());
  EXPECT_THAT(common::StatusMessage(dir), HasSubstr("Is a directory"));

  const absl::Status empty = WriteReport(MakeResults(false), "");
  EXPECT_EQ(empty.code(), absl::StatusCode::kInvalidArgument);
}

TEST(WriteReportTest, FullDeviceIsAnError) {
  std::ifstream probe("/dev/full");
  if (!probe.good()) GTEST_SKIP() << "no /dev/full";
  // /dev/full takes the open and fails the write (ENOSPC): on fwrite or,
  // buffered, on fclose; a table on a stream fails on fflush.
  const absl::Status status = WriteReport(MakeResults(false), "/dev/full");
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(common::StatusMessage(status), HasSubstr("'/dev/full'"));
  EXPECT_THAT(common::StatusMessage(status), HasSubstr("No space left on device"));
  std::FILE* full = std::fopen("/dev/full", "w");
  ASSERT_NE(full, nullptr);
  EXPECT_FALSE(WriteReport(MakeResults(false), "-", full).ok());
  std::fclose(full);
}

}  // namespace
}  // namespace uncore::report
