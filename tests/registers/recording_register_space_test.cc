// RecordingRegisterSpace: values, the access log and failure injection.
#include "sdk/registers/recording_register_space.h"

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace uncore::registers {
namespace {

const PciAddress kFn{0, 0x7f, 16, 4};

TEST(RecordingRegisterSpaceTest, RegistersReadZeroUntilWrittenAndLogInOrder) {
  RecordingRegisterSpace space;
  uint64_t v = 7;
  uint32_t d = 7;
  ASSERT_TRUE(space.ReadMsr(0, 0xD70, &v).ok());
  EXPECT_EQ(v, 0u);
  ASSERT_TRUE(space.WriteMsr(0, 0xD70, 0x400137).ok());
  ASSERT_TRUE(space.ReadMsr(0, 0xD70, &v).ok());
  EXPECT_EQ(v, 0x400137u);
  ASSERT_TRUE(space.ReadMsr(1, 0xD70, &v).ok());  // per CPU
  EXPECT_EQ(v, 0u);
  ASSERT_TRUE(space.WritePci(kFn, 0xD8, 0x400304).ok());
  ASSERT_TRUE(space.ReadPci(kFn, 0xD8, &d).ok());
  EXPECT_EQ(d, 0x400304u);

  const std::vector<RegisterAccess> log = space.accesses();
  ASSERT_EQ(log.size(), 6u);
  EXPECT_EQ(log[1].ToString(), "write msr cpu0 0xd70 = 0x400137");
  EXPECT_EQ(log[2].ToString(), "read msr cpu0 0xd70 = 0x400137");
  EXPECT_EQ(log[4].ToString(), "write pci 0000:7f:10.4+0xd8 = 0x400304");
  EXPECT_EQ(space.CountWrites(), 2);
  EXPECT_EQ(space.CountReads(), 4);
  space.Clear();
  EXPECT_TRUE(space.accesses().empty());
  EXPECT_EQ(space.PeekMsr(0, 0xD70), 0x400137u);  // values stay
}

TEST(RecordingRegisterSpaceTest, SetAndPeekDoNotLog) {
  RecordingRegisterSpace space;
  space.SetMsr(2, 0xC00, 5);
  space.SetPci(kFn, 0xA0, 9);
  EXPECT_EQ(space.PeekMsr(2, 0xC00), 5u);
  EXPECT_EQ(space.PeekPci(kFn, 0xA0), 9u);
  EXPECT_TRUE(space.accesses().empty());
}

TEST(RecordingRegisterSpaceTest, NthWriteFailsOnceAndChangesNothing) {
  RecordingRegisterSpace space;
  space.FailNthWrite(2);
  EXPECT_TRUE(space.WriteMsr(0, 0xD70, 1).ok());
  const absl::Status s = space.WriteMsr(0, 0xD71, 2);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(space.WriteMsr(0, 0xD72, 3).ok());
  EXPECT_EQ(space.PeekMsr(0, 0xD71), 0u);
  const std::vector<RegisterAccess> log = space.accesses();
  ASSERT_EQ(log.size(), 3u);
  EXPECT_FALSE(log[0].failed);
  EXPECT_TRUE(log[1].failed);
  EXPECT_FALSE(log[2].failed);
}

TEST(RecordingRegisterSpaceTest, RegisterFailuresLastUntilCleared) {
  RecordingRegisterSpace space;
  space.FailMsrWrites(0xC00, absl::PermissionDeniedError("no"));
  space.FailMsrReads(0xD75);
  space.FailPciWrites(kFn, 0xF4);
  space.FailPciReads(kFn, 0xA0);
  uint64_t v = 0;
  uint32_t d = 0;
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(space.WriteMsr(i, 0xC00, 1).code(),
              absl::StatusCode::kPermissionDenied);
    EXPECT_FALSE(space.ReadMsr(i, 0xD75, &v).ok());
    EXPECT_FALSE(space.WritePci(kFn, 0xF4, 1).ok());
    EXPECT_FALSE(space.ReadPci(kFn, 0xA0, &d).ok());
  }
  EXPECT_TRUE(space.ReadMsr(0, 0xC00, &v).ok());  // only writes fail
  EXPECT_TRUE(space.WritePci(kFn, 0xA0, 3).ok());
  space.ClearFailures();
  EXPECT_TRUE(space.WriteMsr(0, 0xC00, 1).ok());
  EXPECT_TRUE(space.ReadPci(kFn, 0xA0, &d).ok());
  EXPECT_EQ(d, 3u);
}

TEST(RecordingRegisterSpaceTest, BatchReadsAreRecordedOneByOne) {
  RecordingRegisterSpace space;
  space.SetMsr(0, 0xD76, 11);
  space.FailMsrReads(0xD77);
  std::vector<MsrRead> reads(2);
  reads[0].msr = 0xD76;
  reads[1].msr = 0xD77;
  EXPECT_FALSE(space.ReadMsrBatch(reads).ok());
  EXPECT_TRUE(reads[0].status.ok());
  EXPECT_EQ(reads[0].value, 11u);
  EXPECT_FALSE(reads[1].status.ok());
  EXPECT_EQ(space.CountReads(), 2);
}

}  // namespace
}  // namespace uncore::registers
