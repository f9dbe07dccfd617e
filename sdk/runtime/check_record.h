// Check records: where `uncore check --save` keeps the last check of this
// machine, and the one line a session's report quotes from it
// (RunInfo::last_check), so that a reader knows whether the counts were
// proven on the machine that made them (docs/check.md).
//
//   const std::string path = runtime::CheckFilePath();  // UNCORE_CHECK_FILE
//   // ... uncore check writes a JSON object there whose first key is
//   // "summary": "2025-05-01T10:00:00Z pass ivytown SIMULATED ..." ...
//   RunInfo run;
//   run.last_check = runtime::LastCheckSummary();  // "" when none
//
// The file: UNCORE_CHECK_FILE when set and not empty; else, for root,
// /var/lib/uncore/check.json; else $XDG_STATE_HOME/uncore/check.json, or
// ~/.local/state/uncore/check.json without XDG_STATE_HOME.
//
// Guarantees: reads one small file at most; never fails (a missing or
// unreadable file is "no check").
#ifndef UNCORE_SDK_RUNTIME_CHECK_RECORD_H_
#define UNCORE_SDK_RUNTIME_CHECK_RECORD_H_

#include <string>
#include <string_view>

namespace uncore::runtime {

// Where the last check of this machine is saved ("" when there is no
// home to put it in).
std::string CheckFilePath();

// The "summary" string of a saved check's JSON text, "" when it has none.
std::string SummaryOfCheckText(std::string_view json_text);

// The summary of the check saved at CheckFilePath(), "" when none.
std::string LastCheckSummary();

}  // namespace uncore::runtime

#endif  // UNCORE_SDK_RUNTIME_CHECK_RECORD_H_
