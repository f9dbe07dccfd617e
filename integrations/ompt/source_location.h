// Where a code address is: the enclosing function and, when the object has
// DWARF line tables, the source file and line.  For the OpenMP tool, which
// names each construct after the place that runs it.
//
//   CodeLocation where = ResolveReturnAddress(codeptr_ra);
//   // where.function "compute_forces", where.file "forces.cc",
//   // where.line 42, where.object "app", where.offset 0x1234
//
// Guarantees:
// - Built with elfutils' libdw (CMake found pkg-config's libdw, Debian
//   libdw-dev; ResolvesSourceLines() true): the function from the object's
//   ELF symbol table (.symtab, else .dynsym) and file:line from its DWARF
//   line table, or from its separate debug file (/usr/lib/debug, by
//   build-id or debuglink; debuginfod only when DEBUGINFOD_URLS is set, as
//   in every elfutils tool).  Compressed debug sections are read.
// - Without libdw: what the dynamic loader knows (ResolveWithDladdr), the
//   object and offset and the nearest dynamic symbol; no file or line, and
//   no function for a program's own static symbols.
// - A corrupt file or an address in no object gives empty fields, never a
//   crash.
// - Thread-safe.  libdw's view of the process is made on the first lookup
//   and again when an address is in no module it knows; lookups take a
//   lock.  Modules stay open until the process ends.
// - May allocate and throw std::bad_alloc; nothing else throws.
#ifndef UNCORE_INTEGRATIONS_OMPT_SOURCE_LOCATION_H_
#define UNCORE_INTEGRATIONS_OMPT_SOURCE_LOCATION_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace uncore::ompt {

struct CodeLocation {
  // Demangled, without parameters, return type or clone suffix; "" when
  // unknown or when the address is in an outlined OpenMP body whose symbol
  // does not name its function (clang's ".omp_outlined.").
  std::string function;
  // The symbol exactly as the object names it ("" unknown).
  std::string symbol;
  std::string object;   // the object file's base name ("" unknown)
  uint64_t offset = 0;  // the address in the object (minus its load bias)
  std::string file;     // the source file's base name ("" unknown)
  int line = 0;         // 0 unknown
};

// The location of the call that returns to `return_address` (the byte
// before it).
CodeLocation ResolveReturnAddress(const void* return_address);

// The dynamic loader's answer alone (dladdr), what ResolveReturnAddress
// gives without libdw: object, offset, and the nearest dynamic symbol as
// symbol and function ("" for a symbol only .symtab has); no file or line.
CodeLocation ResolveWithDladdr(const void* return_address);

// Whether ResolveReturnAddress reads symbol and line tables (built with
// libdw), or gives ResolveWithDladdr's answer.
bool ResolvesSourceLines();

// A symbol as a reader wants it: "_Z14compute_forcesPdi" ->
// "compute_forces"; "void ns::Step<double>(double*) const" ->
// "ns::Step<double>"; "main._omp_fn.0" (GCC) and "_Z5Solvev.omp_outlined"
// (newer clang) -> the function they were outlined from; ".omp_outlined."
// -> "".
std::string ReadableFunctionName(std::string_view symbol);

}  // namespace uncore::ompt

#endif  // UNCORE_INTEGRATIONS_OMPT_SOURCE_LOCATION_H_
