#include "sdk/spec/perf_metric.h"

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "sdk/common/nesting.h"
#include "sdk/common/status_macros.h"
#include "sdk/common/text.h"

namespace uncore::spec {
namespace {

using Node = CompiledMetric::Node;
using Op = CompiledMetric::Node::Op;

// "cha@UNC_CHA_TOR_INSERTS.IA_MISS\,config1\=0x40433@" ->
// "UNC_CHA_TOR_INSERTS.IA_MISS,config1=0x40433" (what Metric::uncore_events
// writes), lower case.
std::string EventKey(std::string_view text) {
  if (size_t at = text.find('@'); at != std::string_view::npos) {
    text.remove_prefix(at + 1);
    if (text.ends_with('@')) text.remove_suffix(1);
  }
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size()) ++i;
    if (text[i] == ' ') continue;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
  }
  return out;
}

// Parentheses and unary minuses nested in one formula: each level recurses,
// and a bound keeps a formula of thousands of '(' from overflowing the
// stack (the vendors' formulas nest a few deep).
constexpr int kMaxNesting = 128;

bool IsOperator(char c) {
  return c == '(' || c == ')' || c == '+' || c == '-' || c == '*' || c == '/' ||
         c == ',';
}

// A recursive-descent compiler for perf's metric formulas.
class FormulaCompiler {
 public:
  FormulaCompiler(const Resolution& resolution,
                  const PerfMetricContext& context, CompiledMetric* out)
      : resolution_(resolution), context_(context), out_(out) {
    for (std::string_view key :
         common::Split(resolution.metric->uncore_events, ' ', true)) {
      keys_.push_back(EventKey(key));
    }
  }

  absl::StatusOr<int> Compile(std::string_view text) {
    text_ = text;
    pos_ = 0;
    UNCORE_ASSIGN_OR_RETURN(int root, Sum());
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected text");
    return root;
  }

 private:
  absl::Status Error(std::string_view why) const {
    return absl::InternalError(fmt::format(
        "metric {} (\"{}\"): {} at column {}: regenerate the tables "
        "(tools/gen_perfmon_platforms.py) or report the formula",
        resolution_.name, text_, why, pos_ + 1));
  }

  void SkipSpace() {
    while (pos_ < text_.size() &&
           std::isspace(static_cast<unsigned char>(text_[pos_]))) {
      ++pos_;
    }
  }
  bool Accept(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  int Add(Node n) {
    out_->nodes.push_back(n);
    return static_cast<int>(out_->nodes.size() - 1);
  }
  int Constant(double v) {
    Node n;
    n.op = Op::kConstant;
    n.constant = v;
    return Add(n);
  }
  int Binary(Op op, int lhs, int rhs) {
    Node n;
    n.op = op;
    n.lhs = lhs;
    n.rhs = rhs;
    return Add(n);
  }

  absl::StatusOr<int> Sum() {
    UNCORE_ASSIGN_OR_RETURN(int lhs, Product());
    while (true) {
      if (Accept('+')) {
        UNCORE_ASSIGN_OR_RETURN(int rhs, Product());
        lhs = Binary(Op::kAdd, lhs, rhs);
      } else if (Accept('-')) {
        UNCORE_ASSIGN_OR_RETURN(int rhs, Product());
        lhs = Binary(Op::kSub, lhs, rhs);
      } else {
        return lhs;
      }
    }
  }
  absl::StatusOr<int> Product() {
    UNCORE_ASSIGN_OR_RETURN(int lhs, Unary());
    while (true) {
      if (Accept('*')) {
        UNCORE_ASSIGN_OR_RETURN(int rhs, Unary());
        lhs = Binary(Op::kMul, lhs, rhs);
      } else if (Accept('/')) {
        UNCORE_ASSIGN_OR_RETURN(int rhs, Unary());
        lhs = Binary(Op::kDiv, lhs, rhs);
      } else {
        return lhs;
      }
    }
  }
  absl::StatusOr<int> Unary() {
    // Every recursion of the compiler passes here.
    const common::NestingLevel nesting(&nesting_);
    if (nesting_ > kMaxNesting) {
      return Error(fmt::format("nested more than {} deep", kMaxNesting));
    }
    if (Accept('-')) {
      UNCORE_ASSIGN_OR_RETURN(int operand, Unary());
      Node n;
      n.op = Op::kNegate;
      n.index = operand;
      return Add(n);
    }
    return Primary();
  }
  // An identifier or number: up to the next operator or space (a backslash
  // escapes the next character: `\,`).
  std::string_view Word() {
    SkipSpace();
    const size_t start = pos_;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '\\' && pos_ + 1 < text_.size()) {
        pos_ += 2;
        continue;
      }
      if (std::isspace(static_cast<unsigned char>(c)) || IsOperator(c)) break;
      ++pos_;
    }
    return text_.substr(start, pos_ - start);
  }
  absl::StatusOr<int> EventIndex(std::string_view word) {
    const std::string key = EventKey(word);
    for (size_t i = 0; i < keys_.size(); ++i) {
      if (keys_[i] == key) {
        Node n;
        n.op = Op::kEvent;
        n.index = static_cast<int>(i);
        return Add(n);
      }
    }
    return Error(fmt::format("'{}' is not among the metric's events", word));
  }
  absl::StatusOr<int> Primary() {
    if (Accept('(')) {
      UNCORE_ASSIGN_OR_RETURN(int inner, Sum());
      if (!Accept(')')) return Error("missing ')'");
      return inner;
    }
    const std::string_view word = Word();
    if (word.empty()) return Error("expected a number, an event or '('");
    if (std::isdigit(static_cast<unsigned char>(word[0])) || word[0] == '.') {
      const std::string copy(word);
      char* end = nullptr;
      const double v = std::strtod(copy.c_str(), &end);
      if (end != copy.c_str() + copy.size()) {
        return Error(fmt::format("'{}' is not a number", word));
      }
      return Constant(v);
    }
    if (word == "duration_time") {
      Node n;
      n.op = Op::kElapsed;
      return Add(n);
    }
    if (word == "#num_packages") return Constant(context_.num_packages);
    if (word == "#num_cores") return Constant(context_.num_cores);
    if (word == "source_count") {
      if (!Accept('(')) return Error("source_count needs '('");
      const std::string_view inner = Word();
      if (!Accept(')')) return Error("missing ')' after source_count(");
      const std::string key = EventKey(inner);
      for (size_t i = 0; i < keys_.size(); ++i) {
        if (keys_[i] != key) continue;
        const int n = context_.source_count ? context_.source_count(i) : 1;
        return Constant(n);
      }
      return Error(fmt::format("source_count of unknown event '{}'", inner));
    }
    if (word[0] == '#') {
      return Error(fmt::format("unknown constant '{}'", word));
    }
    return EventIndex(word);
  }

  const Resolution& resolution_;
  const PerfMetricContext& context_;
  CompiledMetric* out_;
  int nesting_ = 0;
  std::vector<std::string> keys_;
  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

