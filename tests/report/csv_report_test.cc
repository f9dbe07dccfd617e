// Tests of the CSV report (FormatCsv), read back by a strict RFC 4180 parser
// written for the tests and compared with tests/report/golden/report.csv.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fmt/format.h"
#include "fmt/ranges.h"
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

// The records as maps from column name to field.
std::vector<std::map<std::string, std::string>> ByColumn(
    const std::vector<std::vector<std::string>>& records) {
  std::vector<std::map<std::string, std::string>> rows;
  for (size_t i = 1; i < records.size(); ++i) {
    std::map<std::string, std::string>& row = rows.emplace_back();
    for (size_t c = 0; c < records[0].size() && c < records[i].size(); ++c) {
      row[records[0][c]] = records[i][c];
    }
  }
  return rows;
}

std::string Key(const std::map<std::string, std::string>& row) {
  return fmt::format("{}|{}|{}|{}|{}|{}|{}", row.at("path"), row.at("kind"),
                     row.at("name"), row.at("scope"), row.at("level"),
                     row.at("socket"), row.at("instance"));
}

TEST(CsvReportTest, ParsesBackStrictly) {
  const Results results = MakeResults(false);
  const std::string csv = FormatCsv(results);
  EXPECT_TRUE(IsValidUtf8(csv));
  std::vector<std::vector<std::string>> records;
  std::string error;
  ASSERT_TRUE(ParseCsv(csv, &records, &error)) << error;
  ASSERT_FALSE(records.empty());
  EXPECT_THAT(
      records[0],
      ::testing::ElementsAre(
          "region", "path", "parent", "depth", "calls", "threads", "wall_ns",
          "counted_ns", "overlap_ns", "thread_ns", "min_ns", "max_ns",
          "overhead_ns", "read_latency_dominated", "sampled_calls",
          "open_calls", "kind", "name", "scope", "level", "socket", "instance",
          "value", "unit", "count", "scale", "estimated"));
  // Per region: 4 events x 2 scopes x (total + 2 sockets + 3 instances) + 2
  // metrics.
  EXPECT_EQ(records.size(), 1 + results.regions.size() * (4 * 2 * 6 + 2));
  for (const auto& record : records) ASSERT_EQ(record.size(), 27u);

  std::map<std::string, std::map<std::string, std::string>> by_key;
  for (const auto& row : ByColumn(records)) {
    EXPECT_TRUE(by_key.emplace(Key(row), row).second)
        << "one row per value: " << Key(row);
  }
  const auto& victims =
      by_key["main/solve|event|cbo/LLC_VICTIMS.M_STATE|exclusive|socket|1|"];
  EXPECT_EQ(victims.at("region"), "solve");
  EXPECT_EQ(victims.at("parent"), "main");
  EXPECT_EQ(victims.at("depth"), "1");
  EXPECT_EQ(victims.at("calls"), "10");
  EXPECT_EQ(victims.at("threads"), "1");
  EXPECT_EQ(victims.at("wall_ns"), "1800000000");
  EXPECT_EQ(victims.at("thread_ns"), "1800000000");
  EXPECT_EQ(victims.at("min_ns"), "150000000");
  EXPECT_EQ(victims.at("max_ns"), "210000000");
  EXPECT_EQ(victims.at("overhead_ns"), "15500");
  EXPECT_EQ(victims.at("sampled_calls"), "10");
  EXPECT_EQ(victims.at("open_calls"), "0");
  EXPECT_EQ(victims.at("value"), "250000");
  EXPECT_EQ(victims.at("count"), "250000");
  EXPECT_EQ(victims.at("unit"), "");
  EXPECT_EQ(victims.at("scale"), "1");
  EXPECT_EQ(victims.at("estimated"), "1");  // multiplexed
  // Totals: no socket, no instance; instance rows name their box.
  const auto& energy = by_key["main|event|power/energy-pkg|inclusive|total||"];
  EXPECT_EQ(energy.at("parent"), "");
  EXPECT_EQ(energy.at("count"), "39165");
  EXPECT_EQ(std::strtod(energy.at("value").c_str(), nullptr),
            39165 * 6.103515625e-05);
  EXPECT_EQ(energy.at("unit"), "Joules");
  EXPECT_EQ(std::strtod(energy.at("scale").c_str(), nullptr), 6.103515625e-05);
  EXPECT_EQ(energy.at("estimated"), "0");
  EXPECT_EQ(by_key["main|event|imc/CAS_COUNT.RD|inclusive|instance|0|box1"].at(
                "count"),
            "7500000");
  // Socket and instance rows add up to the total, in each scope.
  for (const auto& [key, row] : by_key) {
    if (row.at("kind") != "event" || row.at("level") != "total") continue;
    uint64_t sockets = 0;
    uint64_t instances = 0;
    for (const auto& [other_key, other] : by_key) {
      if (other.at("path") != row.at("path") ||
          other.at("name") != row.at("name") ||
          other.at("scope") != row.at("scope")) {
        continue;
      }
      const uint64_t count =
          std::strtoull(other.at("count").c_str(), nullptr, 10);
      if (other.at("level") == "socket") sockets += count;
      if (other.at("level") == "instance") instances += count;
    }
    EXPECT_EQ(fmt::format("{}", sockets), row.at("count")) << key;
    EXPECT_EQ(fmt::format("{}", instances), row.at("count")) << key;
  }
  const auto& metric =
      by_key["main/solve|metric|MEM_BW_READS|inclusive|total||"];
  EXPECT_EQ(metric.at("value"), "960000000");
  EXPECT_EQ(metric.at("unit"), "bytes/s");
  EXPECT_EQ(metric.at("count"), "");
  EXPECT_EQ(metric.at("scale"), "");
  EXPECT_EQ(metric.at("estimated"), "1");  // a multiplexed count of solve
  EXPECT_EQ(
      by_key["main|metric|MEM_BW_READS|inclusive|total||"].at("estimated"),
      "0");
  EXPECT_EQ(
      by_key["main/solve|metric|PCT_WRITES|inclusive|total||"].at("value"),
      "");  // invalid
  EXPECT_EQ(
      by_key["main/late|event|imc/CAS_COUNT.RD|inclusive|total||"].at("count"),
      fmt::format("{}", kHugeCount));

  // The weird name: quoted, quotes doubled, newline kept, bad bytes U+FFFD.
  const auto& weird = by_key["main/" + kWeirdNameInCsv +
                             "|event|imc/CAS_COUNT.RD|inclusive|socket|0|"];
  EXPECT_EQ(weird.at("region"), kWeirdNameInCsv);
  EXPECT_EQ(weird.at("parent"), "main");
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
  // Every row of a region carries its cost, sampled and open calls.
  for (const auto& row : ByColumn(records)) {
    const RegionResult* region = nullptr;
    for (const RegionResult& candidate : results.regions) {
      if (candidate.name == row.at("region") ||
          (candidate.name == kWeirdName &&
           row.at("region") == kWeirdNameInCsv)) {
        region = &candidate;
      }
    }
    ASSERT_NE(region, nullptr) << row.at("region");
    EXPECT_EQ(row.at("overhead_ns"), fmt::format("{}", region->overhead_ns));
    EXPECT_EQ(row.at("sampled_calls"),
              fmt::format("{}", region->sampled_calls));
    EXPECT_EQ(row.at("open_calls"), fmt::format("{}", region->open_calls));
  }
  // main/solve/assemble measured 10 of its 100 calls: every row is
  // estimated, though its counts' own flags are not all set.
  int assemble_rows = 0;
  for (const auto& row : ByColumn(records)) {
    if (row.at("path") != "main/solve/assemble") continue;
    ++assemble_rows;
    EXPECT_EQ(row.at("sampled_calls"), "10");
    EXPECT_EQ(row.at("estimated"), "1") << Key(row);
  }
  EXPECT_EQ(assemble_rows, 4 * 2 * 6 + 2);
}

