// libFuzzer target for what a perf PMU's sysfs folder says: its `format/`
// files ("config:0-7,21", ParseFormatField) and its `events/` aliases
// ("event=0x04,umask=0x03", expanded by Pmu::Encode), and the terms a spec
// gives Pmu::Encode.
//
// The input is read twice: whole, as one format file; then line by line, as
// a PMU folder and the events to encode on it:
//   format/umask=config:8-15                   a format file
//   events/cas_count_read=event=0x04,umask=3   an alias
//   cas_count_read                             terms to encode (as
//   event=4,umask=0x3,edge                      perfmon_plan.cc splits them)
//
// Properties: a parsed field has 1..64 bits per range, within one config
// word; a value that fits is inserted into exactly the field's bits and
// reads back; a value one bit too wide is refused; an encoding without raw
// config terms sets no bit outside the PMU's fields.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "sdk/common/sysfs.h"
#include "sdk/common/text.h"
#include "sdk/devices/perf/pmu_discovery.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using uncore::devices::perf::EventAlias;
using uncore::devices::perf::FormatField;
using uncore::devices::perf::PerfConfig;
using uncore::devices::perf::Pmu;

uint64_t RangeMask(const FormatField::Range& r) {
  const int n = r.hi - r.lo + 1;
  return (n >= 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1) << r.lo;
}

uint64_t FieldMask(const FormatField& f) {
  uint64_t mask = 0;
  for (const FormatField::Range& r : f.ranges) mask |= RangeMask(r);
  return mask;
}

bool Overlaps(const FormatField& f) {
  uint64_t seen = 0;
  for (const FormatField::Range& r : f.ranges) {
    if ((seen & RangeMask(r)) != 0) return true;
    seen |= RangeMask(r);
  }
  return false;
}

uint64_t Word(const PerfConfig& c, int word) {
  return word == 0 ? c.config : word == 1 ? c.config1 : c.config2;
}

// The value the field holds in `c` (the inverse of Insert).
uint64_t Extract(const FormatField& f, const PerfConfig& c) {
  const uint64_t w = Word(c, f.word);
  uint64_t value = 0;
  int shift = 0;
  for (const FormatField::Range& r : f.ranges) {
    const int n = r.hi - r.lo + 1;
    const uint64_t part = (w & RangeMask(r)) >> r.lo;
    if (shift < 64) value |= part << shift;
    shift += n;
  }
  return value;
}

void CheckField(const FormatField& f, uint64_t seed) {
  FUZZ_CHECK(f.word >= 0 && f.word <= 2);
  FUZZ_CHECK(!f.ranges.empty());
  for (const FormatField::Range& r : f.ranges) {
    FUZZ_CHECK(r.lo >= 0 && r.lo <= r.hi && r.hi <= 63);
  }
  const int width = f.width();
  FUZZ_CHECK(width >= 1 && static_cast<size_t>(width) <= 64 * f.ranges.size());
  const uint64_t all = width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  for (uint64_t value : {uint64_t{0}, uint64_t{1}, all, seed & all}) {
    PerfConfig c;
    FUZZ_CHECK(f.Insert(value, &c).ok());
    // Only the field's word, only its bits.
    for (int word = 0; word < 3; ++word) {
      const uint64_t bits = Word(c, word);
      FUZZ_CHECK((bits & ~(word == f.word ? FieldMask(f) : 0)) == 0);
    }
    if (!Overlaps(f)) FUZZ_CHECK(Extract(f, c) == value);
    // Inserting over other bits leaves them alone.
    PerfConfig ones{~uint64_t{0}, ~uint64_t{0}, ~uint64_t{0}};
    FUZZ_CHECK(f.Insert(value, &ones).ok());
    FUZZ_CHECK((Word(ones, f.word) | FieldMask(f)) == ~uint64_t{0});
    if (!Overlaps(f)) FUZZ_CHECK(Extract(f, ones) == value);
  }
  if (width < 64) {
    PerfConfig c;
    FUZZ_CHECK(!f.Insert(all + 1, &c).ok());
    FUZZ_CHECK(c == PerfConfig{});
  }
}

// "name=text" -> {name, text}; the whole line as the name when no '='.
std::pair<std::string_view, std::string_view> NameAndText(
    std::string_view line) {
  const size_t eq = line.find('=');
  if (eq == std::string_view::npos) return {line, {}};
  return {line.substr(0, eq), line.substr(eq + 1)};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  uint64_t seed = 0x9e3779b97f4a7c15ULL;
  for (unsigned char c : text) seed = (seed ^ c) * 0x100000001b3ULL;

  if (absl::StatusOr<FormatField> f =
          uncore::devices::perf::ParseFormatField("field", text);
      f.ok()) {
    CheckField(*f, seed);
  }

  Pmu pmu;
  pmu.name = "uncore_fuzz_0";
  std::vector<std::string_view> encodes;
  for (std::string_view line : uncore::common::Split(text, '\n')) {
    if (line.starts_with("format/")) {
      const auto [name, field_text] = NameAndText(line.substr(7));
      absl::StatusOr<FormatField> f =
          uncore::devices::perf::ParseFormatField(name, field_text);
      if (!f.ok()) continue;
      CheckField(*f, seed);
      pmu.formats.push_back(*std::move(f));
    } else if (line.starts_with("events/")) {
      const auto [name, terms] = NameAndText(line.substr(7));
      EventAlias alias;
      alias.name = std::string(name);
      alias.terms = std::string(uncore::common::StripWhitespace(terms));
      alias.scale = 0.5;
      alias.unit = "MiB";
      pmu.aliases.push_back(std::move(alias));
    } else {
      encodes.push_back(line);
    }
  }
  uint64_t field_bits[3] = {0, 0, 0};
  for (const FormatField& f : pmu.formats) field_bits[f.word] |= FieldMask(f);

  for (std::string_view line : encodes) {
    std::vector<std::pair<std::string, std::optional<uint64_t>>> terms;
    bool raw = false;
    bool numbers = true;
    for (std::string_view term :
         uncore::common::Split(line, ',', /*skip_empty=*/true)) {
      const auto [name, value] = NameAndText(term);
      std::optional<uint64_t> v;
      if (name.size() != term.size()) {
        v = uncore::common::ParseUnsigned(value);
        numbers = numbers && v.has_value();
      }
      raw = raw || name.starts_with("config");
      terms.emplace_back(std::string(name), v);
    }
    if (!numbers) continue;
    absl::StatusOr<Pmu::Encoded> enc = pmu.Encode(terms);
    if (!enc.ok()) continue;
    FUZZ_CHECK(enc->scale == 1.0 || enc->scale == 0.5);
    if (!raw) {
      for (int word = 0; word < 3; ++word) {
        FUZZ_CHECK((Word(enc->config, word) & ~field_bits[word]) == 0);
      }
    }
    (void)enc->config.ToString();
  }
  (void)pmu.FormatNames();
  return 0;
}
