// Small text helpers shared by the catalog, the spec parser and the CLI.
//
//   std::vector<std::string> near = ClosestNames("CAS_CONT", candidates, 3);
//   // near == {"CAS_COUNT", ...}
//
// Guarantees: pure functions; allocation only in the returned values.
#ifndef UNCORE_SDK_COMMON_TEXT_H_
#define UNCORE_SDK_COMMON_TEXT_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace uncore::common {

// Debian 12's Abseil has its own absl::string_view, distinct from
// std::string_view, so absl's string utilities do not take ours: these
// helpers cover what the SDK needs.

// Case-insensitive ASCII equality, prefix and substring tests.
bool EqualsIgnoreCase(std::string_view a, std::string_view b);
bool StartsWithIgnoreCase(std::string_view text, std::string_view prefix);
bool ContainsIgnoreCase(std::string_view text, std::string_view part);

// Splits on `sep`; with skip_empty, empty pieces are dropped.
std::vector<std::string_view> Split(std::string_view text, char sep,
                                    bool skip_empty = false);

// `text` without leading and trailing ASCII whitespace.
std::string_view StripWhitespace(std::string_view text);

// Lower-cased copy (ASCII).
std::string ToLower(std::string_view text);

// The pieces joined with `sep`.
std::string Join(std::span<const std::string> pieces, std::string_view sep);

// True when `name` equals one of the '|'-separated names in `list`,
// ignoring case.
bool MatchesAnyIgnoreCase(std::string_view name, std::string_view list);

// Levenshtein distance, ignoring ASCII case.
size_t EditDistanceIgnoreCase(std::string_view a, std::string_view b);

// Up to `limit` candidates closest to `name` (edit distance, ties broken by
// prefix match and then alphabetically); candidates much farther than the
// name's length are dropped.
std::vector<std::string> ClosestNames(std::string_view name,
                                      std::span<const std::string> candidates,
                                      size_t limit = 3);

// "a, b or c" / "a" / "" for messages.
std::string JoinAlternatives(std::span<const std::string> names);

// How many terminal columns UTF-8 `text` takes: East Asian wide and
// fullwidth characters and emoji 2, combining marks, zero-width joiners and
// variation selectors 0, every other character 1 (also a control character
// or a byte that is not UTF-8: callers escape those first).  The C library's
// wcwidth in the C.UTF-8 locale, or a table of the main ranges without it.
size_t DisplayColumns(std::string_view text);

// `n` as an English ordinal: 1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st,
// 101st, 111th.
std::string Ordinal(uint64_t n);

// Outside text (a spec, a name, a variable's value) as an error message
// quotes it: control bytes, DEL, C1 controls and bytes that are not UTF-8
// as \xNN, '\' as \\ (so nothing reaches a terminal as an escape
// sequence), and text of more than `max_bytes` cut at a character boundary
// with "... (N bytes, M left out)" after it: N the text's size, M how many
// of its bytes the message does not show.  Every message that echoes a
// value (of an environment variable, an option) quotes it with this.
inline constexpr size_t kMessageQuoteBytes = 200;
std::string QuoteForMessage(std::string_view text,
                            size_t max_bytes = kMessageQuoteBytes);

// A whole message made printable for a terminal: control bytes and bytes
// that are not UTF-8 escaped as QuoteForMessage does, line breaks and
// backslashes kept (the message may quote text escaped already), and a
// message of more than `max_bytes` cut with "... (M bytes left out)".  For messages
// that may quote outside text unescaped.
std::string PrintableMessage(std::string_view message, size_t max_bytes = 4096);

// The part of `text` around byte `at`, escaped as QuoteForMessage, at most
// about `width` bytes of it ("..." where cut), for a message that points at
// `at` with a caret: *caret gets the column of `at` in the result.
std::string ExcerptForMessage(std::string_view text, size_t at, size_t width,
                              size_t* caret);

}  // namespace uncore::common

#endif  // UNCORE_SDK_COMMON_TEXT_H_
