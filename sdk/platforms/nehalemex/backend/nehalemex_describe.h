// The Xeon 7500 / E7 register pages of `uncore describe` (docs/xeon7500.md):
// the register model as text (every box's MSRs, the C-Box programming per
// C-Box, the U-Box global control bits and the S-Box match/mask sequence,
// steps a-d, with its addresses), and the ordered writes the nehalemex engine
// performs to program a SPEC on one simulated socket.  They are the
// platform's RegisterPlatform::describe_model and describe_writes.
//
//   std::string page = nehalemex::RegisterModelText(Variant::kNehalemEx);
//   absl::StatusOr<runtime::DescribedWrites> w = nehalemex::DescribeWrites(
//       Variant::kNehalemEx, "sbox/TO_R_PROG_EV:match=0x1,mask=0x3");
//
// Guarantees: no hardware is touched (a recording register space).
#ifndef UNCORE_SDK_PLATFORMS_NEHALEMEX_BACKEND_NEHALEMEX_DESCRIBE_H_
#define UNCORE_SDK_PLATFORMS_NEHALEMEX_BACKEND_NEHALEMEX_DESCRIBE_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "sdk/platforms/nehalemex/model/box_descriptors.h"
#include "sdk/runtime/backends.h"

namespace uncore::nehalemex {

std::string RegisterModelText(Variant v);
absl::StatusOr<runtime::DescribedWrites> DescribeWrites(Variant v,
                                                        std::string_view spec);

}  // namespace uncore::nehalemex

#endif  // UNCORE_SDK_PLATFORMS_NEHALEMEX_BACKEND_NEHALEMEX_DESCRIBE_H_
