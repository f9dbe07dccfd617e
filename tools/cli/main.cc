// uncore: list the IvyTown uncore catalog, describe event encodings, count
// while a command runs, and say which backends work here.
//
//   uncore list [PATTERN] [--json] [--metrics]
//   uncore describe SPEC [--json] [--registers]
//   uncore stat -e SPEC[,SPEC...] [-M METRIC,...] [-I MS] ... -- COMMAND ...
//   uncore doctor [--json] [--sysfs DIR] ...
//   uncore check [--quick] [--json] [--save] [--backend B] [--platform P]
//
// One CLI11 app parses every sub-command's options into its options struct
// (tools/cli/commands.h); the Run* functions do the work.  Options take their
// value as `-e X`, `-eX`, `--events X` or `--events=X`; `uncore COMMAND
// --help` shows each sub-command's options.  Usage errors print one message
// on stderr and exit 2.  CLI11 reports errors with exceptions: they are
// caught here and never reach the SDK.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "sdk/common/id_list.h"
#include "sdk/common/status_macros.h"
#include "sdk/common/sysfs.h"
#include "sdk/common/text.h"
#include "sdk/runtime/backends.h"
#include "sdk/spec/event_spec.h"
#include "tools/cli/commands.h"

// The tool makes its own sessions (uncore stat -e ...): UNCORE_EVENTS in
// its environment must not start one when it loads (uncore/uncore_c.h).
extern "C" int uncore_environment_session_enabled(void) { return 0; }

namespace uncore::cli {

// `uncore describe [--platform P] --registers [SPEC]` on a register platform
// (describe_registers.cc); returns -1 for anything else.
int RunDescribeRegisters(const DescribeOptions& options, std::FILE* out,
                         std::FILE* err);

namespace {

constexpr std::string_view kCommands =
    "list, describe, stat, doctor, check or help";

// The usage lines of each app, by its name: CLI11 would write
// "Usage: uncore stat [OPTIONS]", which hides the `-- COMMAND`.
const std::map<std::string, std::string, std::less<>>& Synopses() {
  static const auto* synopses = new std::map<std::string, std::string,
                                             std::less<>>{
      {"uncore",
       "usage: uncore COMMAND [ARGS]   (uncore COMMAND --help for details)\n"
       "       uncore list [PATTERN] [--json] [--metrics] [--platform NAME]\n"
       "       uncore list --platforms\n"
       "       uncore describe SPEC [--json] [--registers] [--platform NAME]\n"
       "       uncore stat -e SPEC[,SPEC...] [-M METRIC[,METRIC...]] [-I MS]\n"
       "                   [--backend B] [--sockets LIST] [-o OUTPUT]\n"
       "                   [--multiplex] [--force] -- COMMAND [ARGS...]\n"
       "       uncore doctor [--json] [--sysfs DIR] [--cpuinfo FILE]\n"
       "                     [--dev-cpu DIR] [--paranoid FILE]\n"
       "                     [--proc-status FILE]\n"
       "       uncore check [--quick] [--json] [--save] [--backend B] "
       "[--platform NAME]\n"
       "       uncore help [COMMAND]\n"},
      {"list",
       "usage: uncore list [PATTERN] [--json] [--metrics] [--platform NAME]\n"
       "       uncore list --platforms\n"},
      {"describe",
       "usage: uncore describe SPEC [--json] [--registers] [--platform NAME]\n"
       "                       [--sysfs DIR]\n"
       "       uncore describe --platform nehalemex|westmereex --registers "
       "[SPEC]\n"},
      {"stat",
       "usage: uncore stat [-e SPEC[,SPEC...]] [-M METRIC[,METRIC...]] "
       "[-I MS]\n"
       "                   [--backend auto|perf|direct|sim|off] "
       "[--sockets LIST]\n"
       "                   [-o OUTPUT] [--multiplex] [--force] -- COMMAND "
       "[ARGS...]\n"},
      {"doctor",
       "usage: uncore doctor [--json] [--sysfs DIR] [--cpuinfo FILE] "
       "[--dev-cpu DIR]\n"
       "                     [--paranoid FILE] [--proc-status FILE]\n"},
      {"check",
       "usage: uncore check [--quick] [--json] [--save]\n"
       "                    [--backend auto|perf|direct|sim] "
       "[--platform NAME]\n"},
      {"help", "usage: uncore help [COMMAND]\n"},
  };
  return *synopses;
}

// `text` with its spaces turned into newlines where a line would pass
// `width`.
std::string Wrap(std::string text, size_t width) {
  size_t line_start = 0;
  size_t last_space = std::string::npos;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') {
      line_start = i + 1;
      last_space = std::string::npos;
    } else if (text[i] == ' ') {
      last_space = i;
    }
    if (i - line_start >= width && last_space != std::string::npos &&
        last_space >= line_start) {
      text[last_space] = '\n';
      line_start = last_space + 1;
      last_space = std::string::npos;
    }
  }
  return text;
}

