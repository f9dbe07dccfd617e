// The JSON tests' independent oracle: nlohmann-json, held to RFC 8259.
//
// nlohmann's parser in its default (strict) mode already rejects trailing
// commas, comments, NaN/Infinity, leading zeros, raw control characters,
// invalid UTF-8, unpaired surrogate escapes and text after the value.  Two
// things it lets through are checked here on top: a leading UTF-8 byte order
// mark (nlohmann skips it) and duplicate object keys (nlohmann keeps the last
// value).  Objects keep their member order (ordered_json).
//
// What no parser can see, because it decodes or normalises it, is tested at
// the byte level instead (json_writer_test.cc, json_report_test.cc): which
// escape a character got (\u00ff versus raw UTF-8, \b versus \u0008, raw DEL
// versus \u007f), that a non-finite double became null, the sign of -0, and
// whitespace and layout (the golden file).
#ifndef UNCORE_TESTS_REPORT_JSON_ORACLE_H_
#define UNCORE_TESTS_REPORT_JSON_ORACLE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "nlohmann/json.hpp"

namespace uncore::report {

using Json = nlohmann::ordered_json;

// Parses `text` as RFC 8259 JSON, strictly (see above).  On rejection,
// returns false and says why in *error.
bool ParseStrictJson(std::string_view text, Json* value, std::string* error);

// ParseStrictJson, with a failed expectation (and null) on rejection.
Json MustParseJson(std::string_view text);

// Typed reads: a failed expectation (and an empty value) on the wrong type.
// Members and items are read with Json::at(), which throws (and so fails the
// test) when the key or index is missing.
std::string JsonString(const Json& value);
// A non-negative integer, written without fraction or exponent.
uint64_t JsonUint(const Json& value);
double JsonNumber(const Json& value);
bool JsonBool(const Json& value);
// An object's keys, in order.
std::vector<std::string> JsonKeys(const Json& object);
// An array's length.
size_t JsonSize(const Json& array);

}  // namespace uncore::report

#endif  // UNCORE_TESTS_REPORT_JSON_ORACLE_H_
