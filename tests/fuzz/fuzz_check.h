// FUZZ_CHECK(condition): a property a fuzz target holds its parser to.  When
// it fails it prints the condition and where, then aborts, so libFuzzer
// reports a crash and saves the input (crash-<sha1>).
//
//   FUZZ_CHECK(ids->size() <= limit);
//
// Guarantees: checked in every build type (not an assert).
#ifndef UNCORE_TESTS_FUZZ_FUZZ_CHECK_H_
#define UNCORE_TESTS_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(condition)                                          \
  do {                                                                 \
    if (!(condition)) {                                                \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK(%s) failed\n", __FILE__, \
                   __LINE__, #condition);                              \
      std::abort();                                                    \
    }                                                                  \
  } while (0)

#endif  // UNCORE_TESTS_FUZZ_FUZZ_CHECK_H_