// CLI11's help, with our usage lines first.
class HelpFormatter : public CLI::Formatter {
 public:
  HelpFormatter() { column_width(26); }

  std::string make_usage(const CLI::App* app, std::string name) const override {
    const auto it = Synopses().find(app->get_name());
    return it != Synopses().end() ? it->second
                                  : CLI::Formatter::make_usage(app, name);
  }

  // Descriptions wrapped to fit 80 columns beside the option names.
  std::string make_option_desc(const CLI::Option* option) const override {
    return Wrap(CLI::Formatter::make_option_desc(option), 80 - 28);
  }

  std::string make_help(const CLI::App* app, std::string name,
                        CLI::AppFormatMode mode) const override {
    if (mode == CLI::AppFormatMode::Sub) return make_expanded(app);
    std::string text = make_usage(app, name) + "\n" + make_description(app) +
                       make_positionals(app) + make_groups(app, mode) +
                       make_subcommands(app, mode);
    const std::string footer = make_footer(app);
    if (!footer.empty()) text += "\n" + footer;
    return text;
  }
};

constexpr std::string_view kTopFooter =
    "examples:\n"
    "  uncore list imc\n"
    "  uncore describe 'cbo/LLC_LOOKUP.DATA_READ:filter_state=0x1f'\n"
    "  uncore describe metric/MEM_BW_TOTAL\n"
    "  uncore describe --registers 'cbo[3]/LLC_VICTIMS.M_STATE'\n"
    "  uncore stat -e imc/CAS_COUNT.RD,imc/CAS_COUNT.WR -M MEM_BW_TOTAL -- "
    "./solver\n"
    "  uncore stat --backend sim -M MEM_BW_TOTAL -I 100 -- sleep 1\n"
    "  uncore doctor\n"
    "  uncore check --quick\n";

constexpr std::string_view kStatFooter =
    "Counts uncore events socket-wide (everything the sockets' boxes do, "
    "whoever\n"
    "causes it) while COMMAND runs, in one region named after the command.\n"
    "COMMAND and its arguments are everything after `--`, passed as they "
    "are.\n"
    "\n"
    "exit status: COMMAND's; 128+N when signal N killed it; 127 when it "
    "cannot be\n"
    "run; 125 when the counters cannot be opened (COMMAND is not run); 2 for "
    "bad\n"
    "arguments\n";

constexpr std::string_view kDoctorFooter =
    "Trials: perf opens msr/tsc/ and one uncore PMU event system-wide for 2 "
    "ms;\n"
    "direct programs ubox/UCLK and imc/DCLK for 2 ms and restores every "
    "register.\n"
    "\n"
    "exit status: 0 when perf or direct can count the uncore here; 1 when "
    "neither\n"
    "can (other PMUs such as msr/tsc/ may still count); 2 for bad "
    "arguments\n";

constexpr std::string_view kCheckFooter =
    "Runs a read stream, a write stream, a copy, an LLC-resident loop, a "
    "pointer\n"
    "chase and an idle interval on each socket and compares the memory, "
    "LLC,\n"
    "uncore clock and TSC counts with the traffic each makes by "
    "construction\n"
    "(docs/check.md).  --save writes the result to UNCORE_CHECK_FILE, "
    "else\n"
    "/var/lib/uncore/check.json (root) or "
    "$XDG_STATE_HOME/uncore/check.json\n"
    "(~/.local/state/uncore/check.json); reports then name it.\n"
    "\n"
    "exit status: 0 when every check that ran passed; 1 when one failed or "
    "is\n"
    "suspicious; 2 for bad arguments; 3 when nothing could be checked; 4 "
    "when\n"
    "--save could not write its file\n";

