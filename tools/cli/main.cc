// uncore: list the IvyTown uncore catalog, describe event encodings, count
// while a command runs, and say which backends work here.
//
//   uncore list [PATTERN] [--json] [--metrics]
//   uncore describe SPEC [--json] [--registers]
//   uncore stat -e SPEC[,SPEC...] [-M METRIC,...] [-I MS] ... -- COMMAND ...
//   uncore doctor [--json]
#include <cstdio>
#include <string_view>
#include <vector>

#include "fmt/format.h"
#include "tools/cli/commands.h"

// The tool makes its own sessions (uncore stat -e ...): UNCORE_EVENTS in
// its environment must not start one when it loads (uncore/uncore_c.h).
extern "C" int uncore_environment_session_enabled(void) { return 0; }

namespace {

constexpr std::string_view kUsage =
    "usage: uncore COMMAND [ARGS]\n"
    "\n"
    "commands:\n"
    "  list [PATTERN] [--json] [--metrics]\n"
    "      the event catalog (and derived metrics); PATTERN is a box name\n"
    "      (cbo, imc, ...) or a case-insensitive substring of BOX/EVENT.UMASK\n"
    "  describe SPEC [--json] [--registers]\n"
    "      how SPEC is encoded: control value, filter values, allowed\n"
    "      counters and the registers it would write; SPEC may be a metric;\n"
    "      --registers: the direct backend's exact ordered write sequence\n"
    "      (step, register, location, value, why) on a simulated socket\n"
    "  stat -e SPEC[,SPEC...] [-M METRIC[,METRIC...]] [-I MS] [--backend B]\n"
    "       [--sockets LIST] [-o OUTPUT] [--multiplex] [--force] -- COMMAND\n"
    "       [ARGS...]\n"
    "      count socket-wide while COMMAND runs, like perf stat; -I MS prints\n"
    "      one line per interval; the report goes to stderr or OUTPUT\n"
    "      (FILE.json, FILE.csv); exits with COMMAND's status (uncore stat\n"
    "      --help for details)\n"
    "  doctor [--json]\n"
    "      which backends can count here, why the others cannot and how to\n"
    "      fix that, and which one `auto` picks; exit 0 when perf or direct\n"
    "      can count the uncore, 1 when neither can\n"
    "  help\n"
    "      this text\n"
    "\n"
    "examples:\n"
    "  uncore list imc\n"
    "  uncore describe 'cbo/LLC_LOOKUP.DATA_READ:filter_state=0x1f'\n"
    "  uncore describe metric/MEM_BW_TOTAL\n"
    "  uncore describe --registers 'cbo[3]/LLC_VICTIMS.M_STATE'\n"
    "  uncore stat -e imc/CAS_COUNT.RD,imc/CAS_COUNT.WR -M MEM_BW_TOTAL -- "
    "./solver\n"
    "  uncore stat --backend sim -M MEM_BW_TOTAL -I 100 -- sleep 1\n"
    "  uncore doctor\n";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string_view> args(argv + 1, argv + argc);
  if (args.empty()) {
    fmt::print(stderr, "{}", kUsage);
    return uncore::cli::kExitUsage;
  }
  const std::string_view command = args[0];
  std::span<const std::string_view> rest(args.data() + 1, args.size() - 1);
  if (command == "help" || command == "--help" || command == "-h") {
    fmt::print(stdout, "{}", kUsage);
    return uncore::cli::kExitOk;
  }
  if (command == "list") return uncore::cli::ListCommand(rest, stdout, stderr);
  if (command == "describe") {
    return uncore::cli::DescribeCommand(rest, stdout, stderr);
  }
  if (command == "stat") return uncore::cli::StatCommand(rest, stdout, stderr);
  if (command == "doctor") {
    return uncore::cli::DoctorCommand(rest, stdout, stderr);
  }
  fmt::print(stderr, "uncore: unknown command '{}'\n\n{}", command, kUsage);
  return uncore::cli::kExitUsage;
}
