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
  EXPECT_THAT(records[0], ::testing::ElementsAre(
                              "region", "path", "depth", "calls", "wall_ns",
                              "event", "socket", "inclusive", "exclusive",
                              "estimated", "unit", "scale"));
  // Per region: 4 events x (2 sockets + "all") + 2 metrics.
  EXPECT_EQ(records.size(), 1 + results.regions.size() * (4 * 3 + 2));
  for (const auto& record : records) ASSERT_EQ(record.size(), 12u);

  std::map<std::string, std::vector<std::string>> by_key;
  for (const auto& r : records) {
    by_key[r[1] + "|" + r[5] + "|" + r[6]] = r;
  }
  const auto& solve_victims_1 = by_key["main/solve|cbo/LLC_VICTIMS.M_STATE|1"];
  EXPECT_THAT(solve_victims_1,
              ::testing::ElementsAre("solve", "main/solve", "1", "10",
                                     "1800000000", "cbo/LLC_VICTIMS.M_STATE",
                                     "1", "650000", "250000", "1", "", "1"));
  const auto& main_energy = by_key["main|power/energy-pkg|all"];
  ASSERT_EQ(main_energy.size(), 12u);
  EXPECT_EQ(main_energy[7], "39165");
  EXPECT_EQ(main_energy[8], "9000");
  EXPECT_EQ(main_energy[10], "Joules");
  EXPECT_EQ(std::strtod(main_energy[11].c_str(), nullptr), 6.103515625e-05);
  const auto& metric = by_key["main/solve|metric/MEM_BW_READS|all"];
  EXPECT_THAT(metric,
              ::testing::ElementsAre("solve", "main/solve", "1", "10",
                                     "1800000000", "metric/MEM_BW_READS", "all",
                                     "960000000", "", "", "bytes/s", "1"));
  EXPECT_EQ(by_key["main/solve|metric/PCT_WRITES|all"][7], "");  // invalid
  EXPECT_EQ(by_key["main/late|imc/CAS_COUNT.RD|all"][7],
            fmt::format("{}", kHugeCount));

  // The weird name: quoted, quotes doubled, newline kept, bad bytes U+FFFD.
  const auto& weird = by_key["main/" + kWeirdNameInCsv + "|imc/CAS_COUNT.RD|0"];
  ASSERT_EQ(weird.size(), 12u);
  EXPECT_EQ(weird[0], kWeirdNameInCsv);
  EXPECT_THAT(csv, HasSubstr("\"a \"\"quoted\"\", comma\nnewline "
                             "\xEF\xBF\xBD\xEF\xBF\xBD\""));
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