// What CLI11 collects for `stat` before it is checked (FinishStat).
struct RawStat {
  std::vector<std::string> events;
  std::vector<std::string> metrics;
  std::string interval;
  std::string backend = "auto";
  std::string platform;
  std::string sockets;
  std::string output = "-";
  std::string trace;
  bool multiplex = false;
  bool force = false;
};

// An option that takes one value per occurrence and may be repeated.
CLI::Option* Repeatable(CLI::Option* option) {
  return option->allow_extra_args(false)->multi_option_policy(
      CLI::MultiOptionPolicy::TakeAll);
}

// The values of stat's options, checked; an error message otherwise.
std::optional<std::string> FinishStat(const CLI::App& stat, const RawStat& raw,
                                      std::vector<std::string> command,
                                      StatOptions* o) {
  for (const std::string& list : raw.events) {
    for (std::string& s : spec::SplitSpecList(list)) {
      o->events.push_back(std::move(s));
    }
  }
  for (const std::string& list : raw.metrics) {
    for (std::string& s : spec::SplitSpecList(list)) {
      o->metrics.push_back(std::move(s));
    }
  }
  if (stat.count("--interval") > 0) {
    std::optional<uint64_t> ms = common::ParseUnsigned(raw.interval, 10);
    if (!ms || *ms < kMinIntervalMs || *ms > kMaxIntervalMs) {
      return fmt::format(
          "-I takes the interval in milliseconds, {} to {} (got '{}')",
          kMinIntervalMs, kMaxIntervalMs, raw.interval);
    }
    o->interval_ms = *ms;
  }
  o->platform = PlatformOrEnvironment(raw.platform);
  o->backend = common::ToLower(common::StripWhitespace(raw.backend));
  if (std::find(std::begin(runtime::kBackendNames),
                std::end(runtime::kBackendNames),
                o->backend) == std::end(runtime::kBackendNames)) {
    return fmt::format(
        "unknown backend '{}': use auto, perf, direct, sim or off",
        raw.backend);
  }
  absl::StatusOr<std::vector<int>> sockets =
      common::ParseIdList(raw.sockets, common::kSocketIdLimit, "--sockets");
  if (!sockets.ok()) return common::StatusMessage(sockets.status());
  o->sockets = *std::move(sockets);
  o->output = raw.output;
  o->trace = raw.trace;
  o->multiplex = raw.multiplex;
  o->force = raw.force;
  o->command = std::move(command);
  return std::nullopt;
}

// A usage error: one message, and where the usage is.
int UsageError(std::string_view command, std::string_view message) {
  const std::string name =
      command.empty() ? "uncore" : fmt::format("uncore {}", command);
  fmt::print(stderr, "{}: {}\n({} --help shows the usage)\n", name, message,
             name);
  return kExitUsage;
}

// What is left over after a sub-command's options: an unknown option, or a
// word `what` explains.
std::optional<std::string> Leftover(const CLI::App& sub,
                                    const std::string& first_positional) {
  const std::vector<std::string> rest = sub.remaining();
  for (const std::string& word : rest) {
    if (word.size() > 1 && word[0] == '-') {
      return fmt::format("unknown option '{}'", word);
    }
  }
  if (rest.empty()) return std::nullopt;
  const std::string& word = rest.front();
  if (sub.get_name() == "list") {
    return fmt::format("one PATTERN at most ('{}' and '{}')", first_positional,
                       word);
  }
  if (sub.get_name() == "describe") {
    return fmt::format("one SPEC at a time ('{}' and '{}' given)",
                       first_positional, word);
  }
  if (sub.get_name() == "stat") {
    return fmt::format(
        "'{}': put the command after `--` (uncore stat -e SPEC -- {} ...)",
        word, word);
  }
  return fmt::format("unexpected argument '{}'", word);
}

