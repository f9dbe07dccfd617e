// uncore/uncore.h: the whole C++ API of the Uncore SDK in one include:
// events and metrics (uncore/events.h), regions (uncore/region.h), sessions
// (uncore/session.h) and their results (uncore/results.h).  The C API is
// uncore/uncore_c.h; LIKWID's markers are uncore/likwid_marker.h.
//
//   #include <uncore/uncore.h>
//
//   absl::StatusOr<uncore::EventEncoding> e =
//       uncore::EncodeEvent("imc/CAS_COUNT.RD");   // e->control == 0x00400304
//   void Solve() { UNCORE_REGION("solve"); ... }
//
// Build with C++20 and link uncore::sdk (find_package(UncoreSDK)) or
// `pkg-config --cflags --libs uncore-sdk`.  Each header says what it
// guarantees; every one includes only the standard library, Abseil and the
// other uncore/ headers.
#ifndef UNCORE_UNCORE_H_
#define UNCORE_UNCORE_H_

#include "uncore/events.h"
#include "uncore/region.h"
#include "uncore/results.h"
#include "uncore/session.h"

#endif  // UNCORE_UNCORE_H_
