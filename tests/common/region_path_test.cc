#include "sdk/common/region_path.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace uncore::common {
namespace {

TEST(RegionPathTest, JoinsEscapedNames) {
  EXPECT_EQ(TopRegionPath("solve"), "solve");
  EXPECT_EQ(JoinRegionPath("solve", "step"), "solve/step");
  EXPECT_EQ(TopRegionPath("io/read"), "io\\/read");
  EXPECT_EQ(JoinRegionPath("a", "b\\c"), "a/b\\\\c");
  EXPECT_EQ(TopRegionPath(""), "");
  EXPECT_EQ(JoinRegionPath("", ""), "/");  // "" inside the top region ""
  EXPECT_EQ(EscapeRegionName("/\\/"), "\\/\\\\\\/");
}

TEST(RegionPathTest, ParentOfAPath) {
  EXPECT_EQ(ParentRegionPath("solve/step", "step"), "solve");
  EXPECT_EQ(ParentRegionPath("a\\/b", "a/b"), std::nullopt);  // at the top
  EXPECT_EQ(ParentRegionPath("a/b", "b"), "a");
  EXPECT_EQ(ParentRegionPath("x/io\\/read", "io/read"), "x");
  EXPECT_EQ(ParentRegionPath("/a", "a"), "");  // inside the top region ""
  EXPECT_EQ(ParentRegionPath("solve", "solve"), std::nullopt);
  EXPECT_EQ(ParentRegionPath("solvestep", "step"), std::nullopt);
  EXPECT_EQ(ParentRegionPath("a/b", "c"), std::nullopt);
}

// Every sequence of names up to three deep over an alphabet that holds the
// separator and the escape gives a path of its own.
TEST(RegionPathTest, DifferentNamesNeverShareAPath) {
  const std::vector<std::string> names = {"",   "a",   "/",  "\\",  "a/",
                                          "/a", "\\/", "//", "a\\", "\\\\"};
  std::set<std::string> paths;
  size_t sequences = 0;
  for (const std::string& n1 : names) {
    const std::string p1 = TopRegionPath(n1);
    paths.insert(p1);
    ++sequences;
    for (const std::string& n2 : names) {
      const std::string p2 = JoinRegionPath(p1, n2);
      paths.insert(p2);
      ++sequences;
      EXPECT_EQ(ParentRegionPath(p2, n2), p1) << n1 << " / " << n2;
      for (const std::string& n3 : names) {
        paths.insert(JoinRegionPath(p2, n3));
        ++sequences;
      }
    }
  }
  EXPECT_EQ(paths.size(), sequences);
}

}  // namespace
}  // namespace uncore::common
