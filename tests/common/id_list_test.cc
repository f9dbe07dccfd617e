#include "sdk/common/id_list.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/common/status_macros.h"
#include "sdk/common/sysfs.h"

namespace uncore::common {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::vector<int> Ids(std::string_view text, int limit = -1) {
  absl::StatusOr<std::vector<int>> ids = ParseIdList(text, limit, "test");
  EXPECT_TRUE(ids.ok()) << text << ": " << ids.status();
  return ids.ok() ? *ids : std::vector<int>{};
}

std::string Error(std::string_view text, int limit = -1,
                  std::string_view what = "test") {
  absl::StatusOr<std::vector<int>> ids = ParseIdList(text, limit, what);
  EXPECT_FALSE(ids.ok()) << text;
  if (ids.ok()) return "";
  EXPECT_EQ(ids.status().code(), absl::StatusCode::kInvalidArgument);
  return StatusMessage(ids.status());
}

TEST(ParseIdListTest, KernelCpulistSyntax) {
  EXPECT_THAT(Ids("0-3,8,10-11"), ElementsAre(0, 1, 2, 3, 8, 10, 11));
  EXPECT_THAT(Ids("0"), ElementsAre(0));
  EXPECT_THAT(Ids("5-5"), ElementsAre(5));
  // As sysfs prints it: with a newline.
  EXPECT_THAT(Ids("0-1,4\n"), ElementsAre(0, 1, 4));
}

TEST(ParseIdListTest, WhitespaceAroundTheTextAndNumbersIsIgnored) {
  EXPECT_THAT(Ids("  0 , 2 - 3 \n"), ElementsAre(0, 2, 3));
  EXPECT_THAT(Ids("\t1,0\t"), ElementsAre(0, 1));
}

TEST(ParseIdListTest, SortedAndDeduplicated) {
  EXPECT_THAT(Ids("3,1,2-4,1"), ElementsAre(1, 2, 3, 4));
}

TEST(ParseIdListTest, EmptyTextIsAnEmptyList) {
  EXPECT_THAT(Ids(""), IsEmpty());
  EXPECT_THAT(Ids(" \n"), IsEmpty());
}

TEST(ParseIdListTest, EmptyPiecesAreErrorsThatSayWhere) {
  EXPECT_THAT(Error("0,,1"), HasSubstr("piece 2 of 3 is empty"));
  EXPECT_THAT(Error("0,"), HasSubstr("piece 2 of 2 is empty"));
  EXPECT_THAT(Error(",0"), HasSubstr("piece 1 of 2 is empty"));
  EXPECT_THAT(Error(" , "), HasSubstr("is empty"));
}

TEST(ParseIdListTest, NegativeAndMalformedNumbersAreErrors) {
  EXPECT_THAT(Error("-1"), HasSubstr("it ('-1') is negative"));
  EXPECT_THAT(Error("0,-3"), HasSubstr("piece 2 of 2 ('-3') is negative"));
  EXPECT_THAT(Error("zero"), HasSubstr("'zero') is not a number"));
  EXPECT_THAT(Error("0x1"), HasSubstr("not a number"));
  EXPECT_THAT(Error("1-2-3"), HasSubstr("not a number"));
  EXPECT_THAT(Error("1-"), HasSubstr("not a number"));
  EXPECT_THAT(Error("+1"), HasSubstr("not a number"));
  EXPECT_THAT(Error("1 2"), HasSubstr("not a number"));
  EXPECT_THAT(Error("9999999999"), HasSubstr("not a number"));
}

TEST(ParseIdListTest, ReversedRangesAreErrorsThatSayTheFix) {
  EXPECT_THAT(Error("3-1"),
              HasSubstr("it ('3-1') is a reversed range; write 1-3"));
}

TEST(ParseIdListTest, Bound) {
  EXPECT_THAT(Ids("0-3", 4), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(Error("0-4", 4), HasSubstr("past the largest id, 3"));
  EXPECT_THAT(Error("4", 4), HasSubstr("('4')"));
  // No bound given: the default one still refuses absurd ranges.
  EXPECT_THAT(Error("0-999999999"),
              HasSubstr(std::to_string(kIdListDefaultLimit - 1)));
}

// Found by tests/fuzz/id_list_fuzzer.cc: every piece used to be expanded
// before duplicates were dropped, so a 2.7 KB cpulist of "0-999999" three
// hundred times made 300 million ids (out of memory).  The ids made are
// now never more than the bound, however often pieces repeat.
TEST(ParseIdListTest, RepeatedWideRangesMakeEachIdOnce) {
  std::string text = "0-1048575";
  for (int i = 0; i < 2000; ++i) text += ",0-1048575,5";
  const std::vector<int> ids = Ids(text);
  ASSERT_EQ(ids.size(), size_t{1} << 20);
  EXPECT_EQ(ids.front(), 0);
  EXPECT_EQ(ids.back(), (1 << 20) - 1);
  EXPECT_THAT(Ids("8-9,0-3,2-5,9,4"), ElementsAre(0, 1, 2, 3, 4, 5, 8, 9));
}

TEST(ParseIdListTest, MessagesNameTheSourceTheTextAndAnExample) {
  const std::string message = Error("0,,1", 8, "--sockets");
  EXPECT_THAT(message, HasSubstr("--sockets: '0,,1'"));
  EXPECT_THAT(message, HasSubstr("write e.g. 0, 0,2 or 0-3,8"));
}

TEST(ParseCpuListTest, IsParseIdListAsASet) {
  EXPECT_EQ(ParseCpuList("0-3,8\n"), (std::set<int>{0, 1, 2, 3, 8}));
  EXPECT_EQ(ParseCpuList("\n"), std::set<int>{});
  EXPECT_EQ(ParseCpuList("0,,1"), std::nullopt);
  EXPECT_EQ(ParseCpuList("3-1"), std::nullopt);
}

}  // namespace
}  // namespace uncore::common
