// libFuzzer target for UNCORE_OUTPUT's placeholders (sdk/report/output.h):
// ExpandOutput with a context made from the input, and
// RankFromEnvironment over launcher variables taken from the input.
//
// The input: a context (pid, rank or none, start time, host name) drawn by
// FuzzedDataProvider, then the output name ("run-%r-%p.json").
//
// Properties: a name is accepted exactly when every '%' is followed by one
// of p, h, r, t or %; the expansion then holds no placeholder: with a host
// name free of '%', its '%' are exactly the input's "%%"; a name with no
// '%' comes back unchanged; "-" stays "-"; each placeholder expands to what
// the context says (%p the pid, %r the rank or "pid" and the pid, %t 15
// characters YYYYmmdd-HHMMSS).  A rank from the environment is a decimal
// number of at most 9 digits.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "sdk/report/output.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

// What ExpandOutput should make of `output` with `c`, or nullopt when it
// should refuse it: the placeholders' rules written out once more.
std::optional<std::string> Expected(std::string_view output,
                                    const uncore::report::OutputContext& c,
                                    const std::string& time) {
  std::string out;
  for (size_t i = 0; i < output.size(); ++i) {
    if (output[i] != '%') {
      out += output[i];
      continue;
    }
    if (i + 1 == output.size()) return std::nullopt;
    switch (output[++i]) {
      case 'p':
        out += std::to_string(c.pid);
        break;
      case 'h':
        out += c.host;
        break;
      case 'r':
        out += c.rank ? std::to_string(*c.rank) : "pid" + std::to_string(c.pid);
        break;
      case 't':
        out += time;
        break;
      case '%':
        out += '%';
        break;
      default:
        return std::nullopt;
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  uncore::report::OutputContext context;
  context.pid = in.ConsumeIntegral<int64_t>();
  if (in.ConsumeBool()) context.rank = in.ConsumeIntegral<int64_t>();
  context.start_unix_ns = in.ConsumeIntegral<uint64_t>();
  context.host = in.ConsumeRandomLengthString(64);
  std::string env[5];
  for (std::string& value : env) value = in.ConsumeRandomLengthString(16);
  const std::string output = in.ConsumeRemainingBytesAsString();

  // %t alone gives the time as ExpandOutput writes it.
  absl::StatusOr<std::string> time = ExpandOutput("%t", context);
  FUZZ_CHECK(time.ok() && time->size() == 15 && (*time)[8] == '-');
  for (size_t i = 0; i < time->size(); ++i) {
    if (i != 8) FUZZ_CHECK((*time)[i] >= '0' && (*time)[i] <= '9');
  }

  absl::StatusOr<std::string> expanded = ExpandOutput(output, context);
  const std::optional<std::string> expected = Expected(output, context, *time);
  FUZZ_CHECK(expanded.ok() == expected.has_value());
  if (expanded.ok()) {
    FUZZ_CHECK(*expanded == *expected);
    if (output.find('%') == std::string::npos) {
      FUZZ_CHECK(*expanded == output);
    }
    if (context.host.find('%') == std::string::npos) {
      size_t doubled = 0;
      for (size_t i = 0; i + 1 < output.size(); ++i) {
        if (output[i] == '%') {
          doubled += output[i + 1] == '%';
          ++i;
        }
      }
      FUZZ_CHECK(static_cast<size_t>(std::count(
                     expanded->begin(), expanded->end(), '%')) == doubled);
    }
  } else {
    FUZZ_CHECK(!expanded.status().message().empty());
  }
  absl::StatusOr<std::string> dash = ExpandOutput("-", context);
  FUZZ_CHECK(dash.ok() && *dash == "-");

  // The launcher's variables, in kRankVariables order.
  const std::optional<int64_t> rank =
      uncore::report::RankFromEnvironment([&](const char* name) {
        for (size_t i = 0; i < 5; ++i) {
          if (std::string_view(name) == uncore::report::kRankVariables[i]) {
            return env[i].empty() && i % 2 == 1 ? nullptr : env[i].c_str();
          }
        }
        return static_cast<const char*>(nullptr);
      });
  if (rank.has_value()) FUZZ_CHECK(*rank >= 0 && *rank <= 999'999'999);
  return 0;
}
