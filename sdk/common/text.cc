#include "sdk/common/text.h"

#include <locale.h>
#include <wchar.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <tuple>

#include "fmt/format.h"
#include "sdk/common/json.h"

namespace uncore::common {
namespace {

char Lower(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

// Appends the character at text[*i] escaped, and moves *i past it.  A
// backslash is doubled unless the text may be escaped already.
void AppendEscaped(std::string_view text, size_t* i, std::string* out,
                   bool backslash = true) {
  const unsigned char c = static_cast<unsigned char>(text[*i]);
  if (c == '\\' && backslash) {
    *out += "\\\\";
    ++*i;
    return;
  }
  if (c < 0x20 || c == 0x7F) {
    *out += fmt::format("\\x{:02x}", c);
    ++*i;
    return;
  }
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
    ++*i;
    return;
  }
  const size_t len = ValidUtf8Length(text, *i);
  // C1 controls (U+0080-U+009F: C2 80-C2 9F) are escape sequences too.
  const bool c1 =
      len == 2 && c == 0xC2 && static_cast<unsigned char>(text[*i + 1]) < 0xA0;
  if (len == 0 || c1) {
    const size_t n = len == 0 ? 1 : len;
    for (size_t k = 0; k < n; ++k) {
      *out +=
          fmt::format("\\x{:02x}", static_cast<unsigned char>(text[*i + k]));
    }
    *i += n;
    return;
  }
  out->append(text.substr(*i, len));
  *i += len;
}

// The code point of the valid UTF-8 sequence of `len` bytes at text[i].
char32_t DecodeUtf8(std::string_view text, size_t i, size_t len) {
  const auto byte = [&](size_t k) {
    return static_cast<char32_t>(static_cast<unsigned char>(text[i + k]));
  };
  switch (len) {
    case 1:
      return byte(0);
    case 2:
      return ((byte(0) & 0x1F) << 6) | (byte(1) & 0x3F);
    case 3:
      return ((byte(0) & 0x0F) << 12) | ((byte(1) & 0x3F) << 6) |
             (byte(2) & 0x3F);
    default:
      return ((byte(0) & 0x07) << 18) | ((byte(1) & 0x3F) << 12) |
             ((byte(2) & 0x3F) << 6) | (byte(3) & 0x3F);
  }
}

// Without a C.UTF-8 locale: the main zero-width and wide ranges.
int TableColumns(char32_t c) {
  struct Range {
    char32_t first;
    char32_t last;
  };
  static constexpr Range kZero[] = {
      {0x0300, 0x036F}, {0x0483, 0x0489}, {0x0591, 0x05BD}, {0x0610, 0x061A},
      {0x064B, 0x065F}, {0x0E31, 0x0E31}, {0x0E34, 0x0E3A}, {0x1160, 0x11FF},
      {0x1AB0, 0x1AFF}, {0x1DC0, 0x1DFF}, {0x200B, 0x200F}, {0x2060, 0x2064},
      {0x20D0, 0x20FF}, {0xFE00, 0xFE0F}, {0xFE20, 0xFE2F}, {0xE0100, 0xE01EF},
  };
  static constexpr Range kWide[] = {
      {0x1100, 0x115F},   {0x231A, 0x231B},   {0x2614, 0x2615},
      {0x2E80, 0x303E},   {0x3041, 0x33FF},   {0x3400, 0x4DBF},
      {0x4E00, 0x9FFF},   {0xA000, 0xA4CF},   {0xAC00, 0xD7A3},
      {0xF900, 0xFAFF},   {0xFE30, 0xFE4F},   {0xFF00, 0xFF60},
      {0xFFE0, 0xFFE6},   {0x1F300, 0x1F64F}, {0x1F900, 0x1F9FF},
      {0x20000, 0x3FFFD},
  };
  for (const Range& r : kZero) {
    if (c >= r.first && c <= r.last) return 0;
  }
  for (const Range& r : kWide) {
    if (c >= r.first && c <= r.last) return 2;
  }
  return 1;
}

// Where a character starts at or before `i` (not inside a UTF-8 sequence).
size_t CharacterStart(std::string_view text, size_t i) {
  i = std::min(i, text.size());
  while (i > 0 && i < text.size() &&
         (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) {
    --i;
  }
  return i;
}

}  // namespace

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (Lower(a[i]) != Lower(b[i])) return false;
  }
  return true;
}

bool StartsWithIgnoreCase(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() &&
         EqualsIgnoreCase(text.substr(0, prefix.size()), prefix);
}

bool ContainsIgnoreCase(std::string_view text, std::string_view part) {
  if (part.size() > text.size()) return false;
  for (size_t i = 0; i + part.size() <= text.size(); ++i) {
    if (EqualsIgnoreCase(text.substr(i, part.size()), part)) return true;
  }
  return false;
}

std::vector<std::string_view> Split(std::string_view text, char sep,
                                    bool skip_empty) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(sep, start);
    std::string_view piece = text.substr(start, end == std::string_view::npos
                                                    ? std::string_view::npos
                                                    : end - start);
    if (!skip_empty || !piece.empty()) out.push_back(piece);
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

std::string_view StripWhitespace(std::string_view text) {
  while (!text.empty() &&
         std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() &&
         std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  return text;
}

std::string ToLower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = Lower(c);
  return out;
}

std::string Join(std::span<const std::string> pieces, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (i > 0) out += sep;
    out += pieces[i];
  }
  return out;
}