ScaleUnit ParseScaleUnit(std::string_view text) {
  ScaleUnit out;
  text = common::StripWhitespace(text);
  size_t digits = 0;
  while (digits < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[digits])) ||
          text[digits] == '.' || text[digits] == 'e')) {
    ++digits;
  }
  if (digits > 0) {
    const std::string number(text.substr(0, digits));
    char* end = nullptr;
    const double v = std::strtod(number.c_str(), &end);
    if (end == number.c_str() + number.size()) {
      out.scale = v;
      text.remove_prefix(digits);
    }
  }
  out.unit = text == "B" ? "bytes" : std::string(text);
  return out;
}

absl::StatusOr<CompiledMetric> CompileResolution(
    const Resolution& resolution, const PerfMetricContext& context) {
  CompiledMetric out;
  out.name = resolution.name;
  out.events = ToPerfEventSpecs(resolution);
  if (resolution.kind == Resolution::Kind::kComposite) {
    // The parts, summed.
    std::vector<std::string> names;
    for (size_t i = 0; i < resolution.events.size(); ++i) {
      Node n;
      n.op = Op::kEvent;
      n.index = static_cast<int>(i);
      out.nodes.push_back(n);
      const int event = static_cast<int>(out.nodes.size() - 1);
      if (i == 0) {
        out.root = event;
      } else {
        Node sum;
        sum.op = Op::kAdd;
        sum.lhs = out.root;
        sum.rhs = event;
        out.nodes.push_back(sum);
        out.root = static_cast<int>(out.nodes.size() - 1);
      }
      names.push_back(out.events[i].text);
    }
    out.expression = common::Join(names, " + ");
    return out;
  }
  if (resolution.kind != Resolution::Kind::kMetric ||
      resolution.metric == nullptr) {
    return absl::InvalidArgumentError(fmt::format(
        "'{}' is an event, not a metric or a composite", resolution.input));
  }
  const perfmon::Metric& m = *resolution.metric;
  if (!m.core_events.empty()) {
    return absl::FailedPreconditionError(fmt::format(
        "metric {} also reads core events ({}): the SDK counts uncore PMUs "
        "only; count it with `perf stat -M {}`, or pick a metric of uncore "
        "events only (`uncore list --platform NAME --metrics`)",
        m.name, m.core_events, m.name));
  }
  out.expression = std::string(m.expr);
  FormulaCompiler compiler(resolution, context, &out);
  UNCORE_ASSIGN_OR_RETURN(int root, compiler.Compile(m.expr));
  const ScaleUnit scale = ParseScaleUnit(m.scale_unit);
  if (scale.scale != 1.0) {
    Node c;
    c.op = Op::kConstant;
    c.constant = scale.scale;
    out.nodes.push_back(c);
    Node mul;
    mul.op = Op::kMul;
    mul.lhs = root;
    mul.rhs = static_cast<int>(out.nodes.size() - 1);
    out.nodes.push_back(mul);
    root = static_cast<int>(out.nodes.size() - 1);
  }
  out.root = root;
  out.unit = scale.unit;
  out.per_second = m.sdk_defined;
  return out;
}

}  // namespace uncore::spec
