// Code address -> function, file and line (source_location.h): elfutils'
// libdw where the tool is built with it (UNCORE_OMPT_HAVE_LIBDW), the
// dynamic loader's dladdr otherwise.
//
// Guarantees: libdw's process view is made once, under a lock, and made
// again when an address is in no module it knows (a library dlopened
// since); every lookup holds that lock (a Dwfl is not thread-safe).
// Nothing but std::bad_alloc is thrown.
#include "integrations/ompt/source_location.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>

#ifdef UNCORE_OMPT_HAVE_LIBDW
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include <mutex>
#endif

namespace uncore::ompt {
namespace {

std::string_view BaseName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool IsIdentifierChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_';
}

// Whether `s` at `i` starts the keyword "operator".
bool OperatorAt(std::string_view s, size_t i) {
  return s.substr(i, 8) == "operator" &&
         (i == 0 || !IsIdentifierChar(s[i - 1])) &&
         (i + 8 >= s.size() || !IsIdentifierChar(s[i + 8]));
}

// "ns::f<int>(int, char*) const" -> "ns::f<int>"; "void f<int>(int)" ->
// "f<int>".  Anything it does not recognise is left as it is.
std::string StripSignature(std::string name) {
  // The parameter list: the last ')' followed only by qualifiers.
  const size_t close = name.rfind(')');
  if (close != std::string::npos) {
    std::string_view rest(name);
    rest.remove_prefix(close + 1);
    bool qualifiers_only = true;
    while (!rest.empty() && qualifiers_only) {
      if (rest[0] == ' ' || rest[0] == '&') {
        rest.remove_prefix(1);
      } else if (rest.substr(0, 5) == "const") {
        rest.remove_prefix(5);
      } else if (rest.substr(0, 8) == "volatile" ||
                 rest.substr(0, 8) == "noexcept") {
        rest.remove_prefix(8);
      } else {
        qualifiers_only = false;
      }
    }
    if (qualifiers_only) {
      int depth = 0;
      for (size_t i = close + 1; i-- > 0;) {
        if (name[i] == ')') ++depth;
        if (name[i] == '(' && --depth == 0) {
          if (i > 0) name.resize(i);
          break;
        }
      }
    }
  }
  // A return type (template instances): up to the last space outside
  // brackets, before any "operator".
  int depth = 0;
  size_t cut = std::string::npos;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (depth == 0 && OperatorAt(name, i)) break;
    if (c == '<' || c == '(' || c == '[' || c == '{') ++depth;
    if ((c == '>' || c == ')' || c == ']' || c == '}') && depth > 0) --depth;
    if (c == ' ' && depth == 0) cut = i;
  }
  if (cut != std::string::npos && cut + 1 < name.size()) name.erase(0, cut + 1);
  return name;
}

#ifdef UNCORE_OMPT_HAVE_LIBDW

// This process's modules as elfutils sees them: the ELF symbol tables
// (.symtab, else .dynsym) and the DWARF line tables, of the object or of
// its separate debug file.  Guarded by mu.
struct ProcessDwarf {
  std::mutex mu;
  Dwfl* dwfl = nullptr;

  // (Re)reads /proc/self/maps: the modules mapped now.  false: none.
  bool Report() {
    static const Dwfl_Callbacks callbacks = {
        .find_elf = dwfl_linux_proc_find_elf,
        .find_debuginfo = dwfl_standard_find_debuginfo,
        .section_address = nullptr,
        .debuginfo_path = nullptr,
    };
    if (dwfl == nullptr) dwfl = dwfl_begin(&callbacks);
    if (dwfl == nullptr) return false;
    dwfl_report_begin(dwfl);  // keeps the modules reported again
    const int failed = dwfl_linux_proc_report(dwfl, getpid());
    return dwfl_report_end(dwfl, nullptr, nullptr) == 0 && failed == 0;
  }

  Dwfl_Module* ModuleAt(Dwarf_Addr address) {
    if (dwfl == nullptr && !Report()) return nullptr;
    Dwfl_Module* module = dwfl_addrmodule(dwfl, address);
    if (module == nullptr && Report()) module = dwfl_addrmodule(dwfl, address);
    return module;
  }
};

ProcessDwarf& Dwarf() {
  static auto* dwarf = new ProcessDwarf;  // never destroyed: used at exit
  return *dwarf;
}

