#include "sdk/common/text.h"

#include <algorithm>
#include <cctype>
#include <tuple>

namespace uncore::common {
namespace {

char Lower(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
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

std::string JoinAlternatives(std::span<const std::string> names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += (i + 1 == names.size()) ? " or " : ", ";
    out += names[i];
  }
  return out;
}

}  // namespace uncore::common
