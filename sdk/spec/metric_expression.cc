#include "sdk/spec/metric_expression.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "sdk/common/nesting.h"
#include "sdk/common/status_macros.h"
#include "sdk/common/text.h"

namespace uncore::spec {
namespace {

using Node = CompiledMetric::Node;
using Op = CompiledMetric::Node::Op;
using Params = std::vector<std::pair<std::string, int64_t>>;

constexpr int kMaxMetricDepth = 8;
// Parentheses, unary minuses and round() nested in one expression, with the
// metrics it refers to: each level recurses, and a bound keeps an
// expression of thousands of '(' from overflowing the stack.
constexpr int kMaxNesting = 128;

absl::Status ExprError(std::string_view text, size_t at, std::string_view why) {
  at = std::min(at, text.size());
  return absl::InvalidArgumentError(
      fmt::format("invalid metric expression \"{}\" at column {}: {}\n  {}\n  "
                  "{}^",
                  text, at + 1, why, text, std::string(at, ' ')));
}

bool IsIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Replaces every `$name` by its value (params first, then the metric's
// declared defaults).
absl::StatusOr<std::string> SubstituteParams(
    std::string_view text, const ivytown::MetricDescriptor* metric,
    const Params& params) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '$') {
      out += text[i];
      continue;
    }
    size_t j = i + 1;
    while (j < text.size() && IsIdentChar(text[j])) ++j;
    std::string_view name = text.substr(i + 1, j - i - 1);
    bool found = false;
    for (const auto& [pname, value] : params) {
      if (common::EqualsIgnoreCase(pname, name)) {
        out += fmt::format("{}", value);
        found = true;
        break;
      }
    }
    if (!found && metric != nullptr) {
      for (const ivytown::MetricParameter& p : metric->params) {
        if (p.present() && common::EqualsIgnoreCase(p.name, name)) {
          out += fmt::format("{}", p.default_value);
          found = true;
          break;
        }
      }
    }
    if (!found) {
      return ExprError(text, i,
                       fmt::format("no value for parameter ${}", name));
    }
    i = j - 1;
  }
  return out;
}

class ExpressionCompiler {
 public:
  explicit ExpressionCompiler(CompiledMetric* out) : out_(out) {}

  // Compiles `text` (already substituted) and returns the root node.
  absl::StatusOr<int> Compile(std::string_view text,
                              ivytown::BoxType context_box,
                              const ivytown::MetricDescriptor* metric,
                              const Params& params, int depth) {
    Frame frame{text, 0, context_box, metric, &params, depth};
    UNCORE_ASSIGN_OR_RETURN(int root, ParseSum(frame));
    SkipSpaces(frame);
    if (frame.pos < text.size()) {
      return ExprError(text, frame.pos, "unexpected text");
    }
    return root;
  }

 private:
  struct Frame {
    std::string_view text;
    size_t pos;
    ivytown::BoxType box;
    const ivytown::MetricDescriptor* metric;
    const Params* params;
    int depth;
  };

  static void SkipSpaces(Frame& f) {
    while (f.pos < f.text.size() &&
           std::isspace(static_cast<unsigned char>(f.text[f.pos]))) {
      ++f.pos;
    }
  }
  static bool Consume(Frame& f, char c) {
    SkipSpaces(f);
    if (f.pos < f.text.size() && f.text[f.pos] == c) {
      ++f.pos;
      return true;
    }
    return false;
  }

  int Add(Node node) {
    out_->nodes.push_back(node);
    return static_cast<int>(out_->nodes.size()) - 1;
  }

  absl::StatusOr<int> ParseSum(Frame& f) {
    UNCORE_ASSIGN_OR_RETURN(int lhs, ParseProduct(f));
    while (true) {
      Op op;
      if (Consume(f, '+')) {
        op = Op::kAdd;
      } else if (Consume(f, '-')) {
        op = Op::kSub;
      } else {
        return lhs;
      }
      UNCORE_ASSIGN_OR_RETURN(int rhs, ParseProduct(f));
      lhs = Add({op, 0, -1, lhs, rhs});
    }
  }

  absl::StatusOr<int> ParseProduct(Frame& f) {
    UNCORE_ASSIGN_OR_RETURN(int lhs, ParseUnary(f));
    while (true) {
      Op op;
      if (Consume(f, '*')) {
        op = Op::kMul;
      } else if (Consume(f, '/')) {
        op = Op::kDiv;
      } else {
        return lhs;
      }
      UNCORE_ASSIGN_OR_RETURN(int rhs, ParseUnary(f));
      lhs = Add({op, 0, -1, lhs, rhs});
    }
  }