// The symbol, file and line of `call` by libdw, over what dladdr found.
void AddDwarf(const char* call, CodeLocation* where) {
  ProcessDwarf& dwarf = Dwarf();
  std::lock_guard<std::mutex> lock(dwarf.mu);
  const auto address =
      static_cast<Dwarf_Addr>(reinterpret_cast<uintptr_t>(call));
  Dwfl_Module* module = dwarf.ModuleAt(address);
  if (module == nullptr) return;
  Dwarf_Addr bias = 0;
  if (dwfl_module_getelf(module, &bias) == nullptr) return;  // unreadable
  // The object's own symbol tables: .symtab names what .dynsym does not.
  GElf_Off symbol_offset = 0;
  GElf_Sym symbol;
  const char* name = dwfl_module_addrinfo(module, address, &symbol_offset,
                                          &symbol, nullptr, nullptr, nullptr);
  where->symbol = name != nullptr ? name : "";
  int line_number = 0;
  const char* file = nullptr;
  if (Dwfl_Line* line = dwfl_module_getsrc(module, address)) {
    file =
        dwfl_lineinfo(line, nullptr, &line_number, nullptr, nullptr, nullptr);
  } else {
    // libdw before 0.191 finds a compile unit by .debug_aranges alone,
    // which clang does not write: the unit whose ranges hold the address.
    Dwarf_Die* unit = nullptr;
    Dwarf_Addr unit_bias = 0;
    while ((unit = dwfl_module_nextcu(module, unit, &unit_bias)) != nullptr) {
      if (dwarf_haspc(unit, address - unit_bias) <= 0) continue;
      if (Dwarf_Line* cu_line = dwarf_getsrc_die(unit, address - unit_bias)) {
        file = dwarf_linesrc(cu_line, nullptr, nullptr);
        if (dwarf_lineno(cu_line, &line_number) != 0) line_number = 0;
      }
      break;
    }
  }
  if (file != nullptr && line_number > 0) {
    where->file = std::string(BaseName(file));
    where->line = line_number;
  }
}

#endif  // UNCORE_OMPT_HAVE_LIBDW

}  // namespace

std::string ReadableFunctionName(std::string_view symbol) {
  // Outlined OpenMP bodies: the name before the marker is the function's
  // (GCC's "main._omp_fn.0", newer clang's "_Z5Solvev.omp_outlined");
  // clang 14's ".omp_outlined." has none.
  for (std::string_view marker : {".omp_outlined", "._omp_fn.", ".omp_task"}) {
    const size_t at = symbol.find(marker);
    if (at != std::string_view::npos) symbol = symbol.substr(0, at);
  }
  if (symbol.empty()) return "";
  // Clone suffixes: "f.cold", "_Z1fv.constprop.0".
  const size_t dot = symbol.find('.', 1);
  if (dot != std::string_view::npos) symbol = symbol.substr(0, dot);
  std::string name(symbol);
  if (symbol.substr(0, 2) == "_Z") {
    int status = -1;
    char* demangled =
        abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
    if (status == 0 && demangled != nullptr) name = demangled;
    std::free(demangled);
  }
  return StripSignature(std::move(name));
}

bool ResolvesSourceLines() {
#ifdef UNCORE_OMPT_HAVE_LIBDW
  return true;
#else
  return false;
#endif
}

CodeLocation ResolveWithDladdr(const void* return_address) {
  CodeLocation where;
  if (return_address == nullptr) return where;
  // The call instruction: the byte before the return address.
  const char* call = static_cast<const char*>(return_address) - 1;
  where.offset = reinterpret_cast<uintptr_t>(call);
  Dl_info info = {};
  link_map* map = nullptr;
  if (dladdr1(call, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) ==
          0 ||
      map == nullptr) {
    return where;
  }
  where.offset -= map->l_addr;
  if (info.dli_fname != nullptr) {
    where.object = std::string(BaseName(info.dli_fname));
  }
  // The nearest dynamic symbol below: all the loader knows.
  if (info.dli_sname != nullptr) where.symbol = info.dli_sname;
  where.function = ReadableFunctionName(where.symbol);
  return where;
}

CodeLocation ResolveReturnAddress(const void* return_address) {
  CodeLocation where = ResolveWithDladdr(return_address);
#ifdef UNCORE_OMPT_HAVE_LIBDW
  if (where.object.empty()) return where;  // in no loaded object
  AddDwarf(static_cast<const char*>(return_address) - 1, &where);
  where.function = ReadableFunctionName(where.symbol);
#endif
  return where;
}

}  // namespace uncore::ompt
