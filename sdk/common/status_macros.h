// Status helpers: UNCORE_RETURN_IF_ERROR and UNCORE_ASSIGN_OR_RETURN.
//
//   absl::Status Program() {
//     UNCORE_RETURN_IF_ERROR(Step());
//     UNCORE_ASSIGN_OR_RETURN(auto value, Compute());
//     ...
//   }
//
// Debian 12's Abseil predates absl's own macros, so the SDK has its own.
#ifndef UNCORE_SDK_COMMON_STATUS_MACROS_H_
#define UNCORE_SDK_COMMON_STATUS_MACROS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace uncore::common {

// The status message as a std::string (Debian's Abseil returns its own
// absl::string_view, which std::string_view and fmt do not take).
inline std::string StatusMessage(const absl::Status& status) {
  return std::string(status.message().data(), status.message().size());
}

}  // namespace uncore::common

#define UNCORE_RETURN_IF_ERROR(expr)                 \
  do {                                               \
    ::absl::Status uncore_status_ = (expr);          \
    if (!uncore_status_.ok()) return uncore_status_; \
  } while (0)

#define UNCORE_STATUS_CONCAT_INNER_(a, b) a##b
#define UNCORE_STATUS_CONCAT_(a, b) UNCORE_STATUS_CONCAT_INNER_(a, b)

#define UNCORE_ASSIGN_OR_RETURN(lhs, expr) \
  UNCORE_ASSIGN_OR_RETURN_IMPL_(           \
      UNCORE_STATUS_CONCAT_(uncore_statusor_, __LINE__), lhs, expr)

// NOLINTBEGIN(bugprone-macro-parentheses): `lhs` is a declaration.
#define UNCORE_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                  \
  if (!statusor.ok()) return std::move(statusor).status(); \
  lhs = *std::move(statusor)
// NOLINTEND(bugprone-macro-parentheses)

#endif  // UNCORE_SDK_COMMON_STATUS_MACROS_H_
