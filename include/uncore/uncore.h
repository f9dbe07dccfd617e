// uncore/uncore.h: the whole C++ API of the Uncore SDK in one include
// (events, regions, sessions, results; the C API is uncore/uncore_c.h).
//
//   #include <uncore/uncore.h>
//   auto enc =
//   uncore::EncodeEvent(*uncore::ParseEventSpec("imc/CAS_COUNT.RD"));
//   { UNCORE_REGION("solve"); ... }
//
// See the individual headers for their guarantees.
#ifndef UNCORE_UNCORE_H_
#define UNCORE_UNCORE_H_

#include "uncore/events.h"
#include "uncore/region.h"
#include "uncore/results.h"
#include "uncore/session.h"

#endif  // UNCORE_UNCORE_H_