bool MatchesAnyIgnoreCase(std::string_view name, std::string_view list) {
  if (list.empty()) return false;
  for (std::string_view alt : Split(list, '|', /*skip_empty=*/true)) {
    if (EqualsIgnoreCase(name, alt)) return true;
  }
  return false;
}

size_t EditDistanceIgnoreCase(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      const size_t cost = Lower(a[i - 1]) == Lower(b[j - 1]) ? 0 : 1;
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + cost});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::vector<std::string> ClosestNames(std::string_view name,
                                      std::span<const std::string> candidates,
                                      size_t limit) {
  struct Scored {
    size_t distance;
    bool not_prefix;
    const std::string* candidate;
  };
  std::vector<Scored> scored;
  const size_t cutoff = std::max<size_t>(3, name.size() / 2 + 1);
  for (const std::string& candidate : candidates) {
    const bool prefix = !name.empty() && StartsWithIgnoreCase(candidate, name);
    const bool contains = !name.empty() && ContainsIgnoreCase(candidate, name);
    size_t distance = EditDistanceIgnoreCase(name, candidate);
    if (contains) distance = std::min(distance, candidate.size() - name.size());
    if (distance > cutoff && !contains) continue;
    scored.push_back({distance, !prefix, &candidate});
  }
  std::sort(scored.begin(), scored.end(), [](const Scored& x, const Scored& y) {
    return std::tie(x.distance, x.not_prefix, *x.candidate) <
           std::tie(y.distance, y.not_prefix, *y.candidate);
  });
  std::vector<std::string> out;
  for (const Scored& s : scored) {
    if (out.size() >= limit) break;
    if (std::find(out.begin(), out.end(), *s.candidate) == out.end()) {
      out.push_back(*s.candidate);
    }
  }
  return out;
}

std::string Ordinal(uint64_t n) {
  // 11, 12 and 13 (and 111, 1012, ...) take "th"; else the last digit says.
  const uint64_t tens = n % 100;
  const uint64_t units = n % 10;
  std::string_view suffix = "th";
  if (tens < 11 || tens > 13) {
    if (units == 1) suffix = "st";
    if (units == 2) suffix = "nd";
    if (units == 3) suffix = "rd";
  }
  return fmt::format("{}{}", n, suffix);
}

std::string JoinAlternatives(std::span<const std::string> names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += (i + 1 == names.size()) ? " or " : ", ";
    out += names[i];
  }
  return out;
}

size_t DisplayColumns(std::string_view text) {
  // The C library knows Unicode's widths in C.UTF-8 (glibc 2.35 has it
  // built in); this thread uses that locale only while it measures.
  static const locale_t utf8 =
      newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(nullptr));
  const locale_t previous =
      utf8 != static_cast<locale_t>(nullptr) ? uselocale(utf8) : nullptr;
  size_t columns = 0;
  for (size_t i = 0; i < text.size();) {
    const size_t len = ValidUtf8Length(text, i);
    if (len == 0) {  // not UTF-8: one column (an escape replaces it)
      ++columns;
      ++i;
      continue;
    }
    const char32_t c = DecodeUtf8(text, i, len);
    int width = 1;
    if (c >= 0x80) {
      width = utf8 != static_cast<locale_t>(nullptr)
                  ? wcwidth(static_cast<wchar_t>(c))
                  : TableColumns(c);
    }
    columns += static_cast<size_t>(width < 0 ? 1 : width);
    i += len;
  }
  if (utf8 != static_cast<locale_t>(nullptr)) uselocale(previous);
  return columns;
}

std::string QuoteForMessage(std::string_view text, size_t max_bytes) {
  const size_t end =
      text.size() <= max_bytes ? text.size() : CharacterStart(text, max_bytes);
  std::string out;
  out.reserve(end + 16);
  for (size_t i = 0; i < end;) AppendEscaped(text, &i, &out);
  if (end < text.size()) {
    out += fmt::format("... ({} bytes, {} left out)", text.size(),
                       text.size() - end);
  }
  return out;
}

std::string PrintableMessage(std::string_view message, size_t max_bytes) {
  const size_t end = message.size() <= max_bytes
                         ? message.size()
                         : CharacterStart(message, max_bytes);
  std::string out;
  bool first = true;
  for (std::string_view line : Split(message.substr(0, end), '\n')) {
    if (!first) out.push_back('\n');
    first = false;
    for (size_t i = 0; i < line.size();) {
      AppendEscaped(line, &i, &out, /*backslash=*/false);
    }
  }
  if (end < message.size()) {
    out += fmt::format("... ({} bytes left out)", message.size() - end);
  }
  return out;
}

std::string ExcerptForMessage(std::string_view text, size_t at, size_t width,
                              size_t* caret) {
  at = std::min(at, text.size());
  const size_t half = width / 2;
  size_t begin = at > half ? at - half : 0;
  size_t end = std::min(text.size(), begin + width);
  if (end - begin < width) begin = end > width ? end - width : 0;
  begin = CharacterStart(text, begin);
  if (end < text.size()) end = CharacterStart(text, end);
  std::string out;
  if (begin > 0) out += "...";
  size_t i = begin;
  while (i < end && i < at) AppendEscaped(text, &i, &out);
  *caret = DisplayColumns(out);  // columns, not bytes
  while (i < end) AppendEscaped(text, &i, &out);
  if (end < text.size()) out += "...";
  return out;
}

}  // namespace uncore::common
