// uncore/uncore.h: the whole public API of the Uncore SDK in one include.
//
//   #include <uncore/uncore.h>
//   auto enc =
//   uncore::EncodeEvent(*uncore::ParseEventSpec("imc/CAS_COUNT.RD"));
//
// See the individual headers for their guarantees.
#ifndef UNCORE_UNCORE_H_
#define UNCORE_UNCORE_H_

#include "uncore/events.h"

#endif  // UNCORE_UNCORE_H_