TEST(CsvReportTest, ARegionWithoutValuesKeepsOneRow) {
  Results results = MakeResults(false);
  results.events.clear();
  results.metrics.clear();
  std::vector<std::vector<std::string>> records;
  std::string error;
  ASSERT_TRUE(ParseCsv(FormatCsv(results), &records, &error)) << error;
  const auto rows = ByColumn(records);
  ASSERT_EQ(rows.size(), results.regions.size());
  EXPECT_EQ(rows[0].at("path"), "main");
  EXPECT_EQ(rows[0].at("kind"), "region");
  EXPECT_EQ(rows[0].at("level"), "total");
  EXPECT_EQ(rows[0].at("name"), "");
  EXPECT_EQ(rows[0].at("value"), "");
  EXPECT_EQ(rows[0].at("wall_ns"), "2400000000");
  // No regions: the header alone.
  const std::string header_only = FormatCsv(Results{});
  EXPECT_EQ(std::count(header_only.begin(), header_only.end(), '\n'), 1);
}

// Issue 36, R5: a region named "" (a root, and one nested in main) left
// its empty leading fields without their commas: rows of 21 or 23 fields.
TEST(CsvReportTest, EmptyRegionNamesKeepEveryField) {
  Results results = MakeResults(false);
  results.regions.push_back(Region("", "", 0, 1, 1000, 1000, 1000));
  results.regions.push_back(Region("", "main/", 1, 1, 500, 500, 500));
  for (const bool with_values : {true, false}) {
    if (!with_values) {
      results.events.clear();
      results.metrics.clear();
    }
    std::vector<std::vector<std::string>> records;
    std::string error;
    ASSERT_TRUE(ParseCsv(FormatCsv(results), &records, &error)) << error;
    ASSERT_GT(records.size(), 1u);
    for (const auto& record : records) {
      ASSERT_EQ(record.size(), records[0].size())
          << fmt::format("{}", fmt::join(record, "|"));
    }
    int empty_root = 0;
    int empty_nested = 0;
    for (const auto& row : ByColumn(records)) {
      if (!row.at("region").empty()) continue;
      if (row.at("path").empty()) {
        ++empty_root;
        EXPECT_EQ(row.at("parent"), "");
        EXPECT_EQ(row.at("depth"), "0");
        EXPECT_EQ(row.at("wall_ns"), "1000");
      } else {
        ++empty_nested;
        EXPECT_EQ(row.at("path"), "main/");
        EXPECT_EQ(row.at("parent"), "main");
        EXPECT_EQ(row.at("depth"), "1");
        EXPECT_EQ(row.at("wall_ns"), "500");
      }
    }
    EXPECT_GT(empty_root, 0);
    EXPECT_GT(empty_nested, 0);
  }
}

TEST(CsvReportTest, SocketIdsAndRepeatedEventNames) {
  Results results = MakeResults(false);
  results.run.sockets = {3};  // shorter than per_socket: "#1" for the second
  results.events[2].canonical = "imc/CAS_COUNT.RD";  // as the JSON keys it
  std::vector<std::vector<std::string>> records;
  std::string error;
  ASSERT_TRUE(ParseCsv(FormatCsv(results), &records, &error)) << error;
  std::set<std::string> sockets;
  std::set<std::string> names;
  for (const auto& row : ByColumn(records)) {
    if (row.at("level") == "socket") sockets.insert(row.at("socket"));
    names.insert(row.at("name"));
  }
  EXPECT_THAT(sockets, ::testing::ElementsAre("#1", "3"));
  EXPECT_TRUE(names.contains("imc/CAS_COUNT.RD#2"));
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
