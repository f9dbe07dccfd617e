// Shared pieces of report_test (tests of sdk/report): the sample Results the
// tests format, golden-file comparison, temporary paths, and a small strict
// UTF-8 decoder written for the tests (independent of sdk/common/json.cc).
//
// Golden files live in tests/report/golden/ (UNCORE_GOLDEN_DIR).  After an
// intended format change, regenerate them and review the diff:
//
//   UNCORE_UPDATE_GOLDEN=1 build-report/tests/report_test
//   git diff tests/report/golden/
//
// With UNCORE_UPDATE_GOLDEN=1 the golden tests write the files instead of
// comparing (and still check everything else).
#ifndef UNCORE_TESTS_REPORT_REPORT_TEST_UTIL_H_
#define UNCORE_TESTS_REPORT_REPORT_TEST_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sdk/report/report.h"

namespace uncore::report {

// ---------------------------------------------------------------------------
// The results the tests format.

// A region name with a quote, a comma, a newline and two invalid bytes.
inline const std::string kWeirdName = "a \"quoted\", comma\nnewline \xff\xfe";
// kWeirdName as JSON gives it back: each invalid byte read as Latin-1.
inline const std::string kWeirdNameFromJson =
    "a \"quoted\", comma\nnewline \xC3\xBF\xC3\xBE";
// kWeirdName in CSV: invalid bytes replaced by U+FFFD.
inline const std::string kWeirdNameInCsv =
    "a \"quoted\", comma\nnewline \xEF\xBF\xBD\xEF\xBF\xBD";
// kWeirdName in the table.
inline const std::string kWeirdNameInTable =
    R"(a "quoted", comma\nnewline \xff\xfe)";

inline constexpr uint64_t kHugeCount = (uint64_t{1} << 60) + 1;  // > 2^53

// Counts on two sockets: socket 0 split over two instances, socket 1 one.
EventCounts Counts(uint64_t socket0, uint64_t socket1, bool estimated = false);

RegionResult Region(std::string name, std::string path, int depth,
                    uint64_t calls, uint64_t wall_ns, uint64_t min_ns,
                    uint64_t max_ns);

// Two sockets; three shown events (one in Joules, one estimated in places)
// and one needed only by a metric; a valid and an invalid metric; nested
// regions, one entered after a later root, one with a weird name.  Every
// call measured (sampled_calls == calls) at a cost (overhead_ns) below 5%
// of the wall time: the common case, where the table shows neither.
Results MakeResults(bool simulated);

// MakeResults(simulated) as the MPI merged report of 3 ranks on 2 nodes
// (Results::mpi set): node17 (ranks 0 and 1) counted socket 0, node18
// (rank 2) socket 1; each region's node union is its wall_ns on node17 and
// half of it on node18, but "io" fell back to a rank's view on node18
// (wall_node_union false); the second metric no rank had.
Results MakeMergedResults(bool simulated);

// MakeResults(false) where the measurement is costly or sampled:
// main/solve/assemble measured 10 of its 100 calls (its counts' estimated
// flags left as they are); the measurement took 24.3% of the weird
// region's time and 5.005% of main/late's (both over 5%), exactly 5% of
// io's (not over).
Results MakeCostlyResults();

// ---------------------------------------------------------------------------
// Golden files and temporary files.

// Compares `actual` with tests/report/golden/<name>, or writes the file when
// UNCORE_UPDATE_GOLDEN=1.
void ExpectMatchesGolden(const std::string& actual, std::string_view name);

std::string ReadFile(const std::string& path);

// `text` split at '\n'.
std::vector<std::string> Lines(const std::string& text);

// A path in the test temporary folder, unique to this process and test.
std::string TempPath(std::string_view name);

// ---------------------------------------------------------------------------
// A strict UTF-8 decoder, written for the tests.

// Decodes the UTF-8 sequence at text[i]: its length, or 0 when invalid
// (overlong, surrogate, above U+10FFFF, truncated, stray continuation).
// Requires i < text.size().
size_t DecodeUtf8(std::string_view text, size_t i, uint32_t* code_point);

bool IsValidUtf8(std::string_view text);

// Appends code point `cp` (at most U+10FFFF) as UTF-8.
void AppendUtf8(uint32_t cp, std::string* out);

}  // namespace uncore::report

#endif  // UNCORE_TESTS_REPORT_REPORT_TEST_UTIL_H_
