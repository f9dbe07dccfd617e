// sdk/runtime/c_api.cc: uncore::internal::MarkerStart / Stop / Reset, the
// marker calls behind uncore_marker_* with the cause of a refusal (what
// the LIKWID package turns into LIKWID's warnings and return codes), and
// the C API's -1 for the same refusals.  On the simulator.
#include <cstdio>
#include <memory>
#include <thread>
#include <utility>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/common/status_macros.h"
#include "uncore/region.h"
#include "uncore/session.h"
#include "uncore/uncore_c.h"

namespace uncore {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<Session> StartSim() {
  SessionOptions o;
  o.events = {"imc/CAS_COUNT.RD"};
  o.backend = "sim";
  o.sim_demo_traffic = false;
  absl::StatusOr<std::unique_ptr<Session>> s = Session::Start(std::move(o));
  EXPECT_TRUE(s.ok()) << common::StatusMessage(s.status());
  return s.ok() ? *std::move(s) : nullptr;
}

TEST(MarkerCodesTest, WithoutASession) {
  EXPECT_EQ(internal::MarkerStart("m"), 0);  // not measured, no error
  EXPECT_EQ(internal::MarkerStop("m"), 0);
  EXPECT_EQ(internal::MarkerReset("m"), internal::kMarkerNoSession);
  EXPECT_THAT(uncore_last_error(), HasSubstr("no active uncore session"));
  EXPECT_EQ(uncore_marker_reset("m"), -1);
  EXPECT_EQ(internal::MarkerStart(nullptr), internal::kMarkerNullName);
  EXPECT_THAT(uncore_last_error(), HasSubstr("uncore_marker_start"));
  EXPECT_EQ(uncore_marker_stop(nullptr), -1);
}

TEST(MarkerCodesTest, EachRefusalItsCode) {
  std::unique_ptr<Session> session = StartSim();
  ASSERT_NE(session, nullptr);
  ASSERT_EQ(internal::MarkerStart("A"), 0);
  EXPECT_EQ(internal::MarkerStart("A"), internal::kMarkerRunning);
  EXPECT_THAT(uncore_last_error(), HasSubstr("already runs on this thread"));
  EXPECT_EQ(uncore_marker_start("A"), -1);  // the C API: -1 for the same
  EXPECT_EQ(internal::MarkerReset("A"), internal::kMarkerRunning);
  // Another thread: A does not run there.
  int other = 0;
  std::thread([&] { other = internal::MarkerStop("A"); }).join();
  EXPECT_EQ(other, internal::kMarkerNotRunning);
  ASSERT_EQ(internal::MarkerStop("A"), 0);
  EXPECT_EQ(internal::MarkerStop("A"), internal::kMarkerNotRunning);
  EXPECT_THAT(uncore_last_error(), HasSubstr("does not run on this thread"));
  EXPECT_EQ(uncore_marker_stop("A"), -1);
  EXPECT_EQ(internal::MarkerReset("A"), 0);
  // More at once than a thread holds.
  int too_many = 0;
  for (int i = 0; i < 1000 && too_many == 0; ++i) {
    char name[16];
    std::snprintf(name, sizeof(name), "m%d", i);
    const int result = internal::MarkerStart(name);
    if (result != 0) too_many = result;
  }
  EXPECT_EQ(too_many, internal::kMarkerTooMany);
  EXPECT_THAT(uncore_last_error(), HasSubstr("too many marker regions"));
}

}  // namespace
}  // namespace uncore
