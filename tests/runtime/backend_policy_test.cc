// The `auto` policy (sdk/runtime/backend_policy.h): what it asks to probe,
// what it picks, and the coded reasons of what it rejects.
#include "sdk/runtime/backend_policy.h"

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace uncore::runtime {
namespace {

TEST(DecideAutoBackendTest, AsksForPerfFirst) {
  const AutoDecision d = DecideAutoBackend({});
  ASSERT_FALSE(d.decided());
  EXPECT_EQ(*d.probe_next, BackendKind::kPerf);
  EXPECT_TRUE(d.rejected.empty());
}

TEST(DecideAutoBackendTest, PicksPerfWithoutProbingDirect) {
  AutoProbes probes;
  probes.perf = BackendProbe::Usable();
  const AutoDecision d = DecideAutoBackend(probes);
  ASSERT_TRUE(d.decided());
  EXPECT_EQ(d.backend, BackendKind::kPerf);
  EXPECT_TRUE(d.rejected.empty());
}

TEST(DecideAutoBackendTest, AsksForDirectWhenPerfCannotCount) {
  AutoProbes probes;
  probes.perf = BackendProbe::FromStatus(absl::NotFoundError("no uncore PMU"));
  const AutoDecision d = DecideAutoBackend(probes);
  ASSERT_FALSE(d.decided());
  EXPECT_EQ(*d.probe_next, BackendKind::kDirect);
}

TEST(DecideAutoBackendTest, PicksDirectAndSaysWhyNotPerf) {
  AutoProbes probes;
  probes.perf =
      BackendProbe::FromStatus(absl::PermissionDeniedError("paranoid 2"));
  probes.direct = BackendProbe::Usable();
  const AutoDecision d = DecideAutoBackend(probes);
  ASSERT_TRUE(d.decided());
  EXPECT_EQ(d.backend, BackendKind::kDirect);
  ASSERT_EQ(d.rejected.size(), 1u);
  EXPECT_EQ(d.rejected[0].backend, BackendKind::kPerf);
  EXPECT_EQ(d.rejected[0].rejection, Rejection::kNoPermission);
  EXPECT_EQ(d.rejected[0].detail, "paranoid 2");
}

TEST(DecideAutoBackendTest, OffWhenNeitherCounts) {
  AutoProbes probes;
  probes.perf = BackendProbe::Rejected(Rejection::kUnavailable, "no PMU");
  probes.direct = BackendProbe::FromStatus(absl::UnavailableError("in use"));
  const AutoDecision d = DecideAutoBackend(probes);
  ASSERT_TRUE(d.decided());
  EXPECT_EQ(d.backend, BackendKind::kOff);
  ASSERT_EQ(d.rejected.size(), 2u);
  EXPECT_EQ(d.rejected[1].backend, BackendKind::kDirect);
  EXPECT_EQ(d.rejected[1].rejection, Rejection::kBusy);
  EXPECT_EQ(d.RejectedText(), "perf: no PMU; direct: in use");
}

TEST(DecideAutoBackendTest, NeverPicksSimOrSkipsTheOrder) {
  // Direct usable but perf unknown: perf must be probed first.
  AutoProbes probes;
  probes.direct = BackendProbe::Usable();
  const AutoDecision d = DecideAutoBackend(probes);
  ASSERT_FALSE(d.decided());
  EXPECT_EQ(*d.probe_next, BackendKind::kPerf);
}

TEST(RejectionTest, FromStatusCodes) {
  EXPECT_EQ(RejectionFromStatus(absl::OkStatus()), Rejection::kNone);
  EXPECT_EQ(RejectionFromStatus(absl::PermissionDeniedError("x")),
            Rejection::kNoPermission);
  EXPECT_EQ(RejectionFromStatus(absl::UnavailableError("x")), Rejection::kBusy);
  EXPECT_EQ(RejectionFromStatus(absl::NotFoundError("x")),
            Rejection::kUnavailable);
  EXPECT_EQ(RejectionFromStatus(absl::FailedPreconditionError("x")),
            Rejection::kUnavailable);
  EXPECT_EQ(RejectionFromStatus(absl::InternalError("x")), Rejection::kFailed);
  EXPECT_EQ(RejectionName(Rejection::kNoPermission), "no_permission");
  EXPECT_EQ(BackendKindName(BackendKind::kDirect), "direct");
}

TEST(RejectionTest, UsableProbeHasNoDetail) {
  const BackendProbe p = BackendProbe::FromStatus(absl::OkStatus());
  EXPECT_TRUE(p.usable());
  EXPECT_EQ(p.rejection, Rejection::kNone);
  EXPECT_TRUE(p.detail.empty());
}

}  // namespace
}  // namespace uncore::runtime
