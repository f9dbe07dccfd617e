// Where a code address is: the enclosing function and, when the object has
// DWARF line tables, the source file and line.  For the OpenMP tool, which
// names each construct after the place that runs it.
//
//   CodeLocation where = ResolveReturnAddress(codeptr_ra);
//   // where.function "compute_forces", where.file "forces.cc",
//   // where.line 42, where.object "app", where.offset 0x1234
//
// Guarantees:
// - Reads only the object's own file (the ELF symbol table, .symtab or
//   else .dynsym, and .debug_line, DWARF 2 to 5): no external tool, no
//   debuginfod, no separate debug file.  Compressed debug sections are not
//   read (no line then).
// - Every read is bounds-checked: a truncated or corrupt file gives an
//   empty field, never a crash.
// - Thread-safe.  Each object is mapped and its line tables indexed once
//   (the first lookup in it); a lookup then runs one line program.  Objects
//   stay mapped until the process ends.
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

// A symbol as a reader wants it: "_Z14compute_forcesPdi" ->
// "compute_forces"; "void ns::Step<double>(double*) const" ->
// "ns::Step<double>"; "main._omp_fn.0" (GCC) and "_Z5Solvev.omp_outlined"
// (newer clang) -> the function they were outlined from; ".omp_outlined."
// -> "".
std::string ReadableFunctionName(std::string_view symbol);

}  // namespace uncore::ompt

#endif  // UNCORE_INTEGRATIONS_OMPT_SOURCE_LOCATION_H_
