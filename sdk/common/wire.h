// The SDK's one small binary codec: what the node-sharing catalog
// (devices/snapshot_server.cc) and the MPI rank records
// (integrations/mpi/merge.cc) are encoded with.  Header-only and using
// nothing but the standard library, so that a library that may link only
// the SDK's public API (integrations/mpi) can include it: an internal
// header, not installed.
//
//   common::WireWriter w;
//   w.U64(7);
//   w.F64(1.5);
//   w.Str("café ☕");                  // bytes as given: UTF-8 stays UTF-8
//   w.Ints(std::vector<int>{1, 2});
//   std::string bytes = w.Take();
//
//   common::WireReader r(bytes);
//   const uint64_t n = r.U64();
//   const double x = r.F64();
//   const std::string s = r.Str();
//   const std::vector<int> v = r.Ints();
//   if (!r.done()) return absl::DataLossError("corrupt");  // or !r.ok()
//
// Format: integers are 8 bytes little-endian (I64 two's complement, Int
// an I64), F64 the IEEE-754 bits as a U64, Bool a U64 0 or 1 (any non-zero
// reads true), a string or vector a U64 count and then its items.
//
// Guarantees: reads are bounds-checked and never read past the input; the
// first failed read makes ok() false for good and every later read returns
// 0 / empty, so a decoder may read everything and check once.  A count is
// refused (ok() false, 0 returned) when its items, at `min_bytes` each,
// could not fit in what remains, so corrupt input allocates at most the
// items' in-memory size over `min_bytes` times its own size (pass each
// item's least encoded size).  Int() refuses (ok() false) a value outside int.
// Never throws on corrupt input, never prints.  Not thread-safe per
// object.
#ifndef UNCORE_SDK_COMMON_WIRE_H_
#define UNCORE_SDK_COMMON_WIRE_H_

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace uncore::common {

class WireWriter {
 public:
  void U64(uint64_t v) {
    char bytes[8];
    for (int i = 0; i < 8; ++i) {
      bytes[i] = static_cast<char>(static_cast<uint8_t>(v >> (8 * i)));
    }
    out_.append(bytes, sizeof(bytes));
  }
  void I64(int64_t v) { U64(static_cast<uint64_t>(v)); }
  void F64(double v) { U64(std::bit_cast<uint64_t>(v)); }
  void Bool(bool v) { U64(v ? 1 : 0); }
  void Str(std::string_view s) {
    U64(s.size());
    out_.append(s.data(), s.size());
  }
  void Ints(const std::vector<int>& v) {
    U64(v.size());
    for (int x : v) I64(x);
  }
  void U64s(const std::vector<uint64_t>& v) {
    U64(v.size());
    for (uint64_t x : v) U64(x);
  }
  void Strs(const std::vector<std::string>& v) {
    U64(v.size());
    for (const std::string& s : v) Str(s);
  }

  const std::string& bytes() const { return out_; }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

class WireReader {
 public:
  explicit WireReader(std::string_view in) : in_(in) {}

  // No read has failed.
  bool ok() const { return ok_; }
  // No read has failed and every byte was read.
  bool done() const { return ok_ && in_.empty(); }
  size_t remaining() const { return in_.size(); }

  uint64_t U64() {
    if (!ok_ || in_.size() < 8) return Fail();
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) {
      v |= uint64_t{static_cast<uint8_t>(in_[i])} << (8 * i);
    }
    in_.remove_prefix(8);
    return v;
  }
  int64_t I64() { return static_cast<int64_t>(U64()); }
  int Int() {
    const int64_t v = I64();
    if (v < std::numeric_limits<int>::min() ||
        v > std::numeric_limits<int>::max()) {
      return static_cast<int>(Fail());
    }
    return static_cast<int>(v);
  }
  double F64() { return std::bit_cast<double>(U64()); }
  bool Bool() { return U64() != 0; }
  std::string Str() {
    const uint64_t n = Count(1);
    std::string s(in_.substr(0, n));
    in_.remove_prefix(n);
    return s;
  }
  // A count of items of at least `min_bytes` each: never more than could
  // fit in what remains.
  uint64_t Count(uint64_t min_bytes) {
    const uint64_t n = U64();
    if (!ok_ || n > in_.size() / std::max<uint64_t>(min_bytes, 1)) {
      return Fail();
    }
    return n;
  }
  std::vector<int> Ints() {
    std::vector<int> v(Count(8));
    for (int& x : v) x = Int();
    return v;
  }
  std::vector<uint64_t> U64s() {
    std::vector<uint64_t> v(Count(8));
    for (uint64_t& x : v) x = U64();
    return v;
  }
  std::vector<std::string> Strs() {
    std::vector<std::string> v(Count(8));
    for (std::string& s : v) s = Str();
    return v;
  }

 private:
  uint64_t Fail() {
    ok_ = false;
    in_ = {};
    return 0;
  }

  std::string_view in_;
  bool ok_ = true;
};

}  // namespace uncore::common

#endif  // UNCORE_SDK_COMMON_WIRE_H_
