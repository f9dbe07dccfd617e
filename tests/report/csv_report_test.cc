// Tests of the CSV report (FormatCsv), read back by a strict RFC 4180 parser
// written for the tests and compared with tests/report/golden/report.csv.
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/report/report.h"
#include "tests/report/report_test_util.h"

namespace uncore::report {
namespace {

using ::testing::HasSubstr;

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
  EXPECT_THAT(records[0],
              ::testing::ElementsAre("region", "path", "depth", "calls",
                                     "wall_ns", "overhead_ns", "sampled_calls",
                                     "open_calls", "event", "socket",
                                     "inclusive", "exclusive", "estimated",
                                     "unit", "scale", "threads", "thread_ns"));
  // Per region: 4 events x (2 sockets + "all") + 2 metrics.
  EXPECT_EQ(records.size(), 1 + results.regions.size() * (4 * 3 + 2));
  for (const auto& record : records) ASSERT_EQ(record.size(), 17u);

  std::map<std::string, std::vector<std::string>> by_key;
  for (const auto& r : records) {
    by_key[r[1] + "|" + r[8] + "|" + r[9]] = r;
  }
  const auto& solve_victims_1 = by_key["main/solve|cbo/LLC_VICTIMS.M_STATE|1"];
  EXPECT_THAT(solve_victims_1,
              ::testing::ElementsAre(
                  "solve", "main/solve", "1", "10", "1800000000", "15500", "10",
                  "0", "cbo/LLC_VICTIMS.M_STATE", "1", "650000", "250000", "1",
                  "", "1", "1", "1800000000"));
  const auto& main_energy = by_key["main|power/energy-pkg|all"];
  ASSERT_EQ(main_energy.size(), 17u);
  EXPECT_EQ(main_energy[10], "39165");
  EXPECT_EQ(main_energy[11], "9000");
  EXPECT_EQ(main_energy[13], "Joules");
  EXPECT_EQ(std::strtod(main_energy[14].c_str(), nullptr), 6.103515625e-05);
  const auto& metric = by_key["main/solve|metric/MEM_BW_READS|all"];
  EXPECT_THAT(metric, ::testing::ElementsAre("solve", "main/solve", "1", "10",
                                             "1800000000", "15500", "10", "0",
                                             "metric/MEM_BW_READS", "all",
                                             "960000000", "", "", "bytes/s",
                                             "1", "1", "1800000000"));
  EXPECT_EQ(by_key["main/solve|metric/PCT_WRITES|all"][10], "");  // invalid
  EXPECT_EQ(by_key["main/late|imc/CAS_COUNT.RD|all"][10],
            fmt::format("{}", kHugeCount));

  // The weird name: quoted, quotes doubled, newline kept, bad bytes U+FFFD.
  const auto& weird = by_key["main/" + kWeirdNameInCsv + "|imc/CAS_COUNT.RD|0"];
  ASSERT_EQ(weird.size(), 17u);
  EXPECT_EQ(weird[0], kWeirdNameInCsv);
  EXPECT_THAT(csv, HasSubstr("\"a \"\"quoted\"\", comma\nnewline "
                             "\xEF\xBF\xBD\xEF\xBF\xBD\""));
}

TEST(CsvReportTest, CostAndSamplingOnEveryRow) {
  Results results = MakeCostlyResults();
  results.regions[4].overhead_ns = kHugeCount;  // exact beyond 2^53
  std::vector<std::vector<std::string>> records;
  std::string error;
  ASSERT_TRUE(ParseCsv(FormatCsv(results), &records, &error)) << error;
  ASSERT_GT(records.size(), 1u);
  const std::vector<std::string>& header = records[0];
  ASSERT_EQ(header.size(), 17u);
  EXPECT_EQ(header[4], "wall_ns");
  EXPECT_EQ(header[5], "overhead_ns");
  EXPECT_EQ(header[6], "sampled_calls");
  EXPECT_EQ(header[7], "open_calls");
  // Every row of a region carries its cost and sampled calls.
  for (size_t i = 1; i < records.size(); ++i) {
    const std::vector<std::string>& r = records[i];
    const RegionResult* region = nullptr;
    for (const RegionResult& candidate : results.regions) {
      if (candidate.name == r[0] ||
          (candidate.name == kWeirdName && r[0] == kWeirdNameInCsv)) {
        region = &candidate;
      }
    }
    ASSERT_NE(region, nullptr) << r[0];
    EXPECT_EQ(r[5], fmt::format("{}", region->overhead_ns)) << r[1];
    EXPECT_EQ(r[6], fmt::format("{}", region->sampled_calls)) << r[1];
    EXPECT_EQ(r[7], fmt::format("{}", region->open_calls)) << r[1];
  }
  // main/solve/assemble measured 10 of its 100 calls: every event row is
  // estimated, though its counts' own flags are not all set.
  int assemble_rows = 0;
  for (const auto& r : records) {
    if (r[1] != "main/solve/assemble" || r[8].starts_with("metric/")) continue;
    ++assemble_rows;
    EXPECT_EQ(r[6], "10");
    EXPECT_EQ(r[12], "1") << r[8] << " socket " << r[9];
  }
  EXPECT_EQ(assemble_rows, 4 * 3);
}

TEST(CsvReportTest, StrictParserRejectsBadCsv) {
  std::vector<std::vector<std::string>> records;
  std::string error;
  for (std::string_view bad : {"a,b\n", "a\"b\r\n", "\"open\r\n", "a,b"}) {
    records.clear();
    EXPECT_FALSE(ParseCsv(bad, &records, &error)) << bad;
  }
}

}  // namespace
}  // namespace uncore::report
