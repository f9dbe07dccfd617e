#include "sdk/runtime/check_record.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace uncore::runtime {
namespace {

constexpr size_t kMaxCheckFileBytes = 1 << 20;
constexpr size_t kMaxSummaryBytes = 400;

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

}  // namespace

std::string CheckFilePath() {
  if (std::string file = Env("UNCORE_CHECK_FILE"); !file.empty()) return file;
  if (geteuid() == 0) return "/var/lib/uncore/check.json";
  if (std::string state = Env("XDG_STATE_HOME"); !state.empty()) {
    return state + "/uncore/check.json";
  }
  if (std::string home = Env("HOME"); !home.empty()) {
    return home + "/.local/state/uncore/check.json";
  }
  return "";
}

std::string SummaryOfCheckText(std::string_view text) {
  constexpr std::string_view kKey = "\"summary\"";
  const size_t key = text.find(kKey);
  if (key == std::string_view::npos) return "";
  size_t i = key + kKey.size();
  while (i < text.size() && (text[i] == ' ' || text[i] == ':')) ++i;
  if (i >= text.size() || text[i] != '"') return "";
  std::string out;
  for (++i; i < text.size() && out.size() < kMaxSummaryBytes; ++i) {
    const char c = text[i];
    if (c == '"') return out;
    if (c == '\\' && i + 1 < text.size()) {
      ++i;
      out += text[i] == 'n' ? ' ' : text[i];
      continue;
    }
    if (static_cast<unsigned char>(c) < 0x20) return "";
    out += c;
  }
  return "";  // not terminated, or too long to be ours
}

std::string LastCheckSummary() {
  const std::string path = CheckFilePath();
  if (path.empty()) return "";
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::string text(kMaxCheckFileBytes, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  return SummaryOfCheckText(text);
}

}  // namespace uncore::runtime
