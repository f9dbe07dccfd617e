// sdk/common/wire.h: the codec the MPI rank records and the node-sharing
// catalog are written with.
#include "sdk/common/wire.h"

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace uncore {
namespace {

// Little-endian, length-prefixed, bounds-checked, failures sticky.
TEST(WireTest, BytesAreLittleEndianAndLengthPrefixed) {
  common::WireWriter w;
  w.U64(0x0102030405060708);
  w.I64(-2);
  w.F64(1.5);
  w.Bool(true);
  w.Str("caf\xc3\xa9");
  w.Ints({7, -1});
  const std::string bytes = w.Take();
  ASSERT_EQ(bytes.size(), 8u * 5 + 5 + 8 * 3);
  EXPECT_EQ(bytes.substr(0, 8),
            std::string("\x08\x07\x06\x05\x04\x03\x02\x01", 8));
  EXPECT_EQ(bytes.substr(8, 8), std::string(8, '\xff').replace(0, 1, "\xfe"));
  EXPECT_EQ(bytes.substr(32, 8), std::string("\x05\0\0\0\0\0\0\0", 8));
  EXPECT_EQ(bytes.substr(40, 5), "caf\xc3\xa9");  // as given: UTF-8

  common::WireReader r(bytes);
  EXPECT_EQ(r.U64(), 0x0102030405060708u);
  EXPECT_EQ(r.I64(), -2);
  EXPECT_EQ(r.F64(), 1.5);
  EXPECT_TRUE(r.Bool());
  EXPECT_EQ(r.Str(), "caf\xc3\xa9");
  EXPECT_THAT(r.Ints(), ::testing::ElementsAre(7, -1));
  EXPECT_TRUE(r.done());
}

TEST(WireTest, ReadsAreBoundsCheckedAndFailuresSticky) {
  common::WireWriter w;
  w.Str("abc");
  w.U64(5);
  const std::string bytes = w.Take();
  // Cut short anywhere: ok() turns false, reads give 0 / empty.
  for (size_t n = 0; n < bytes.size(); ++n) {
    common::WireReader r(std::string_view(bytes).substr(0, n));
    const std::string s = r.Str();
    const uint64_t v = r.U64();
    EXPECT_FALSE(r.ok()) << n;
    EXPECT_FALSE(r.done()) << n;
    EXPECT_EQ(v, 0u) << n;
  }
  // A count larger than what remains allocates nothing.
  common::WireWriter huge;
  huge.U64(std::numeric_limits<uint64_t>::max());
  common::WireReader r(huge.bytes());
  EXPECT_TRUE(r.Strs().empty());
  EXPECT_FALSE(r.ok());
  // A string can hold what remains, a vector of 8-byte items no more than
  // fits; an Int must fit an int.
  common::WireWriter count;
  count.U64(2);
  count.U64(1);
  common::WireReader two(count.bytes());
  EXPECT_TRUE(two.U64s().empty());
  EXPECT_FALSE(two.ok());
  common::WireWriter big;
  big.I64(int64_t{1} << 40);
  common::WireReader i(big.bytes());
  EXPECT_EQ(i.Int(), 0);
  EXPECT_FALSE(i.ok());
}

}  // namespace
}  // namespace uncore
