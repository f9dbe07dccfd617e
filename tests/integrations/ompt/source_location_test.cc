// integrations/ompt/source_location: what the OpenMP tool names constructs
// after.  Symbols as readers want them (demangled, no parameters, return
// type or clone suffix; outlined OpenMP bodies), and addresses of this
// program (ELF .symtab, DWARF line table: built with -g) and of libc (its
// .dynsym).  Built twice: with libdw as the tool is
// (ompt_source_location_test, when CMake found it) and without
// (ompt_source_location_dladdr_test): ResolveReturnAddress is then the
// dladdr answer, checked the same as ResolveWithDladdr is in both.
// Guarantees checked: a bad address gives empty fields.
#include "integrations/ompt/source_location.h"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <cstdint>
#include <exception>
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
#ifndef UNCORE_OMPT_HAVE_LIBDW
  ASSERT_FALSE(ResolvesSourceLines());
  GTEST_SKIP() << "built without libdw: no symbol or line tables read "
                  "(ResolveWithDladdrTest checks the answer)";
#endif
  ASSERT_TRUE(ResolvesSourceLines());
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
  // The object and offset are the loader's, as without libdw.
  const CodeLocation loader = ResolveWithDladdr(ra);
  EXPECT_EQ(where.object, loader.object);
  EXPECT_EQ(where.offset, loader.offset);
}

// The loader's own answer: the object, the offset in it of the call (the
// byte before the return address), no line.  The program's own functions
// are not dynamic symbols (no -rdynamic): no function, as the tool then
// names the construct "object+0xoffset".
TEST(ResolveWithDladdrTest, ThisProgramByObjectAndOffset) {
  const auto [ra, line] = CallHere();
  const CodeLocation where = ResolveWithDladdr(ra);
  Dl_info info = {};
  link_map* map = nullptr;
  ASSERT_NE(dladdr1(ra, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP),
            0);
  ASSERT_NE(map, nullptr);
  EXPECT_EQ(where.offset,
            reinterpret_cast<uintptr_t>(ra) - 1 - uintptr_t{map->l_addr});
  EXPECT_FALSE(where.object.empty());
  EXPECT_EQ(where.object.find('/'), std::string::npos) << where.object;
  EXPECT_EQ(where.function, "");
  EXPECT_EQ(where.symbol, "");
  EXPECT_EQ(where.file, "");
  EXPECT_EQ(where.line, 0);
  (void)line;
}

// Both answers: ResolveReturnAddress's, and the loader's alone.
struct Resolver {
  const char* name;
  CodeLocation (*resolve)(const void*);
};
constexpr Resolver kResolvers[] = {
    {"ResolveReturnAddress", &ResolveReturnAddress},
    {"ResolveWithDladdr", &ResolveWithDladdr}};

// A shared library's dynamic symbols: the function, demangled when C++.
TEST(ResolveReturnAddressTest, SharedLibrariesByTheirDynamicSymbols) {
  // getpid: not one the sanitizers' runtimes replace.
  const auto getpid_address = reinterpret_cast<uintptr_t>(&::getpid);
  // A C++ library function: libstdc++'s std::terminate (the test links
  // libstdc++ dynamically).
  void (*terminate)() noexcept = &std::terminate;
  const auto terminate_address = reinterpret_cast<uintptr_t>(terminate);
  for (const Resolver& resolver : kResolvers) {
    SCOPED_TRACE(resolver.name);
    const CodeLocation libc =
        resolver.resolve(reinterpret_cast<const void*>(getpid_address + 2));
    EXPECT_NE(libc.object.find("libc"), std::string::npos) << libc.object;
    EXPECT_NE(libc.function.find("getpid"), std::string::npos)
        << libc.function << " / " << libc.symbol;
    const CodeLocation cxx =
        resolver.resolve(reinterpret_cast<const void*>(terminate_address + 2));
    if (cxx.object.find("libstdc++") == std::string::npos) continue;
    EXPECT_EQ(cxx.symbol, "_ZSt9terminatev");
    EXPECT_EQ(cxx.function, "std::terminate");
  }
}

TEST(ResolveReturnAddressTest, NoObjectNoNames) {
  for (const Resolver& resolver : kResolvers) {
    SCOPED_TRACE(resolver.name);
    EXPECT_TRUE(resolver.resolve(nullptr).function.empty());
    const CodeLocation where =
        resolver.resolve(reinterpret_cast<const void*>(uintptr_t{0x11}));
    EXPECT_TRUE(where.function.empty());
    EXPECT_TRUE(where.object.empty());
    EXPECT_TRUE(where.file.empty());
    EXPECT_EQ(where.line, 0);
  }
}

}  // namespace
}  // namespace uncore::ompt
