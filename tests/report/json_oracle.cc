#include "tests/report/json_oracle.h"

#include <set>

#include "fmt/format.h"
#include "gtest/gtest.h"

namespace uncore::report {

bool ParseStrictJson(std::string_view text, Json* value, std::string* error) {
  // RFC 8259 section 8.1: a writer must not add a byte order mark; nlohmann
  // would skip one.
  if (text.starts_with("\xEF\xBB\xBF")) {
    *error = "byte order mark";
    return false;
  }
  // nlohmann keeps the last of duplicate keys: find them with the callback
  // it calls for each object start, key and end.
  std::vector<std::set<std::string>> open_objects;
  std::string duplicate;
  const Json::parser_callback_t callback =
      [&](int /*depth*/, Json::parse_event_t event, Json& parsed) {
        switch (event) {
          case Json::parse_event_t::object_start:
            open_objects.emplace_back();
            break;
          case Json::parse_event_t::object_end:
            if (!open_objects.empty()) open_objects.pop_back();
            break;
          case Json::parse_event_t::key:
            if (!open_objects.empty() &&
                !open_objects.back().insert(parsed.get<std::string>()).second &&
                duplicate.empty()) {
              duplicate = parsed.get<std::string>();
            }
            break;
          default:
            break;
        }
        return true;
      };
  try {
    *value = Json::parse(text.begin(), text.end(), callback,
                         /*allow_exceptions=*/true, /*ignore_comments=*/false);
  } catch (const Json::parse_error& e) {
    *error = e.what();
    return false;
  }
  if (!duplicate.empty()) {
    *error = fmt::format("duplicate key \"{}\"", duplicate);
    return false;
  }
  return true;
}

Json MustParseJson(std::string_view text) {
  Json value;
  std::string error;
  EXPECT_TRUE(ParseStrictJson(text, &value, &error)) << error << "\n" << text;
  return value;
}

std::string JsonString(const Json& value) {
  EXPECT_TRUE(value.is_string()) << value.dump();
  return value.is_string() ? value.get<std::string>() : std::string();
}

uint64_t JsonUint(const Json& value) {
  // nlohmann reads digits without '-', '.', 'e' as an unsigned integer.
  EXPECT_TRUE(value.is_number_unsigned()) << value.dump();
  return value.is_number_unsigned() ? value.get<uint64_t>() : 0;
}

double JsonNumber(const Json& value) {
  EXPECT_TRUE(value.is_number()) << value.dump();
  return value.is_number() ? value.get<double>() : 0;
}

bool JsonBool(const Json& value) {
  EXPECT_TRUE(value.is_boolean()) << value.dump();
  return value.is_boolean() && value.get<bool>();
}

std::vector<std::string> JsonKeys(const Json& object) {
  EXPECT_TRUE(object.is_object()) << object.dump();
  std::vector<std::string> keys;
  if (!object.is_object()) return keys;
  for (const auto& item : object.items()) keys.push_back(item.key());
  return keys;
}

size_t JsonSize(const Json& array) {
  EXPECT_TRUE(array.is_array()) << array.dump();
  return array.is_array() ? array.size() : 0;
}

}  // namespace uncore::report
