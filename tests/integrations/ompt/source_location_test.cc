// integrations/ompt/source_location: what the OpenMP tool names constructs
// after.  Symbols as readers want them (demangled, no parameters, return
// type or clone suffix; outlined OpenMP bodies), and addresses of this
// program (ELF .symtab, DWARF line table: built with -g) and of libc (its
// .dynsym).  Guarantees checked: a bad address gives empty fields.
#include "integrations/ompt/source_location.h"

#include <unistd.h>

#include <cstdint>
#include <string>
#include <utility>

#include "gtest/gtest.h"

namespace uncore::ompt {
namespace {

TEST(ReadableFunctionNameTest, CNamesAndCloneSuffixes) {
  EXPECT_EQ(ReadableFunctionName("compute_forces"), "compute_forces");
  EXPECT_EQ(ReadableFunctionName("compute_forces.cold"), "compute_forces");
  EXPECT_EQ(ReadableFunctionName("main.constprop.0"), "main");
  EXPECT_EQ(ReadableFunctionName(""), "");
}

TEST(ReadableFunctionNameTest, DemangledWithoutSignature) {
  EXPECT_EQ(ReadableFunctionName("_Z14compute_forcesPdi"), "compute_forces");
  EXPECT_EQ(ReadableFunctionName("_ZNK3Foo3barEv"), "Foo::bar");
  EXPECT_EQ(ReadableFunctionName("_ZN7physics4StepIdEEvRSt6vectorIT_SaIS2_EE"),
            "physics::Step<double>");
  EXPECT_EQ(ReadableFunctionName("_ZN12_GLOBAL__N_13fooEv"),
            "(anonymous namespace)::foo");
  EXPECT_EQ(ReadableFunctionName("_ZZ4mainENKUlvE_clEv"),
            "main::{lambda()#1}::operator()");
  EXPECT_EQ(ReadableFunctionName("_ZN3FooclEi"), "Foo::operator()");
  EXPECT_EQ(ReadableFunctionName("_ZN3FoocvbEv"), "Foo::operator bool");
  EXPECT_EQ(ReadableFunctionName("_Z3fooIiEvT_.constprop.0"), "foo<int>");
  // Not a mangled name after all: kept.  ("_Zoops" is no test: GCC 14's
  // demangler reads it as "operator||(operator+)".)
  EXPECT_EQ(ReadableFunctionName("_ZQoops"), "_ZQoops");
}

TEST(ReadableFunctionNameTest, OutlinedOpenMpBodies) {
  EXPECT_EQ(ReadableFunctionName(".omp_outlined."), "");          // clang 14
  EXPECT_EQ(ReadableFunctionName(".omp_outlined._debug__"), "");  // with -g
  EXPECT_EQ(ReadableFunctionName(".omp_outlined..12"), "");
  EXPECT_EQ(ReadableFunctionName("_Z5Solvev.omp_outlined"), "Solve");
  EXPECT_EQ(ReadableFunctionName("main.omp_outlined_debug__"), "main");
  EXPECT_EQ(ReadableFunctionName("main._omp_fn.0"), "main");  // GCC
  EXPECT_EQ(ReadableFunctionName("_Z5Solvev._omp_fn.3"), "Solve");
}

__attribute__((noinline)) const void* ReturnAddress() {
  const void* ra = __builtin_return_address(0);
  asm volatile("" ::: "memory");  // not a tail call
  return ra;
}

// The address a call returns to, and the line of the call.
__attribute__((noinline)) std::pair<const void*, int> CallHere() {
  const void* ra = ReturnAddress();
  const int line = __LINE__ - 1;
  return {ra, line};
}

TEST(ResolveReturnAddressTest, FunctionFileAndLineOfThisProgram) {
  const auto [ra, line] = CallHere();
  const CodeLocation where = ResolveReturnAddress(ra);
  EXPECT_EQ(where.function, "uncore::ompt::(anonymous namespace)::CallHere");
  EXPECT_NE(where.symbol.find("CallHere"), std::string::npos) << where.symbol;
  EXPECT_EQ(where.file, "source_location_test.cc");
  EXPECT_EQ(where.line, line);
  EXPECT_FALSE(where.object.empty());
  // The same answer again (from the object's cached index).
  const CodeLocation again = ResolveReturnAddress(ra);
  EXPECT_EQ(again.function, where.function);
  EXPECT_EQ(again.line, where.line);
}

TEST(ResolveReturnAddressTest, ASharedLibraryByItsDynamicSymbols) {
  // getpid: not one the sanitizers' runtimes replace.
  const auto address = reinterpret_cast<uintptr_t>(&::getpid);
  const CodeLocation where =
      ResolveReturnAddress(reinterpret_cast<const void*>(address + 2));
  EXPECT_NE(where.object.find("libc"), std::string::npos) << where.object;
  EXPECT_NE(where.function.find("getpid"), std::string::npos)
      << where.function << " / " << where.symbol;
}

TEST(ResolveReturnAddressTest, NoObjectNoNames) {
  EXPECT_TRUE(ResolveReturnAddress(nullptr).function.empty());
  const CodeLocation where =
      ResolveReturnAddress(reinterpret_cast<const void*>(uintptr_t{0x11}));
  EXPECT_TRUE(where.function.empty());
  EXPECT_TRUE(where.object.empty());
  EXPECT_TRUE(where.file.empty());
  EXPECT_EQ(where.line, 0);
}

}  // namespace
}  // namespace uncore::ompt
