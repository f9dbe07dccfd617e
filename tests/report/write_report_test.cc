// Tests of WriteReport: the format chosen by the file name, "-" for a
// stream, and errors that name the path and the reason.
#include <cstdio>
#include <fstream>
#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/common/status_macros.h"
#include "sdk/report/report.h"
#include "tests/report/report_test_util.h"
#include "uncore/report_file.h"

namespace uncore::report {
namespace {

using ::testing::HasSubstr;

TEST(WriteReportTest, WritesEachFormatByName) {
  const Results results = MakeResults(false);
  const std::string json = TempPath("out.json");
  const std::string upper_json = TempPath("OUT.JSON");
  const std::string csv = TempPath("out.csv");
  const std::string txt = TempPath("out.txt");
  const std::string html = TempPath("out.html");
  const std::string hatchet = TempPath("out.hatchet.json");
  Timeline timeline;
  timeline.threads = {{7, "main"}};
  timeline.calls = {{0, 0, 0, 1'000}};
  ASSERT_TRUE(WriteReport(results, json).ok());
  ASSERT_TRUE(WriteReport(results, upper_json).ok());
  ASSERT_TRUE(WriteReport(results, csv).ok());
  ASSERT_TRUE(WriteReport(results, txt).ok());
  ASSERT_TRUE(WriteReport(results, html, stderr, &timeline).ok());
  ASSERT_TRUE(WriteReport(results, hatchet, stderr, &timeline).ok());
  EXPECT_EQ(ReadFile(json), FormatJson(results));
  EXPECT_EQ(ReadFile(upper_json), FormatJson(results));
  EXPECT_EQ(ReadFile(csv), FormatCsv(results));
  EXPECT_EQ(ReadFile(txt), FormatTable(results));
  EXPECT_EQ(ReadFile(html), FormatHtml(results, &timeline));
  EXPECT_EQ(ReadFile(hatchet), FormatHatchet(results));
  // Writing again replaces the file; without a timeline the page says so.
  ASSERT_TRUE(WriteReport(Results{}, json).ok());
  EXPECT_EQ(ReadFile(json), FormatJson(Results{}));
  ASSERT_TRUE(WriteReport(results, html).ok());
  EXPECT_EQ(ReadFile(html), FormatHtml(results, nullptr));
  EXPECT_EQ(FormatReport(results, ReportFormat::kHtml, &timeline),
            FormatHtml(results, &timeline));
  // The public face for tools with Results of their own (the MPI merge).
  EXPECT_EQ(FormatReportText(results, "m.CSV"), FormatCsv(results));
  EXPECT_EQ(FormatReportText(results, "m.hatchet.json"),
            FormatHatchet(results));
  EXPECT_EQ(FormatReportText(results, "m.htm"), FormatHtml(results, nullptr));
  EXPECT_EQ(FormatReportText(results, "-"), FormatTable(results));
  EXPECT_EQ(FormatReportText(results, ""), FormatTable(results));
  for (const std::string& path : {json, upper_json, csv, txt, html, hatchet}) {
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
  EXPECT_THAT(common::StatusMessage(status),
              HasSubstr("No such file or directory"));

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
  EXPECT_THAT(common::StatusMessage(status),
              HasSubstr("No space left on device"));
  std::FILE* full = std::fopen("/dev/full", "w");
  ASSERT_NE(full, nullptr);
  EXPECT_FALSE(WriteReport(MakeResults(false), "-", full).ok());
  std::fclose(full);
}

}  // namespace
}  // namespace uncore::report
