// kSanitized: whether this test is built with ASan or TSan, for the few
// checks that must allow for a sanitizer's slowness (bounds on timing,
// iteration counts).
#ifndef UNCORE_TESTS_TESTING_SANITIZED_H_
#define UNCORE_TESTS_TESTING_SANITIZED_H_

namespace uncore::test_support {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

}  // namespace uncore::test_support

#endif  // UNCORE_TESTS_TESTING_SANITIZED_H_
