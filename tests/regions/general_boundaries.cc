// Linked into a second build of the recorder's suites (regions_general_test,
// regions_team_general_test): every recorder made there takes the general
// path at every boundary, never OpenFast or CloseFast, so the same exact
// expectations check both paths (docs/performance.md).
#include "gtest/gtest.h"
#include "sdk/regions/recorder.h"

namespace uncore::regions {
namespace {

// Before main, so before any test makes a recorder.
const bool kGeneralOnly = [] {
  UseGeneralBoundariesOnlyForTesting(true);
  return true;
}();

TEST(GeneralBoundariesTest, EveryRecorderHereTakesTheGeneralPath) {
  ASSERT_TRUE(kGeneralOnly);
  EXPECT_TRUE(GeneralBoundariesOnlyForTesting());
  const Recorder plain(nullptr);
  EXPECT_FALSE(plain.fast_boundaries());
}

}  // namespace
}  // namespace uncore::regions