  absl::StatusOr<int> ParseUnary(Frame& f) {
    // Every recursion of the parser passes here.
    const common::NestingLevel nesting(&nesting_);
    if (nesting_ > kMaxNesting) {
      return ExprError(f.text, f.pos,
                       fmt::format("nested more than {} deep", kMaxNesting));
    }
    if (Consume(f, '-')) {
      UNCORE_ASSIGN_OR_RETURN(int operand, ParseUnary(f));
      return Add({Op::kNegate, 0, operand, -1, -1});
    }
    return ParsePrimary(f);
  }

  absl::StatusOr<int> ParsePrimary(Frame& f) {
    SkipSpaces(f);
    if (f.pos >= f.text.size()) {
      return ExprError(f.text, f.pos, "expected a number, {EVENT} or a name");
    }
    const char c = f.text[f.pos];
    if (c == '(') {
      ++f.pos;
      UNCORE_ASSIGN_OR_RETURN(int inner, ParseSum(f));
      if (!Consume(f, ')')) return ExprError(f.text, f.pos, "expected ')'");
      return inner;
    }
    if (c == '{') return ParseEvent(f);
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      return ParseNumber(f);
    }
    if (IsIdentChar(c)) return ParseName(f);
    return ExprError(f.text, f.pos, fmt::format("unexpected '{}'", c));
  }

  absl::StatusOr<int> ParseNumber(Frame& f) {
    const size_t start = f.pos;
    if (f.text.substr(f.pos, 2) == "0x" || f.text.substr(f.pos, 2) == "0X") {
      f.pos += 2;
      const size_t digits = f.pos;
      while (f.pos < f.text.size() &&
             std::isxdigit(static_cast<unsigned char>(f.text[f.pos]))) {
        ++f.pos;
      }
      uint64_t v = 0;
      auto [ptr, ec] =
          std::from_chars(f.text.data() + digits, f.text.data() + f.pos, v, 16);
      if (ec != std::errc() || f.pos == digits) {
        return ExprError(f.text, start, "bad hexadecimal number");
      }
      (void)ptr;
      return Add({Op::kConstant, static_cast<double>(v), -1, -1, -1});
    }
    while (f.pos < f.text.size() &&
           (std::isdigit(static_cast<unsigned char>(f.text[f.pos])) ||
            f.text[f.pos] == '.')) {
      ++f.pos;
    }
    if (f.pos < f.text.size() &&
        (f.text[f.pos] == 'e' || f.text[f.pos] == 'E')) {
      ++f.pos;
      if (f.pos < f.text.size() &&
          (f.text[f.pos] == '+' || f.text[f.pos] == '-')) {
        ++f.pos;
      }
      while (f.pos < f.text.size() &&
             std::isdigit(static_cast<unsigned char>(f.text[f.pos]))) {
        ++f.pos;
      }
    }
    const std::string number(f.text.substr(start, f.pos - start));
    char* end = nullptr;
    const double v = std::strtod(number.c_str(), &end);
    if (end != number.c_str() + number.size()) {
      return ExprError(f.text, start, fmt::format("bad number '{}'", number));
    }
    return Add({Op::kConstant, v, -1, -1, -1});
  }

  absl::StatusOr<int> ParseEvent(Frame& f) {
    const size_t open = f.pos++;
    const size_t close = f.text.find('}', f.pos);
    if (close == std::string_view::npos) {
      return ExprError(f.text, open, "'{' without a closing '}'");
    }
    std::string_view text = f.text.substr(f.pos, close - f.pos);
    f.pos = close + 1;
    absl::StatusOr<EventSpec> spec = ParseEventSpec(text);
    if (!spec.ok()) {
      return ExprError(f.text, open + 1,
                       fmt::format("in event {{{}}}: {}", text,
                                   common::StatusMessage(spec.status())));
    }
    const std::string canonical = spec->Canonical();
    for (size_t i = 0; i < out_->events.size(); ++i) {
      if (out_->events[i].Canonical() == canonical) {
        return Add({Op::kEvent, 0, static_cast<int>(i), -1, -1});
      }
    }
    out_->events.push_back(*std::move(spec));
    return Add(
        {Op::kEvent, 0, static_cast<int>(out_->events.size()) - 1, -1, -1});
  }

  absl::StatusOr<int> ParseName(Frame& f) {
    const size_t start = f.pos;
    while (f.pos < f.text.size() &&
           (IsIdentChar(f.text[f.pos]) || f.text[f.pos] == '.')) {
      ++f.pos;
    }
    std::string_view name = f.text.substr(start, f.pos - start);
    if (common::EqualsIgnoreCase(name, "ELAPSED_SECONDS")) {
      return Add({Op::kElapsed, 0, -1, -1, -1});
    }
    if (common::EqualsIgnoreCase(name, "round")) {
      if (!Consume(f, '(')) return ExprError(f.text, f.pos, "expected '('");
      UNCORE_ASSIGN_OR_RETURN(int inner, ParseSum(f));
      if (!Consume(f, ')')) return ExprError(f.text, f.pos, "expected ')'");
      return Add({Op::kRound, 0, inner, -1, -1});
    }
    // Another metric: same box first, then any box.
    const ivytown::MetricDescriptor* ref = ivytown::FindMetric(
        fmt::format("{}.{}", ivytown::Box(f.box).name, name));
    bool ambiguous = false;
    if (ref == nullptr) ref = ivytown::FindMetric(name, &ambiguous);
    if (ref == nullptr) {
      return ExprError(f.text, start,
                       ambiguous
                           ? fmt::format("metric '{}' is ambiguous; qualify it "
                                         "with its box",
                                         name)
                           : fmt::format("unknown name '{}' (not a metric, "
                                         "ELAPSED_SECONDS or round)",
                                         name));
    }
    if (f.depth >= kMaxMetricDepth) {
      return ExprError(f.text, start,
                       fmt::format("metric '{}' nests more than {} deep (a "
                                   "cycle?)",
                                   name, kMaxMetricDepth));
    }
    UNCORE_ASSIGN_OR_RETURN(std::string expanded,
                            SubstituteParams(ref->expression, ref, *f.params));
    absl::StatusOr<int> inner =
        Compile(expanded, ref->box, ref, *f.params, f.depth + 1);
    if (!inner.ok()) {
      return ExprError(f.text, start,
                       fmt::format("in metric {}: {}", ref->name,
                                   common::StatusMessage(inner.status())));
    }
    return *inner;
  }

  CompiledMetric* out_;
  int nesting_ = 0;
};

}  // namespace

