// Tests of sdk/common/json.h, the JSON writer the JSON report is made with:
// string escaping (AppendJsonString) and numbers (JsonWriter).
//
// nlohmann-json (json_oracle.h) is the independent reader.  It decodes what
// it reads, so it cannot see which escape the writer chose for a character
// (\u00ff for the invalid byte 0xFF versus raw U+00FF, \b versus \u0008, raw
// DEL versus \u007f), that a non-finite double became null, or the sign of
// -0 (it reads "-0" as the integer 0).  Those byte choices are documented in
// json.h and are checked here byte for byte, not through the parser.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "sdk/common/json.h"
#include "sdk/report/report.h"
#include "tests/report/json_oracle.h"
#include "tests/report/report_test_util.h"

namespace uncore::report {
namespace {

// ---------------------------------------------------------------------------
// String escaping.

std::string Escaped(std::string_view bytes) {
  std::string json;
  common::AppendJsonString(bytes, &json);
  return json;
}

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
  const std::string json = Escaped(bytes);
  Json value;
  std::string error;
  ASSERT_TRUE(ParseStrictJson(json, &value, &error))
      << error << " for " << EscapeForTable(bytes) << ": " << json;
  ASSERT_TRUE(value.is_string()) << json;
  EXPECT_EQ(value.get<std::string>(), ExpectedJsonRoundTrip(bytes))
      << "input " << EscapeForTable(bytes) << " json " << json;
  // Byte level (the parser accepts raw DEL): DEL is always escaped.
  EXPECT_EQ(json.find('\x7f'), std::string::npos) << json;
}

// Random strings, with pieces that make both valid and broken UTF-8 likely.
std::string RandomBytes(std::mt19937& rng) {
  static const std::vector<std::string> kPieces = {"a",
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
  std::string bytes;
  const int n = static_cast<int>(rng() % 12);
  for (int k = 0; k < n; ++k) {
    if (rng() % 3 == 0) {
      bytes.push_back(static_cast<char>(rng() % 256));
    } else {
      bytes += kPieces[rng() % kPieces.size()];
    }
  }
  return bytes;
}

TEST(JsonEscapingTest, EverySingleByteGivesValidJson) {
  for (int b = 0; b < 256; ++b) {
    ExpectJsonStringRoundTrips(std::string(1, static_cast<char>(b)));
  }
}

TEST(JsonEscapingTest, EverySingleByteIsEscapedAsDocumented) {
  // Byte level: the parser reads "\b" and "\u0008", or "\u00ff" and raw
  // U+00FF, as the same string.  json.h says which one the writer picks.
  for (int b = 0; b < 256; ++b) {
    const std::string byte(1, static_cast<char>(b));
    std::string expected;
    switch (b) {
      case '"':
        expected = R"(\")";
        break;
      case '\\':
        expected = R"(\\)";
        break;
      case '\b':
        expected = R"(\b)";
        break;
      case '\f':
        expected = R"(\f)";
        break;
      case '\n':
        expected = R"(\n)";
        break;
      case '\r':
        expected = R"(\r)";
        break;
      case '\t':
        expected = R"(\t)";
        break;
      default:
        // Other controls, DEL, and bytes >= 0x80 (never valid UTF-8 alone,
        // so read as Latin-1): \u00xx with lower-case hex.
        expected = (b < 0x20 || b >= 0x7F) ? fmt::format("\\u{:04x}", b) : byte;
    }
    EXPECT_EQ(Escaped(byte), "\"" + expected + "\"") << "byte " << b;
  }
}

TEST(JsonEscapingTest, ControlAndInvalidBytesAreEscaped) {
  // Byte level, as above.
  EXPECT_EQ(Escaped(std::string("\0\x01\x1f\x7f", 4)),
            R"("\u0000\u0001\u001f\u007f")");
  EXPECT_EQ(Escaped("\"\\\n\r\t\b\f"), R"("\"\\\n\r\t\b\f")");
  EXPECT_EQ(Escaped("\xff\xfe"), R"("\u00ff\u00fe")");
  EXPECT_EQ(Escaped("\xC0\x80"), R"("\u00c0\u0080")");            // overlong
  EXPECT_EQ(Escaped("\xED\xA0\x80"), R"("\u00ed\u00a0\u0080")");  // surrogate
  EXPECT_EQ(Escaped("\xF4\x90\x80\x80"),
            R"("\u00f4\u0090\u0080\u0080")");           // above U+10FFFF
  EXPECT_EQ(Escaped("\xE2\x82"), R"("\u00e2\u0082")");  // truncated
  EXPECT_EQ(Escaped("\xF0\x9F\x98\x80 caf\xC3\xA9"),
            "\"\xF0\x9F\x98\x80 caf\xC3\xA9\"");  // valid: copied
  // A valid sequence after an invalid byte is copied, not swallowed.
  EXPECT_EQ(Escaped("\xE2\xC3\xA9"), "\"\\u00e2\xC3\xA9\"");
}

TEST(JsonEscapingTest, RandomBytesGiveValidJson) {
  std::mt19937 rng(12345);
  for (int round = 0; round < 2000; ++round) {
    ExpectJsonStringRoundTrips(RandomBytes(rng));
  }
}

TEST(JsonEscapingTest, Utf8DecoderAgreesWithNlohmann) {
  // The expectations above come from the tests' own UTF-8 decoder
  // (report_test_util.h); nlohmann's serializer checks UTF-8 on its own
  // (type_error 316 on invalid input).  They must agree.
  const auto nlohmann_accepts = [](const std::string& bytes) {
    try {
      (void)Json(bytes).dump();
      return true;
    } catch (const Json::type_error&) {
      return false;
    }
  };
  std::mt19937 rng(54321);
  int valid = 0;
  for (int round = 0; round < 4000; ++round) {
    const std::string bytes = RandomBytes(rng);
    const bool ours = IsValidUtf8(bytes);
    EXPECT_EQ(ours, nlohmann_accepts(bytes)) << EscapeForTable(bytes);
    valid += ours ? 1 : 0;
  }
  EXPECT_GT(valid, 100);  // both kinds were tried
  EXPECT_LT(valid, 3900);
  for (std::string_view bad :
       {"\xC0\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xE2\x82", "\x80"}) {
    EXPECT_FALSE(IsValidUtf8(bad));
    EXPECT_FALSE(nlohmann_accepts(std::string(bad)));
  }
}

TEST(JsonEscapingTest, StrictParserRejectsBadJson) {
  // The checks above are only as good as this parser (json_oracle.h).
  for (std::string_view bad : {"",
                               "{",
                               "[1,]",
                               "{\"a\":1,}",
                               "01",
                               "1.",
                               "-",
                               "NaN",
                               "Infinity",
                               "-Infinity",
                               "\"\x01\"",
                               "\"\\x41\"",
                               "\"\\ud800\"",
                               "\"\\udc00\"",
                               "\"\xff\"",
                               "{\"a\":1,\"a\":2}",
                               "{\"x\":{\"a\":1,\"a\":2}}",
                               "[1] 2",
                               "tru",
                               "\"abc",
                               "[1] // comment",
                               "\xEF\xBB\xBF{}"}) {
    Json value;
    std::string error;
    EXPECT_FALSE(ParseStrictJson(bad, &value, &error)) << bad;
  }
  const Json value =
      MustParseJson(R"({"a": [1, -0.5e+3, true, null, "\ud83d\ude00"]})");
  EXPECT_EQ(JsonString(value.at("a").at(4)), "\xF0\x9F\x98\x80");
  EXPECT_TRUE(JsonBool(value.at("a").at(2)));
  EXPECT_EQ(JsonNumber(value.at("a").at(1)), -500.0);
  EXPECT_TRUE(value.at("a").at(3).is_null());
  // The same key in two objects is no duplicate.
  const Json two = MustParseJson(R"([{"a": 1}, {"a": 2, "b": {"a": 3}}])");
  EXPECT_EQ(JsonUint(two.at(1).at("b").at("a")), 3u);
}

// ---------------------------------------------------------------------------
// JsonWriter.

TEST(JsonWriterTest, CompactLayout) {
  // Byte level: the parser ignores whitespace.
  common::JsonWriter w;
  w.BeginObject();
  w.Key("box");
  w.String("imc");
  w.Key("code");
  w.Uint(4);
  w.Key("list");
  w.BeginArray();
  w.Int(-1);
  w.Bool(true);
  w.Null();
  w.BeginObject();
  w.EndObject();
  w.EndArray();
  w.EndObject();
  const std::string text = w.Take();
  EXPECT_EQ(text, R"({"box":"imc","code":4,"list":[-1,true,null,{}]})");
  const Json value = MustParseJson(text);
  EXPECT_EQ(JsonKeys(value), (std::vector<std::string>{"box", "code", "list"}));
}

TEST(JsonWriterTest, NonFiniteNumbersAreNull) {
  // Byte level: the parser rejects NaN and Infinity (see
  // StrictParserRejectsBadJson) but cannot tell a null written for NaN from
  // any other null.
  common::JsonWriter w;
  w.BeginArray();
  w.Double(std::numeric_limits<double>::quiet_NaN());
  w.Double(std::numeric_limits<double>::infinity());
  w.Double(-std::numeric_limits<double>::infinity());
  w.EndArray();
  const std::string text = w.Take();
  EXPECT_EQ(text, "[null,null,null]");
  EXPECT_EQ(MustParseJson(text), Json::parse("[null,null,null]"));
}

std::string DoubleText(double value) {
  common::JsonWriter w;
  w.Double(value);
  return w.Take();
}

TEST(JsonWriterTest, DoublesAreShortestAndReadBackExactly) {
  // Byte level: the shortest text, and the sign of zero (nlohmann reads
  // "-0" as the integer 0).
  EXPECT_EQ(DoubleText(0.1), "0.1");
  EXPECT_EQ(DoubleText(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(DoubleText(6.103515625e-05), "6.103515625e-05");
  EXPECT_EQ(DoubleText(2.5e9), "2500000000");
  EXPECT_EQ(DoubleText(0.0), "0");
  EXPECT_EQ(DoubleText(-0.0), "-0");
  // Read back by nlohmann (strtod): bit for bit the same double.
  std::mt19937_64 rng(777);
  for (int round = 0; round < 5000; ++round) {
    const uint64_t bits = rng();
    double value;
    std::memcpy(&value, &bits, sizeof value);
    if (!std::isfinite(value) || value == 0) continue;
    const std::string text = DoubleText(value);
    const Json parsed = MustParseJson(text);
    ASSERT_TRUE(parsed.is_number()) << text;
    const double back = parsed.get<double>();
    EXPECT_EQ(std::memcmp(&back, &value, sizeof value), 0) << text;
  }
}

TEST(JsonWriterTest, IntegersAreExact) {
  common::JsonWriter w;
  w.BeginArray();
  w.Int(std::numeric_limits<int64_t>::min());
  w.Uint(std::numeric_limits<uint64_t>::max());
  w.Uint(kHugeCount);
  w.EndArray();
  const std::string text = w.Take();
  EXPECT_EQ(text,
            "[-9223372036854775808,18446744073709551615,"
            "1152921504606846977]");
  const Json value = MustParseJson(text);
  EXPECT_EQ(value.at(0).get<int64_t>(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(JsonUint(value.at(1)), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(JsonUint(value.at(2)), kHugeCount);
}

}  // namespace
}  // namespace uncore::report