int Main(std::vector<std::string> args) {
  CLI::App app(
      "Lists the IvyTown uncore events, describes how they are encoded, "
      "counts them\nwhile a command runs and says which backends work here.",
      "uncore");
  app.formatter(std::make_shared<HelpFormatter>());
  app.require_subcommand(1);
  app.footer(std::string(kTopFooter));

  ListOptions list;
  CLI::App* list_app =
      app.add_subcommand("list", "the event catalog (and derived metrics)");
  list_app->add_option("PATTERN", list.pattern,
                       "a box name (cbo, imc, ...) or a case-insensitive "
                       "substring of BOX/EVENT.UMASK");
  list_app->add_flag("--json", list.json, "one JSON array");
  list_app->add_flag("--metrics", list.metrics,
                     "the derived metrics instead of the events");
  list_app->add_option("--platform", list.platform,
                       "a platform from `uncore list --platforms` "
                       "(default: UNCORE_PLATFORM, else IvyTown)");
  list_app->add_flag("--platforms", list.platforms,
                     "the supported platforms instead of the events");

  DescribeOptions describe;
  CLI::App* describe_app = app.add_subcommand(
      "describe",
      "how SPEC is encoded: control value, filter values, allowed\n"
      "counters and the registers it would write; SPEC may be a metric");
  describe_app->add_option("SPEC", describe.spec,
                           "an event spec (cbo/LLC_LOOKUP.DATA_READ) or a "
                           "metric (metric/MEM_BW_TOTAL)");
  describe_app->add_flag("--json", describe.json, "JSON instead of text");
  describe_app->add_option("--platform", describe.platform,
                           "a platform from `uncore list --platforms` "
                           "(default: UNCORE_PLATFORM, else IvyTown)");
  describe_app->add_option("--sysfs", describe.sysfs,
                           "with --platform: where to look for the PMUs "
                           "(default /sys)");
  describe_app->add_flag("--registers", describe.registers,
                         "the direct backend's exact ordered write sequence "
                         "(step, register, location, value, why) on a "
                         "simulated socket");

  RawStat raw_stat;
  CLI::App* stat_app = app.add_subcommand(
      "stat",
      "count socket-wide while COMMAND runs, like perf stat; -I MS prints\n"
      "one line per interval; the report goes to stderr or OUTPUT\n"
      "(FILE.json, FILE.csv); exits with COMMAND's status");
  Repeatable(
      stat_app->add_option(
          "-e,--events", raw_stat.events,
          "event specs, comma-separated, repeatable (a metric spec such as "
          "metric/MEM_BW_TOTAL counts as a metric)"))
      ->type_name("SPECS");
  Repeatable(stat_app->add_option("-M,--metrics", raw_stat.metrics,
                                  "derived metrics, comma-separated, "
                                  "repeatable (uncore list --metrics)"))
      ->type_name("NAMES");
  stat_app
      ->add_option("-I,--interval", raw_stat.interval,
                   "also print one line per MS milliseconds (>= 10) to "
                   "stderr: the time, each event's count in the "
                   "interval and the metrics over it")
      ->type_name("MS");
  stat_app
      ->add_option("--backend", raw_stat.backend,
                   "auto (default: perf, then direct, else off with a "
                   "warning), perf, direct, sim (SIMULATED counts), off")
      ->type_name("B");
  stat_app
      ->add_option("--platform", raw_stat.platform,
                   "whose event names (default: UNCORE_PLATFORM, else the "
                   "CPU's; `uncore list --platforms`)")
      ->type_name("NAME");
  stat_app
      ->add_option("--sockets", raw_stat.sockets,
                   "0, 0,1 or 0-3,8 (default: every socket)")
      ->type_name("LIST");
  stat_app
      ->add_option("-o,--output", raw_stat.output,
                   "- (default: the table on stderr), FILE.json, "
                   "FILE.csv (a row per value), FILE.html (a page with a "
                   "timeline), FILE.hatchet.json, any other FILE: the "
                   "table; several separated by commas; %p (pid), %h "
                   "(host), %r (MPI rank), %t (start time), %% (a %) are "
                   "expanded; exit 125 when the report cannot be written")
      ->type_name("OUTPUT");
  stat_app
      ->add_option("--trace", raw_stat.trace,
                   "also write a Chrome trace (ui.perfetto.dev): the "
                   "command's region and, with -I, one slice and one rate "
                   "point per interval; the same placeholders as -o")
      ->type_name("FILE");
  stat_app->add_flag("--multiplex", raw_stat.multiplex,
                     "let perf rotate more events than a box has counters "
                     "(counts scaled, marked ~)");
  stat_app->add_flag("--force", raw_stat.force,
                     "direct: program registers another agent seems to use");
  stat_app->footer(std::string(kStatFooter));

  DoctorOptions doctor;
  CLI::App* doctor_app = app.add_subcommand(
      "doctor",
      "which backends can count here, why the others cannot and how to\n"
      "fix that, and which one `auto` picks; exit 0 when perf or direct\n"
      "can count the uncore, 1 when neither can");
  doctor_app->add_flag("--json", doctor.json,
                       "one JSON object instead of the report");
  doctor_app->add_option("--sysfs", doctor.sysfs, "read DIR instead of /sys")
      ->type_name("DIR");
  doctor_app
      ->add_option("--cpuinfo", doctor.cpuinfo,
                   "read FILE instead of /proc/cpuinfo")
      ->type_name("FILE");
  doctor_app
      ->add_option("--dev-cpu", doctor.dev_cpu, "read DIR instead of /dev/cpu")
      ->type_name("DIR");
  doctor_app
      ->add_option("--paranoid", doctor.paranoid,
                   "read FILE instead of "
                   "/proc/sys/kernel/perf_event_paranoid")
      ->type_name("FILE");
  doctor_app
      ->add_option("--proc-status", doctor.proc_status,
                   "read FILE instead of /proc/self/status")
      ->type_name("FILE");
  doctor_app->footer(std::string(kDoctorFooter));

  CheckOptions check;
  CLI::App* check_app = app.add_subcommand(
      "check",
      "prove the counts here: kernels of known memory traffic on each\n"
      "socket, their counts compared with it; exit 0 when all pass");
  check_app->add_flag("--json", check.json,
                      "one JSON object instead of the "
                      "table");
  check_app->add_flag("--quick", check.quick,
                      "smaller buffers and fewer passes (under 5 s)");
  check_app->add_flag("--save", check.save,
                      "save the result as this machine's last check");
  check_app
      ->add_option("--backend", check.backend,
                   "auto (default), perf, direct, sim (the simulator: "
                   "SIMULATED)")
      ->type_name("B");
  check_app
      ->add_option("--platform", check.platform,
                   "with --backend sim: ivytown (default) or nehalemex; "
                   "default UNCORE_PLATFORM, else the CPU's")
      ->type_name("NAME");
  check_app->footer(std::string(kCheckFooter));

  std::string help_topic;
  CLI::App* help_app = app.add_subcommand("help", "this text, or COMMAND's");
  help_app->add_option("COMMAND", help_topic,
                       "list, describe, stat, doctor or check");

  for (CLI::App* sub :
       {list_app, describe_app, stat_app, doctor_app, check_app}) {
    sub->allow_extras();
  }
  help_app->footer("");
  auto find_command = [&](std::string_view name) -> CLI::App* {
    for (CLI::App* sub :
         {list_app, describe_app, stat_app, doctor_app, check_app, help_app}) {
      if (sub->get_name() == name) return sub;
    }
    return nullptr;
  };

  if (args.empty()) {
    fmt::print(stderr, "{}", app.help());
    return kExitUsage;
  }
  if (!args[0].starts_with("-") && find_command(args[0]) == nullptr) {
    return UsageError(
        "", fmt::format("unknown command '{}': use {}", args[0], kCommands));
  }
  // stat's COMMAND: everything after the first `--`, as it is.
  std::optional<std::vector<std::string>> command;
  if (args[0] == "stat") {
    const auto dashes = std::find(args.begin() + 1, args.end(), "--");
    if (dashes != args.end()) {
      command.emplace(dashes + 1, args.end());
      args.erase(dashes, args.end());
    }
  }

  // CLI11 parses a reversed vector (it takes arguments from the back).
  std::reverse(args.begin(), args.end());
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp&) {
    fmt::print(stdout, "{}", app.help());
    return kExitOk;
  } catch (const CLI::ArgumentMismatch& e) {
    // "--interval: 1 required MS missing": the option's value is missing.
    const std::vector<CLI::App*> parsed = app.get_subcommands();
    const std::string what = e.what();
    const size_t colon = what.find(": ");
    const std::string message =
        what.ends_with(" missing") && colon != std::string::npos
            ? fmt::format("{} needs a value", what.substr(0, colon))
            : what;
    return UsageError(parsed.empty() ? "" : parsed.front()->get_name(),
                      message);
  } catch (const CLI::ParseError& e) {
    const std::vector<CLI::App*> parsed = app.get_subcommands();
    return UsageError(parsed.empty() ? "" : parsed.front()->get_name(),
                      e.what());
  }

  if (help_app->parsed()) {
    if (help_topic.empty()) {
      // app.help() would show the help of `help`, the parsed sub-command.
      fmt::print(stdout, "{}",
                 app.get_formatter()->make_help(&app, "uncore",
                                                CLI::AppFormatMode::Normal));
      return kExitOk;
    }
    CLI::App* topic = find_command(help_topic);
    if (topic == nullptr) {
      return UsageError("help", fmt::format("unknown command '{}': use {}",
                                            help_topic, kCommands));
    }
    fmt::print(stdout, "{}", topic->help("uncore"));
    return kExitOk;
  }
  if (list_app->parsed()) {
    if (std::optional<std::string> error = Leftover(*list_app, list.pattern)) {
      return UsageError("list", *error);
    }
    list.platform = PlatformOrEnvironment(list.platform);
    if (list.platform.empty() && !list.platforms) {
      list.platform = DetectedPlatform();
    }
    if (list.platforms) return RunListPlatforms(list, stdout, stderr);
    // Nothing named or detected: the default record's platform.
    if (list.platform.empty()) list.platform = DefaultPlatformName();
    // A model catalog lists itself; vendor tables (or an unknown name, which
    // RunListPlatform refuses) through the tables.
    if (!IsModelCatalogPlatform(list.platform)) {
      return RunListPlatform(list, stdout, stderr);
    }
    return RunList(list, stdout, stderr);
  }
  if (describe_app->parsed()) {
    if (std::optional<std::string> error =
            Leftover(*describe_app, describe.spec)) {
      return UsageError("describe", *error);
    }
    describe.platform = PlatformOrEnvironment(describe.platform);
    if (describe.platform.empty()) describe.platform = DetectedPlatform();
    // Nothing named or detected: the default record's platform.
    if (describe.platform.empty()) describe.platform = DefaultPlatformName();
    // Every register platform (tools/cli/describe_registers.cc): -1 when
    // not --registers on one.
    if (const int rc = RunDescribeRegisters(describe, stdout, stderr);
        rc >= 0) {
      return rc;
    }
    if (describe.spec.empty()) {
      return UsageError("describe", "SPEC is required: an event or a metric");
    }
    if (!IsModelCatalogPlatform(describe.platform)) {
      return RunDescribePlatform(describe, stdout, stderr);
    }
    return RunDescribe(describe, stdout, stderr);
  }
  if (doctor_app->parsed()) {
    if (std::optional<std::string> error = Leftover(*doctor_app, "")) {
      return UsageError("doctor", *error);
    }
    return RunDoctor(doctor, stdout, stderr);
  }
  if (check_app->parsed()) {
    if (std::optional<std::string> error = Leftover(*check_app, "")) {
      return UsageError("check", *error);
    }
    check.platform = PlatformOrEnvironment(check.platform);
    check.backend = common::ToLower(common::StripWhitespace(check.backend));
    if (check.backend != "auto" && check.backend != "perf" &&
        check.backend != "direct" && check.backend != "sim") {
      return UsageError("check",
                        fmt::format("unknown backend '{}': use auto, perf, "
                                    "direct or sim",
                                    check.backend));
    }
    return RunCheck(check, stdout, stderr);
  }
  // stat
  if (std::optional<std::string> error = Leftover(*stat_app, "")) {
    return UsageError("stat", *error);
  }
  if (!command) {
    return UsageError("stat",
                      "no `-- COMMAND`: give the command to run after `--`");
  }
  if (command->empty()) {
    return UsageError("stat", "no COMMAND after `--`: what should run?");
  }
  StatOptions stat;
  if (std::optional<std::string> error =
          FinishStat(*stat_app, raw_stat, *std::move(command), &stat)) {
    return UsageError("stat", *error);
  }
  return RunStat(stat, stdout, stderr);
}

}  // namespace
}  // namespace uncore::cli

int main(int argc, char** argv) {
  // CLI11 reports usage errors as exceptions, caught in Main; anything else
  // escaping (out of memory) ends here with a message, never an abort.
  try {
    return uncore::cli::Main(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "uncore: internal error: %s\n", e.what());
    return 70;  // EX_SOFTWARE
  }
}