double CompiledMetric::Evaluate(std::span<const double> event_values,
                                double elapsed_seconds) const {
  // Nodes are created children-first, so one forward pass evaluates them.
  // A fixed-size stack buffer covers every metric in the table; larger ad hoc
  // expressions fall back to recursion-free evaluation over a small heap
  // buffer made once per call.
  constexpr size_t kInline = 128;
  // Zeroed: GCC 14 cannot see that each value is written before it is read.
  double inline_values[kInline] = {};
  std::vector<double> heap_values;
  double* values = inline_values;
  if (nodes.size() > kInline) {
    heap_values.resize(nodes.size());
    values = heap_values.data();
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    double v = 0;
    switch (n.op) {
      case Node::Op::kConstant:
        v = n.constant;
        break;
      case Node::Op::kEvent:
        v = static_cast<size_t>(n.index) < event_values.size()
                ? event_values[n.index]
                : nan;
        break;
      case Node::Op::kElapsed:
        v = elapsed_seconds;
        break;
      case Node::Op::kAdd:
        v = values[n.lhs] + values[n.rhs];
        break;
      case Node::Op::kSub:
        v = values[n.lhs] - values[n.rhs];
        break;
      case Node::Op::kMul:
        v = values[n.lhs] * values[n.rhs];
        break;
      case Node::Op::kDiv:
        v = values[n.rhs] == 0 ? nan : values[n.lhs] / values[n.rhs];
        break;
      case Node::Op::kNegate:
        v = -values[n.index];
        break;
      case Node::Op::kRound:
        v = std::round(values[n.index]);
        break;
    }
    values[i] = v;
  }
  return root >= 0 ? values[root] : nan;
}

absl::StatusOr<CompiledMetric> CompileExpression(std::string_view expression,
                                                 ivytown::BoxType context_box,
                                                 const Params& params) {
  CompiledMetric out;
  out.name = std::string(expression);
  UNCORE_ASSIGN_OR_RETURN(out.expression,
                          SubstituteParams(expression, nullptr, params));
  ExpressionCompiler compiler(&out);
  UNCORE_ASSIGN_OR_RETURN(
      out.root,
      compiler.Compile(out.expression, context_box, nullptr, params, 0));
  return out;
}

absl::StatusOr<CompiledMetric> CompileMetric(const MetricSpec& spec) {
  const ivytown::MetricDescriptor& m = *spec.metric;
  CompiledMetric out;
  out.metric = &m;
  out.name = std::string(m.name);
  // The entries of a parameterised metric differ by their parameters, and
  // so do their names in reports: "PCT_CYCLES_DRAM_RANKx_IN_CKE:x=1".
  for (size_t i = 0; i < spec.params.size(); ++i) {
    out.name += fmt::format("{}{}={}", i == 0 ? ":" : ",", spec.params[i].first,
                            spec.params[i].second);
  }
  out.unit = std::string(m.unit);
  out.per_second = m.rate_per_second;
  UNCORE_ASSIGN_OR_RETURN(out.expression,
                          SubstituteParams(m.expression, &m, spec.params));
  ExpressionCompiler compiler(&out);
  absl::StatusOr<int> root =
      compiler.Compile(out.expression, m.box, &m, spec.params, 1);
  if (!root.ok()) {
    return absl::InvalidArgumentError(fmt::format(
        "metric {}: {}", m.name, common::StatusMessage(root.status())));
  }
  out.root = *root;
  return out;
}

}  // namespace uncore::spec
