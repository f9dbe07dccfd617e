#include "sdk/spec/event_spec.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <span>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "fmt/format.h"
#include "sdk/common/status_macros.h"
#include "sdk/common/text.h"

namespace uncore::spec {
namespace {

using ivytown::BoxDescriptor;
using ivytown::EventDescriptor;
using ivytown::FieldDescriptor;
using ivytown::FieldUse;
using ivytown::UmaskDescriptor;

// What an error quotes of a spec: an excerpt of this many bytes around the
// column, and at most this much of the reason (which may quote a name).
constexpr size_t kExcerptBytes = 100;
constexpr size_t kReasonBytes = 600;

// Names that are events but live in the box descriptor, not the catalog.
constexpr uint64_t kKernelFixedCounterEvent = 0xff;

bool IsIdentStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool IsIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
}

// A cursor over the spec text that knows how to fail with a pointer at the
// current column.
class Cursor {
 public:
  explicit Cursor(std::string_view text) : text_(text) {}

  size_t pos() const { return pos_; }
  bool done() const { return pos_ >= text_.size(); }
  char peek() const { return done() ? '\0' : text_[pos_]; }
  bool Consume(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  void SkipSpaces() {
    while (!done() && std::isspace(static_cast<unsigned char>(text_[pos_]))) {
      ++pos_;
    }
  }
  void Seek(size_t pos) { pos_ = std::min(pos, text_.size()); }

  // An identifier (letters, digits, '_' and '-'), possibly empty.
  std::string_view Identifier(bool allow_dash = false) {
    const size_t start = pos_;
    if (!done() && IsIdentStart(text_[pos_])) {
      ++pos_;
      while (!done() &&
             (IsIdentChar(text_[pos_]) && (allow_dash || text_[pos_] != '-'))) {
        ++pos_;
      }
    }
    return text_.substr(start, pos_ - start);
  }

  // An unsigned integer: decimal, 0x hex or 0b binary.
  absl::StatusOr<uint64_t> Integer(std::string_view what) {
    const size_t start = pos_;
    int base = 10;
    if (text_.substr(pos_, 2) == "0x" || text_.substr(pos_, 2) == "0X") {
      base = 16;
      pos_ += 2;
    } else if (text_.substr(pos_, 2) == "0b" || text_.substr(pos_, 2) == "0B") {
      base = 2;
      pos_ += 2;
    }
    const size_t digits = pos_;
    while (!done() && std::isxdigit(static_cast<unsigned char>(text_[pos_]))) {
      ++pos_;
    }
    if (pos_ == digits) {
      pos_ = start;
      return Error(start, fmt::format("expected a number for {}", what));
    }
    uint64_t value = 0;
    const char* first = text_.data() + digits;
    const char* last = text_.data() + pos_;
    auto [ptr, ec] = std::from_chars(first, last, value, base);
    if (ec == std::errc::result_out_of_range) {
      return Error(start, fmt::format("{} does not fit in 64 bits", what));
    }
    if (ec != std::errc() || ptr != last) {
      return Error(start + (ptr - first) + (digits - start),
                   fmt::format("'{}' is not a valid base-{} number for {}",
                               text_.substr(start, pos_ - start), base, what));
    }
    return value;
  }

  absl::Status Error(size_t at, std::string_view why) const {
    return ErrorAt(text_, at, why);
  }

  // The spec is outside text: quoted escaped and cut (common/text.h), the
  // caret under an excerpt around the column.
  static absl::Status ErrorAt(std::string_view text, size_t at,
                              std::string_view why) {
    at = std::min(at, text.size());
    size_t caret = 0;
    const std::string excerpt =
        common::ExcerptForMessage(text, at, kExcerptBytes, &caret);
    return absl::InvalidArgumentError(
        fmt::format("invalid event spec \"{}\" at column {}: {}\n  {}\n  {}^",
                    common::QuoteForMessage(text), at + 1,
                    common::QuoteForMessage(why, kReasonBytes), excerpt,
                    std::string(caret, ' ')));
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

std::string Hex(uint64_t v) { return fmt::format("0x{:x}", v); }

std::string DidYouMean(std::string_view name,
                       const std::vector<std::string>& candidates) {
  std::vector<std::string> near = common::ClosestNames(name, candidates, 3);
  if (near.empty()) return "";
  return fmt::format("; did you mean {}?", common::JoinAlternatives(near));
}

// The box's field named `name`, ignoring case.
const FieldDescriptor* FindFieldIgnoreCase(const BoxDescriptor& box,
                                           std::string_view name) {
  for (const FieldDescriptor& f : box.fields) {
    if (common::EqualsIgnoreCase(f.name, name)) return &f;
  }
  return nullptr;
}

std::vector<std::string> BoxNames() {
  std::vector<std::string> names;
  for (const BoxDescriptor& box : ivytown::AllBoxes()) {
    names.emplace_back(box.name);
    for (std::string_view alias : box.aliases) names.emplace_back(alias);
  }
  return names;
}

std::vector<std::string> EventNames(const BoxDescriptor& box) {
  std::vector<std::string> names;
  for (const EventDescriptor& e : ivytown::EventsOf(box.type)) {
    names.emplace_back(e.name);
  }
  if (box.fixed_counter) names.emplace_back(box.fixed_counter->name);
  return names;
}

std::vector<std::string> UmaskNames(const EventDescriptor& event) {
  std::vector<std::string> names;
  for (const UmaskDescriptor& u : event.umasks) names.emplace_back(u.name);
  return names;
}

std::vector<std::string> ModifierNames(const BoxDescriptor& box) {
  std::vector<std::string> names;
  for (const FieldDescriptor& f : box.fields) {
    if (f.use == FieldUse::kModifier) names.emplace_back(f.name);
  }
  return names;
}

// Why `inv` is refused (notes/decisions.md #12), and what to do instead.
std::string NoInvert(const EventSpec& spec) {
  const BoxDescriptor& box = *spec.box;
  const std::string event =
      spec.event != nullptr ? std::string(spec.event->name) : "EVENT";
  // The box's clock: its CLOCKTICKS event, or its fixed counter (U-Box).
  std::string clock = box.fixed_counter ? std::string(box.fixed_counter->name)
                                        : std::string("CLOCKTICKS");
  for (const EventDescriptor& e : ivytown::EventsOf(box.type)) {
    if (e.name.ends_with("CLOCKTICKS") && !e.has_umasks()) {
      clock = std::string(e.name);
      break;
    }
  }
  std::string instead = fmt::format(
      "to count the cycles in which {} stays below N, count {}/{} and "
      "{}/{}:thresh=N and subtract the second from the first",
      event, box.name, clock, box.name, event);
  if (box.FindRole(ivytown::FieldRole::kOccupancyInvert) != nullptr) {
    instead = fmt::format(
        "the PCU's own invert is occ_invert, for the occupancy events "
        "(POWER_STATE_OCCUPANCY, occ_sel != 0); otherwise {}",
        instead);
  }
  return fmt::format(
      "'inv' cannot be used on IvyTown's {}: bit 23 of its counter control "
      "is reserved (the manual's field table: \"SW must write to 0, else "
      "behavior is undefined\"), and Linux's ivbep driver drops it too, so "
      "the SDK never sets it; {}",
      box.manual_name, instead);
}

std::string FormatInstances(const InstanceSet& set) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i < set.ids.size()) {
    size_t j = i;
    while (j + 1 < set.ids.size() && set.ids[j + 1] == set.ids[j] + 1) ++j;
    parts.push_back(j == i ? fmt::format("{}", set.ids[i])
                           : fmt::format("{}-{}", set.ids[i], set.ids[j]));
    i = j + 1;
  }
  return common::Join(parts, ",");
}

// Resolves a target name ("cbo", "uncore_cbox", "uncore_cbox_3") to a box
// and, for the kernel's per-instance PMU names, an instance.
const BoxDescriptor* ResolveBoxName(std::string_view name,
                                    std::optional<int>* instance) {
  if (const BoxDescriptor* box = ivytown::FindBox(name)) return box;
  // uncore_imc_2 and friends: strip a trailing _N.
  const size_t underscore = name.rfind('_');
  if (underscore == std::string_view::npos || underscore + 1 >= name.size()) {
    return nullptr;
  }
  std::string_view digits = name.substr(underscore + 1);
  int id = 0;
  auto [ptr, ec] =
      std::from_chars(digits.data(), digits.data() + digits.size(), id);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) return nullptr;
  const BoxDescriptor* box = ivytown::FindBox(name.substr(0, underscore));
  if (box != nullptr && common::StartsWithIgnoreCase(name, "uncore_")) {
    *instance = id;
    return box;
  }
  return nullptr;
}

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text), cur_(text) {}

  absl::StatusOr<Spec> ParseAny() {
    cur_.SkipSpaces();
    if (cur_.done()) return cur_.Error(0, "the spec is empty");
    const size_t start = cur_.pos();
    std::string_view target = cur_.Identifier(/*allow_dash=*/true);
    if (target.empty()) {
      return cur_.Error(start,
                        "expected a box name (cbo, imc, ...), a PMU name or "
                        "metric/NAME");
    }
    if (common::EqualsIgnoreCase(target, "metric") && cur_.peek() == '/') {
      cur_.Consume('/');
      UNCORE_ASSIGN_OR_RETURN(MetricSpec m, ParseMetric(cur_.pos()));
      return Spec{std::move(m)};
    }
    if (cur_.peek() == '.' || cur_.done() || cur_.peek() == ':') {
      // A bare metric name, possibly box-qualified ("r2pcie.CYC_USED_UPODD").
      UNCORE_ASSIGN_OR_RETURN(MetricSpec m, ParseMetric(start));
      return Spec{std::move(m)};
    }
    UNCORE_ASSIGN_OR_RETURN(EventSpec e, ParseEvent(target, start));
    return Spec{std::move(e)};
  }

 private:
  absl::StatusOr<MetricSpec> ParseMetric(size_t name_start) {
    MetricSpec spec;
    spec.text = std::string(text_);
    // NAME may be "box.NAME".
    size_t end = name_start;
    while (end < text_.size() &&
           (IsIdentChar(text_[end]) || text_[end] == '.')) {
      ++end;
    }
    std::string_view name = text_.substr(name_start, end - name_start);
    if (name.empty()) return cur_.Error(name_start, "expected a metric name");
    bool ambiguous = false;
    spec.metric = ivytown::FindMetric(name, &ambiguous);
    if (spec.metric == nullptr) {
      std::vector<std::string> candidates;
      std::vector<std::string> qualified;
      for (const ivytown::MetricDescriptor& m : ivytown::AllMetrics()) {
        candidates.emplace_back(m.name);
        std::string q = fmt::format("{}.{}", ivytown::Box(m.box).name, m.name);
        if (common::EqualsIgnoreCase(m.name, name)) qualified.push_back(q);
        candidates.push_back(std::move(q));
      }
      if (ambiguous) {
        return cur_.Error(
            name_start,
            fmt::format("metric '{}' is defined by several boxes; qualify it "
                        "as {}",
                        name, common::JoinAlternatives(qualified)));
      }
      if (const BoxDescriptor* box = ivytown::FindBox(name)) {
        return cur_.Error(
            name_start + name.size(),
            fmt::format("'{}' is a box: name an event as {}/EVENT "
                        "(`uncore list {}` shows them)",
                        name, box->name, box->name));
      }
      return cur_.Error(name_start,
                        fmt::format("unknown metric or box '{}'{}", name,
                                    DidYouMean(name, candidates)));
    }
    cur_.Seek(end);
    if (cur_.Consume(':')) {
      do {
        const size_t at = cur_.pos();
        std::string_view param = cur_.Identifier();
        if (!param.empty() && param[0] == '$') param.remove_prefix(1);
        const ivytown::MetricParameter* declared = nullptr;
        for (const ivytown::MetricParameter& p : spec.metric->params) {
          if (p.present() && common::EqualsIgnoreCase(p.name, param)) {
            declared = &p;
          }
        }
        if (declared == nullptr) {
          std::vector<std::string> names;
          for (const auto& p : spec.metric->params) {
            if (p.present()) names.emplace_back(p.name);
          }
          return cur_.Error(
              at,
              names.empty()
                  ? fmt::format("metric {} takes no parameters",
                                spec.metric->name)
                  : fmt::format("metric {} has no parameter '{}'; it takes {}",
                                spec.metric->name, param,
                                common::JoinAlternatives(names)));
        }
        if (!cur_.Consume('=')) {
          return cur_.Error(
              cur_.pos(),
              fmt::format("expected '=' and a value after '{}'", param));
        }
        const size_t value_at = cur_.pos();
        UNCORE_ASSIGN_OR_RETURN(uint64_t value,
                                cur_.Integer(std::string(declared->name)));
        if (value < static_cast<uint64_t>(declared->min_value) ||
            value > static_cast<uint64_t>(declared->max_value)) {
          return cur_.Error(
              value_at, fmt::format("{} must be in {}..{}", declared->name,
                                    declared->min_value, declared->max_value));
        }
        spec.params.emplace_back(std::string(declared->name),
                                 static_cast<int64_t>(value));
      } while (cur_.Consume(',') || cur_.Consume(':'));
    }
    cur_.SkipSpaces();
    if (!cur_.done()) {
      return cur_.Error(cur_.pos(), "unexpected text after the metric");
    }
    return spec;
  }

  absl::StatusOr<EventSpec> ParseEvent(std::string_view target,
                                       size_t target_at) {
    EventSpec spec;
    spec.text = std::string(text_);
    std::optional<int> kernel_instance;
    spec.box = ResolveBoxName(target, &kernel_instance);
    if (spec.box == nullptr) {
      // Not an IvyTown box: a generic perf PMU, kernel syntax only.
      // Perf's own syntax for other PMUs always closes with '/'.
      const bool perf_like = !common::StartsWithIgnoreCase(target, "uncore_") &&
                             cur_.peek() == '/' &&
                             common::StripWhitespace(text_).back() == '/';
      if (perf_like) {
        absl::StatusOr<EventSpec> perf = ParseGenericPerf(target);
        // Not valid perf syntax either: most likely a misspelt box.
        if (perf.ok() || common::ClosestNames(target, BoxNames(), 1).empty()) {
          return perf;
        }
      }
      return cur_.Error(
          target_at,
          fmt::format("unknown box '{}'{} (an event of another perf PMU is "
                      "written {}/EVENT/ or {}/field=value,.../, with the "
                      "closing '/')",
                      target, DidYouMean(target, BoxNames()), target, target));
    }
    // `uncore_imc_0/cas_count_read/`: a kernel event alias, not an IvyTown
    // event name: the perf backend resolves it from the PMU's events/.
    if (common::StartsWithIgnoreCase(target, "uncore_")) {
      const std::string_view rest =
          common::StripWhitespace(text_.substr(cur_.pos()));
      if (rest.size() > 2 && rest.front() == '/' && rest.back() == '/') {
        const std::string_view term = rest.substr(1, rest.size() - 2);
        const bool bare =
            term.find_first_of("=,.:/[|") == std::string_view::npos;
        const bool fixed =
            spec.box->fixed_counter &&
            common::EqualsIgnoreCase(spec.box->fixed_counter->name, term);
        if (bare && !fixed &&
            ivytown::FindEvent(spec.box->type, term) == nullptr) {
          return ParseGenericPerf(target);
        }
      }
    }
    if (kernel_instance) {
      if (*kernel_instance < 0 ||
          *kernel_instance >= spec.box->num_instances()) {
        return cur_.Error(target_at,
                          fmt::format("{} has instances 0-{}", spec.box->name,
                                      spec.box->num_instances() - 1));
      }
      spec.instances.ids.push_back(*kernel_instance);
    }
    if (cur_.peek() == '[') {
      if (kernel_instance) {
        return cur_.Error(cur_.pos(),
                          "an instance is already named by the PMU suffix");
      }
      UNCORE_RETURN_IF_ERROR(ParseInstances(*spec.box, &spec.instances));
    }
    if (!cur_.Consume('/')) {
      return cur_.Error(cur_.pos(),
                        fmt::format("expected '/' after '{}', as in {}/EVENT",
                                    target, spec.box->name));
    }
    // Kernel syntax: the body starts with "name=" (event=, umask=, ...).
    const size_t body_at = cur_.pos();
    cur_.Identifier();
    const bool raw = cur_.peek() == '=';
    cur_.Seek(body_at);
    if (raw) {
      UNCORE_RETURN_IF_ERROR(ParseRawBody(&spec));
    } else {
      UNCORE_RETURN_IF_ERROR(ParseNamedBody(&spec));
    }
    cur_.SkipSpaces();
    if (!cur_.done()) {
      return cur_.Error(cur_.pos(), "unexpected text after the event");
    }
    UNCORE_RETURN_IF_ERROR(CheckEvent(spec));
    return spec;
  }

  absl::Status ParseInstances(const BoxDescriptor& box, InstanceSet* set) {
    cur_.Consume('[');
    const int max = box.num_instances() - 1;
    do {
      cur_.SkipSpaces();
      const size_t at = cur_.pos();
      UNCORE_ASSIGN_OR_RETURN(uint64_t lo, cur_.Integer("an instance number"));
      uint64_t hi = lo;
      if (cur_.Consume('-')) {
        UNCORE_ASSIGN_OR_RETURN(hi, cur_.Integer("an instance number"));
      }
      if (hi < lo) {
        return cur_.Error(at, fmt::format("range {}-{} is backwards", lo, hi));
      }
      if (hi > static_cast<uint64_t>(max)) {
        return cur_.Error(at, fmt::format("{} has instances 0-{}; {} is out of "
                                          "range",
                                          box.name, max, hi));
      }
      for (uint64_t i = lo; i <= hi; ++i) {
        set->ids.push_back(static_cast<int>(i));
      }
      cur_.SkipSpaces();
    } while (cur_.Consume(','));
    if (!cur_.Consume(']')) {
      return cur_.Error(cur_.pos(), "expected ',' or ']' in the instance list");
    }
    std::sort(set->ids.begin(), set->ids.end());
    set->ids.erase(std::unique(set->ids.begin(), set->ids.end()),
                   set->ids.end());
    // Naming every instance is the same as naming none.
    if (static_cast<int>(set->ids.size()) == box.num_instances()) {
      set->ids.clear();
    }
    return absl::OkStatus();
  }

  absl::Status ParseNamedBody(EventSpec* spec) {
    const BoxDescriptor& box = *spec->box;
    const size_t at = cur_.pos();
    std::string_view name = cur_.Identifier();
    if (name.empty()) {
      return cur_.Error(
          at, fmt::format("expected an event name after '{}/'", box.name));
    }
    if (box.fixed_counter &&
        common::EqualsIgnoreCase(name, box.fixed_counter->name)) {
      spec->kind = EventSpec::Kind::kFixedCounter;
      if (cur_.peek() == '.') {
        return cur_.Error(cur_.pos(), fmt::format("the fixed counter {} has "
                                                  "no unit masks",
                                                  box.fixed_counter->name));
      }
      if (cur_.peek() == ':' || cur_.peek() == ',') {
        return cur_.Error(cur_.pos(),
                          fmt::format("the fixed counter {} takes no modifiers",
                                      box.fixed_counter->name));
      }
      return absl::OkStatus();
    }
    spec->event = ivytown::FindEvent(box.type, name);
    if (spec->event == nullptr) {
      return cur_.Error(at,
                        fmt::format("unknown {} event '{}'{}", box.name, name,
                                    DidYouMean(name, EventNames(box))));
    }
    spec->code = spec->event->code;
    spec->extended = spec->event->extended;
    if (cur_.Consume('.')) {
      do {
        const size_t umask_at = cur_.pos();
        std::string_view umask_name = cur_.Identifier();
        if (umask_name.empty()) {
          return cur_.Error(umask_at, "expected a unit-mask name");
        }
        const UmaskDescriptor* u = spec->event->FindUmask(umask_name);
        if (u == nullptr) {
          if (!spec->event->has_umasks()) {
            return cur_.Error(umask_at,
                              fmt::format("{}/{} has no unit masks", box.name,
                                          spec->event->name));
          }
          return cur_.Error(
              umask_at,
              fmt::format("{}/{} has no unit mask '{}'{}", box.name,
                          spec->event->name, umask_name,
                          DidYouMean(umask_name, UmaskNames(*spec->event))));
        }
        spec->umasks.push_back(u);
        spec->umask |= u->value;
      } while (cur_.Consume('|'));
    }
    if (cur_.Consume(':') || cur_.Consume(',')) {
      UNCORE_RETURN_IF_ERROR(ParseTerms(spec, /*raw=*/false));
    }
    return absl::OkStatus();
  }

  absl::Status ParseRawBody(EventSpec* spec) {
    UNCORE_RETURN_IF_ERROR(ParseTerms(spec, /*raw=*/true));
    cur_.Consume('/');
    return absl::OkStatus();
  }

  // Parses `name[=value]` terms separated by ',' (or ':' in named bodies).
  absl::Status ParseTerms(EventSpec* spec, bool raw) {
    const BoxDescriptor& box = *spec->box;
    bool saw_event = !raw;
    std::optional<uint64_t> raw_umask;
    do {
      cur_.SkipSpaces();
      const size_t at = cur_.pos();
      std::string_view name = cur_.Identifier();
      if (name.empty()) {
        return cur_.Error(at, raw ? "expected a term such as event=0x04"
                                  : "expected a modifier such as thresh=1");
      }
      std::optional<uint64_t> value;
      size_t value_at = cur_.pos();
      if (cur_.Consume('=')) {
        value_at = cur_.pos();
        UNCORE_ASSIGN_OR_RETURN(uint64_t v, cur_.Integer(std::string(name)));
        value = v;
      }
      if (common::EqualsIgnoreCase(name, "event") ||
          common::EqualsIgnoreCase(name, "umask")) {
        if (!raw) {
          if (common::EqualsIgnoreCase(name, "umask") && value) {
            raw_umask = value;
            continue;
          }
          return cur_.Error(
              at,
              fmt::format("'{}' is given by the event name; "
                          "use either {}/{} or the kernel "
                          "syntax {}/event=...",
                          name, box.name,
                          spec->event ? spec->event->name : "EVENT", box.name));
        }
        if (!value) {
          return cur_.Error(value_at, fmt::format("'{}' needs a value", name));
        }
        if (common::EqualsIgnoreCase(name, "event")) {
          const bool has_ext =
              box.FindRole(ivytown::FieldRole::kExtendedSelect) != nullptr;
          if (*value == kKernelFixedCounterEvent && box.fixed_counter) {
            spec->kind = EventSpec::Kind::kFixedCounter;
          } else if (*value > (has_ext ? 0x1ffu : 0xffu)) {
            return cur_.Error(
                value_at,
                fmt::format("event {} does not fit: {} event codes are {} bits",
                            Hex(*value), box.name, has_ext ? 9 : 8));
          }
          spec->code = static_cast<uint8_t>(*value & 0xff);
          spec->extended = (*value & 0x100) != 0;
          saw_event = true;
        } else {
          raw_umask = value;
        }
        continue;
      }
      const FieldDescriptor* field = FindFieldIgnoreCase(box, name);
      if (field == nullptr && common::EqualsIgnoreCase(name, "inv")) {
        return cur_.Error(at, NoInvert(*spec));
      }
      if (field == nullptr || field->use == FieldUse::kEvent) {
        return cur_.Error(
            at, fmt::format("{} has no modifier '{}'{}", box.name, name,
                            DidYouMean(name, ModifierNames(box))));
      }
      if (field->use == FieldUse::kEngine) {
        return cur_.Error(at, fmt::format("'{}' is programmed by the SDK "
                                          "itself and cannot be set in a spec",
                                          name));
      }
      if (!value) {
        if (!field->is_flag) {
          return cur_.Error(cur_.pos(),
                            fmt::format("'{}' needs a value, as in {}=1",
                                        field->name, field->name));
        }
        value = 1;
      }
      if (*value > field->bits.max_value()) {
        return cur_.Error(
            value_at,
            fmt::format("{}={} does not fit in the {}-bit field {} (max {})",
                        field->name, Hex(*value), field->bits.width,
                        field->manual_name, Hex(field->bits.max_value())));
      }
      for (const FieldSetting& existing : spec->modifiers) {
        if (existing.field == field) {
          return cur_.Error(at,
                            fmt::format("'{}' is given twice", field->name));
        }
      }
      spec->modifiers.push_back({field, *value});
    } while (cur_.Consume(',') || (!raw && cur_.Consume(':')));
    if (!saw_event && spec->kind != EventSpec::Kind::kFixedCounter) {
      return cur_.Error(cur_.pos(), "the kernel syntax needs event=CODE");
    }
    if (raw_umask) {
      if (*raw_umask > 0xff) {
        return cur_.Error(cur_.pos(), fmt::format("umask {} does not fit in 8 "
                                                  "bits",
                                                  Hex(*raw_umask)));
      }
      if (!raw && !spec->umasks.empty()) {
        return cur_.Error(cur_.pos(),
                          "give either .UMASK names or umask=, "
                          "not both");
      }
      spec->umask = static_cast<uint8_t>(*raw_umask);
    }
    if (raw && spec->kind == EventSpec::Kind::kBoxEvent) {
      spec->event =
          ivytown::FindEventByCode(box.type, spec->code, spec->extended);
      if (spec->event != nullptr) {
        for (const UmaskDescriptor& u : spec->event->umasks) {
          if (u.value == spec->umask) spec->umasks.push_back(&u);
        }
      }
    }
    if (spec->kind == EventSpec::Kind::kFixedCounter &&
        (raw_umask.value_or(0) != 0 || !spec->modifiers.empty())) {
      return cur_.Error(cur_.pos(),
                        "the fixed counter takes no umask or "
                        "modifiers");
    }
    return absl::OkStatus();
  }

  // Semantic checks that need the whole event.
  absl::Status CheckEvent(const EventSpec& spec) {
    if (spec.kind != EventSpec::Kind::kBoxEvent || spec.event == nullptr) {
      return absl::OkStatus();
    }
    const EventDescriptor& event = *spec.event;
    const std::string name = fmt::format("{}/{}", spec.box->name, event.name);
    if (!event.has_umasks() && spec.umask != 0) {
      return cur_.Error(0, fmt::format("{} has no unit masks, but umask={} was "
                                       "given",
                                       name, Hex(spec.umask)));
    }
    if (event.has_umasks()) {
      uint8_t all = 0;
      bool exact = false;
      for (const UmaskDescriptor& u : event.umasks) {
        all |= u.value;
        exact = exact || u.value == spec.umask;
      }
      // Where the manual lists the event without unit masks and only Intel's
      // list adds some, the bare event is what the manual documents.
      bool manual_has_umasks = false;
      for (const UmaskDescriptor& u : event.umasks) {
        manual_has_umasks =
            manual_has_umasks || (u.sources & ivytown::kFromManual);
      }
      const bool bare_allowed =
          (event.sources & ivytown::kFromManual) && !manual_has_umasks;
      if (spec.umask == 0 && !exact && !bare_allowed) {
        return cur_.Error(
            0, fmt::format("{} needs a unit mask, for example {}.{} (one of "
                           "{})",
                           name, name, event.umasks[0].name,
                           common::JoinAlternatives(UmaskNames(event))));
      }
      if (!exact && (spec.umask & ~all) != 0) {
        return cur_.Error(
            0, fmt::format("umask {} is not valid for {}: its bits {} belong "
                           "to no unit mask (valid bits {})",
                           Hex(spec.umask), name, Hex(spec.umask & ~all),
                           Hex(all)));
      }
    }
    // Filters the event (or one of its unit masks) depends on.
    std::vector<std::string_view> needed;
    auto add_needed = [&](std::span<const std::string_view> list) {
      for (std::string_view f : list) {
        if (spec.box->FindField(f) != nullptr) needed.push_back(f);
      }
    };
    add_needed(event.filters);
    for (const UmaskDescriptor* u : spec.umasks) add_needed(u->filters);
    if (!needed.empty()) {
      // A needed field is set when a modifier covers any of its bits: the
      // QPI's whole-register match0 ... mask1 are set by their sub-fields
      // (match_opc, mask_rds, ...) too.
      bool any = false;
      for (std::string_view name : needed) {
        const FieldDescriptor& f = *spec.box->FindField(name);
        for (const FieldSetting& m : spec.modifiers) {
          any = any || (m.field->reg == f.reg && m.field->filter == f.filter &&
                        (m.field->bits.mask() & f.bits.mask()) != 0);
        }
      }
      if (!any) {
        std::vector<std::string> names(needed.begin(), needed.end());
        std::sort(names.begin(), names.end());
        names.erase(std::unique(names.begin(), names.end()), names.end());
        return cur_.Error(
            text_.size(),
            fmt::format("{} counts nothing useful unless its filter is set: "
                        "add {}",
                        name,
                        common::JoinAlternatives(std::vector<std::string>(
                            names.begin(), names.end()))) +
                (names.size() > 1 ? " (one or more)" : "") +
                fmt::format(", e.g. {}:{}=0x...", spec.Canonical(), names[0]));
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<EventSpec> ParseGenericPerf(std::string_view pmu) {
    EventSpec spec;
    spec.kind = EventSpec::Kind::kGenericPerf;
    spec.text = std::string(text_);
    spec.pmu = std::string(pmu);
    cur_.Consume('/');
    if (cur_.peek() == '/' || cur_.done()) {
      return cur_.Error(cur_.pos(),
                        fmt::format("expected an event alias or terms after "
                                    "'{}/'",
                                    pmu));
    }
    do {
      const size_t at = cur_.pos();
      std::string_view name = cur_.Identifier(/*allow_dash=*/true);
      if (name.empty()) {
        return cur_.Error(at, "expected an event alias or a term name");
      }
      PerfTerm term{std::string(name), std::nullopt};
      if (cur_.Consume('=')) {
        UNCORE_ASSIGN_OR_RETURN(uint64_t v, cur_.Integer(std::string(name)));
        term.value = v;
      }
      spec.perf_terms.push_back(std::move(term));
    } while (cur_.Consume(','));
    if (!cur_.Consume('/')) {
      return cur_.Error(cur_.pos(),
                        "expected ',' or the closing '/' of the perf event");
    }
    cur_.SkipSpaces();
    if (!cur_.done()) {
      return cur_.Error(cur_.pos(), "unexpected text after the perf event");
    }
    return spec;
  }

  std::string_view text_;
  Cursor cur_;
};

}  // namespace

std::string InstanceSet::ToString() const {
  return all() ? "all" : FormatInstances(*this);
}

bool InstanceSet::Contains(int id) const {
  return all() || std::binary_search(ids.begin(), ids.end(), id);
}

std::optional<uint64_t> EventSpec::Modifier(std::string_view name) const {
  for (const FieldSetting& m : modifiers) {
    if (m.field->name == name) return m.value;
  }
  return std::nullopt;
}

std::string EventSpec::Canonical() const {
  if (kind == Kind::kGenericPerf) {
    std::vector<std::string> terms;
    for (const PerfTerm& t : perf_terms) {
      terms.push_back(t.value ? fmt::format("{}={}", t.name, Hex(*t.value))
                              : t.name);
    }
    return fmt::format("{}/{}/", pmu, common::Join(terms, ","));
  }
  if (box == nullptr) return text;
  std::string out(box->name);
  if (!instances.all()) out += fmt::format("[{}]", FormatInstances(instances));
  out += "/";
  if (kind == Kind::kFixedCounter) {
    out += box->fixed_counter->name;
    return out;
  }
  std::vector<std::string> mods;
  if (event != nullptr) {
    out += event->name;
    // Name the unit masks when they spell the value exactly.
    uint8_t named = 0;
    for (const auto* u : umasks) named |= u->value;
    if (!umasks.empty() && named == umask) {
      std::vector<std::string> names;
      for (const auto* u : umasks) names.emplace_back(u->name);
      absl::StrAppend(&out, ".", common::Join(names, "|"));
    } else if (umask != 0) {
      mods.push_back(absl::StrCat("umask=", Hex(umask)));
    }
  } else {
    // A raw code the catalog does not know: kernel syntax.
    std::vector<std::string> terms;
    terms.push_back(absl::StrCat("event=", Hex(code | (extended ? 0x100 : 0))));
    if (umask != 0) terms.push_back(absl::StrCat("umask=", Hex(umask)));
    for (const FieldSetting& m : modifiers) {
      terms.push_back(fmt::format("{}={}", m.field->name, Hex(m.value)));
    }
    return out + common::Join(terms, ",") + "/";
  }
  for (const FieldSetting& m : modifiers) {
    mods.push_back(m.field->is_flag && m.value == 1
                       ? std::string(m.field->name)
                       : fmt::format("{}={}", m.field->name, Hex(m.value)));
  }
  if (!mods.empty()) absl::StrAppend(&out, ":", common::Join(mods, ","));
  return out;
}

std::string MetricSpec::Canonical() const {
  std::string out =
      fmt::format("metric/{}.{}", ivytown::Box(metric->box).name, metric->name);
  std::vector<std::string> parts;
  for (const auto& [name, value] : params) {
    parts.push_back(fmt::format("{}={}", name, value));
  }
  if (!parts.empty()) absl::StrAppend(&out, ":", common::Join(parts, ","));
  return out;
}

absl::StatusOr<Spec> ParseSpec(std::string_view text) {
  return Parser(text).ParseAny();
}

absl::StatusOr<MetricSpec> ParseMetricName(std::string_view text) {
  std::string full;
  if (!common::StartsWithIgnoreCase(text, "metric/")) full = "metric/";
  full.append(text);
  UNCORE_ASSIGN_OR_RETURN(Spec spec, ParseSpec(full));
  if (!spec.is_metric()) {
    return absl::InvalidArgumentError(fmt::format(
        "'{}' is not a metric (`uncore list --metrics` lists them)", text));
  }
  return std::get<MetricSpec>(std::move(spec.value));
}

absl::StatusOr<EventSpec> ParseEventSpec(std::string_view text) {
  UNCORE_ASSIGN_OR_RETURN(Spec spec, ParseSpec(text));
  if (spec.is_metric()) {
    return Cursor::ErrorAt(text, 0,
                           "this is a metric; an event spec was expected");
  }
  return std::get<EventSpec>(std::move(spec.value));
}

std::vector<std::string> SplitSpecList(std::string_view list) {
  std::vector<std::string> out;
  std::string current;
  auto flush = [&] {
    std::string_view trimmed = common::StripWhitespace(current);
    if (!trimmed.empty()) out.emplace_back(trimmed);
    current.clear();
  };
  // Inside `pmu/ ... /` (kernel syntax) commas never split.
  auto in_kernel_body = [&] {
    return std::count(current.begin(), current.end(), '/') == 1 &&
           current.find('=') != std::string::npos &&
           current.find(':') == std::string::npos;
  };
  auto starts_spec = [](std::string_view rest) {
    rest = common::StripWhitespace(rest);
    // A trailing comma, or one before ';', only ends the current spec.
    if (rest.empty() || rest[0] == ';' || rest[0] == ',') return true;
    size_t i = 0;
    while (i < rest.size() && IsIdentChar(rest[i])) ++i;
    if (i == 0) return false;
    if (i < rest.size() && (rest[i] == '/' || rest[i] == '[')) return true;
    // A metric name, bare or box-qualified ("r2pcie.CYC_USED_UPODD").
    size_t j = i;
    while (j < rest.size() && (IsIdentChar(rest[j]) || rest[j] == '.')) ++j;
    bool ambiguous = false;
    return ivytown::FindMetric(rest.substr(0, j), &ambiguous) != nullptr ||
           ambiguous || j > i;
  };
  for (size_t i = 0; i < list.size(); ++i) {
    const char c = list[i];
    const bool ends_spec =
        c == ';' || c == '\n' ||
        (c == ',' && !in_kernel_body() && starts_spec(list.substr(i + 1)));
    if (ends_spec) {
      flush();
    } else {
      current += c;
    }
  }
  flush();
  return out;
}

}  // namespace uncore::spec
