// NestingLevel: counts how deep a recursive parser is, so that input
// nested without end is an error instead of a stack overflow.
//
//   int depth = 0;  // the parser's
//   ...
//   const common::NestingLevel level(&depth);   // one level deeper until
//   if (depth > kMaxNesting) return Error(...);  // the scope ends
//
// Guarantees: the count goes back down when the scope ends, however it
// ends; no allocation.
#ifndef UNCORE_SDK_COMMON_NESTING_H_
#define UNCORE_SDK_COMMON_NESTING_H_

namespace uncore::common {

class NestingLevel {
 public:
  explicit NestingLevel(int* depth) : depth_(depth) { ++*depth_; }
  ~NestingLevel() { --*depth_; }
  NestingLevel(const NestingLevel&) = delete;
  NestingLevel& operator=(const NestingLevel&) = delete;

 private:
  int* depth_;
};

}  // namespace uncore::common

#endif  // UNCORE_SDK_COMMON_NESTING_H_
