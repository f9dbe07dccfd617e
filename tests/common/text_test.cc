// Message quoting and display widths (sdk/common/text.h).
#include "sdk/common/text.h"

#include <cstdint>
#include <string>
#include <utility>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace uncore::common {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(QuoteForMessageTest, EscapesWhatATerminalWouldObey) {
  EXPECT_EQ(QuoteForMessage("plain name"), "plain name");
  EXPECT_EQ(QuoteForMessage("\x1b[31mred\x07"), "\\x1b[31mred\\x07");
  EXPECT_EQ(QuoteForMessage("a\\b"), "a\\\\b");
  EXPECT_EQ(QuoteForMessage("line\nbreak\ttab\x7f"),
            "line\\x0abreak\\x09tab\\x7f");
  // C1 controls (a CSI in two bytes) and bytes that are not UTF-8.
  EXPECT_EQ(QuoteForMessage("\xc2\x9b"
                            "31m"),
            "\\xc2\\x9b31m");
  EXPECT_EQ(QuoteForMessage("\xff\xfe"), "\\xff\\xfe");
  // UTF-8 text is kept.
  EXPECT_EQ(QuoteForMessage("caf\xc3\xa9 \xe4\xb8\xad"),
            "caf\xc3\xa9 \xe4\xb8\xad");
}

TEST(QuoteForMessageTest, CutsLongTextAtACharacter) {
  const std::string big(100000, 'x');
  const std::string quoted = QuoteForMessage(big);
  EXPECT_EQ(quoted,
            std::string(200, 'x') + "... (100000 bytes, 99800 left out)");
  EXPECT_EQ(QuoteForMessage(big, 10),
            "xxxxxxxxxx... (100000 bytes, 99990 left out)");
  // A 3-byte character across the limit is not split.
  const std::string chinese = std::string(9, 'a') + "\xe4\xb8\xad" + "zz";
  EXPECT_EQ(QuoteForMessage(chinese, 10),
            std::string(9, 'a') + "... (14 bytes, 5 left out)");
}

TEST(PrintableMessageTest, KeepsLineBreaksEscapesTheRestAndCuts) {
  EXPECT_EQ(PrintableMessage("one \x1b[2J\n  two"), "one \\x1b[2J\n  two");
  // Escaped already: left as it is.
  EXPECT_EQ(PrintableMessage("spec \"\\x1b[31m\""), "spec \"\\x1b[31m\"");
  const std::string message = PrintableMessage(std::string(10000, 'm'));
  EXPECT_EQ(message, std::string(4096, 'm') + "... (5904 bytes left out)");
}

// Issue 36: "every 3th call".
TEST(OrdinalTest, EnglishSuffixes) {
  const std::pair<uint64_t, const char*> cases[] = {
      {0, "0th"},       {1, "1st"},
      {2, "2nd"},       {3, "3rd"},
      {4, "4th"},       {10, "10th"},
      {11, "11th"},     {12, "12th"},
      {13, "13th"},     {14, "14th"},
      {21, "21st"},     {22, "22nd"},
      {23, "23rd"},     {24, "24th"},
      {100, "100th"},   {101, "101st"},
      {102, "102nd"},   {103, "103rd"},
      {111, "111th"},   {112, "112th"},
      {113, "113th"},   {1001, "1001st"},
      {1011, "1011th"}, {18446744073709551615u, "18446744073709551615th"}};
  for (const auto& [n, text] : cases) EXPECT_EQ(Ordinal(n), text) << n;
}

TEST(ExcerptForMessageTest, PointsAtTheColumnInALongText) {
  size_t caret = 0;
  EXPECT_EQ(ExcerptForMessage("imc/CAS_COUNTX.RD", 4, 100, &caret),
            "imc/CAS_COUNTX.RD");
  EXPECT_EQ(caret, 4u);
  const std::string big =
      std::string(50000, 'a') + "BAD" + std::string(50000, 'b');
  const std::string excerpt = ExcerptForMessage(big, 50000, 100, &caret);
  EXPECT_LT(excerpt.size(), 120u);
  EXPECT_EQ(excerpt.substr(caret, 3), "BAD");
  EXPECT_EQ(excerpt.substr(0, 3), "...");
  // Escapes before the column move the caret by their own width.
  const std::string escaped = ExcerptForMessage("\x1bX", 1, 100, &caret);
  EXPECT_EQ(escaped, "\\x1bX");
  EXPECT_EQ(caret, 4u);
  EXPECT_THAT(ExcerptForMessage("\xe4\xb8\xad"
                                "X",
                                3, 100, &caret),
              Not(HasSubstr("\\x")));
  EXPECT_EQ(caret, 2u);  // a wide character takes two columns
}

TEST(DisplayColumnsTest, WideAndCombiningCharacters) {
  EXPECT_EQ(DisplayColumns("abc"), 3u);
  EXPECT_EQ(DisplayColumns("\xe4\xb8\xad\xe6\x96\x87"), 4u);  // 中文
  EXPECT_EQ(DisplayColumns("e\xcc\x81"), 1u);                 // e + U+0301
  EXPECT_EQ(DisplayColumns("\xf0\x9f\x91\x8d"), 2u);          // U+1F44D
  EXPECT_EQ(DisplayColumns("\xef\xbc\xa1"), 2u);              // U+FF21
  EXPECT_EQ(DisplayColumns("\xe2\x80\x8d"), 0u);              // ZWJ
  EXPECT_EQ(DisplayColumns("\xff"), 1u);                      // not UTF-8
}

}  // namespace
}  // namespace uncore::common
