// Code address -> function, file and line, from the object's own ELF
// symbol table and DWARF line tables (source_location.h).
//
// Guarantees: bounds-checked reads (a corrupt file gives empty fields); one
// mapping and one line-table index per object, built under a lock on the
// first lookup in it; nothing but std::bad_alloc is thrown.
#include "integrations/ompt/source_location.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace uncore::ompt {
namespace {

std::string_view BaseName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// Little-endian reads within [p, end); a read past the end sets !ok() and
// returns 0 (or nullptr).
class Reader {
 public:
  Reader(const uint8_t* begin, const uint8_t* end) : p_(begin), end_(end) {}

  bool ok() const { return ok_; }
  const uint8_t* pos() const { return p_; }
  bool AtEnd() const { return p_ >= end_; }

  uint64_t Fixed(size_t bytes) {
    if (!Have(bytes) || bytes > 8) return Fail();
    uint64_t v = 0;
    for (size_t i = 0; i < bytes; ++i) {
      v |= static_cast<uint64_t>(p_[i]) << (8 * i);
    }
    p_ += bytes;
    return v;
  }
  uint8_t U8() { return static_cast<uint8_t>(Fixed(1)); }
  uint16_t U16() { return static_cast<uint16_t>(Fixed(2)); }
  uint32_t U32() { return static_cast<uint32_t>(Fixed(4)); }
  uint64_t U64() { return Fixed(8); }
  uint64_t Uleb() {
    uint64_t v = 0;
    for (int shift = 0; ok_; shift += 7) {
      if (!Have(1)) return Fail();
      const uint8_t b = *p_++;
      if (shift < 64) v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return v;
    }
    return 0;
  }
  int64_t Sleb() {
    uint64_t v = 0;
    int shift = 0;
    uint8_t b = 0;
    do {
      if (!Have(1)) return static_cast<int64_t>(Fail());
      b = *p_++;
      if (shift < 64) v |= static_cast<uint64_t>(b & 0x7f) << shift;
      shift += 7;
    } while ((b & 0x80) != 0);
    if (shift < 64 && (b & 0x40) != 0) v |= ~uint64_t{0} << shift;
    return static_cast<int64_t>(v);
  }
  // A NUL-terminated string in place, or nullptr.
  const char* CString() {
    const void* nul = std::memchr(p_, 0, Have(1) ? end_ - p_ : 0);
    if (nul == nullptr) {
      Fail();
      return nullptr;
    }
    const char* s = reinterpret_cast<const char*>(p_);
    p_ = static_cast<const uint8_t*>(nul) + 1;
    return s;
  }
  void Skip(uint64_t bytes) {
    if (!Have(bytes)) {
      Fail();
      return;
    }
    p_ += bytes;
  }

 private:
  bool Have(uint64_t bytes) const {
    return ok_ && p_ <= end_ && bytes <= static_cast<uint64_t>(end_ - p_);
  }
  uint64_t Fail() {
    ok_ = false;
    p_ = end_;
    return 0;
  }

  const uint8_t* p_;
  const uint8_t* end_;
  bool ok_ = true;
};

struct Bytes {
  const uint8_t* data = nullptr;
  size_t size = 0;
  const uint8_t* end() const { return data + size; }
};

// The NUL-terminated string at `offset` in a string section, or nullptr.
const char* StringAt(const Bytes& section, uint64_t offset) {
  if (section.data == nullptr || offset >= section.size) return nullptr;
  const void* nul =
      std::memchr(section.data + offset, 0, section.size - offset);
  return nul == nullptr ? nullptr
                        : reinterpret_cast<const char*>(section.data + offset);
}

// One line-number program's header (DWARF 2 to 5).
struct LineHeader {
  int version = 0;
  int address_size = 8;
  uint8_t min_instruction_length = 1;
  bool default_is_stmt = true;
  int8_t line_base = 0;
  uint8_t line_range = 1;
  uint8_t opcode_base = 1;
  const uint8_t* opcode_lengths = nullptr;  // opcode_base - 1 of them
  std::vector<const char*> files;           // indexed by the file register
  const uint8_t* program = nullptr;
  const uint8_t* end = nullptr;  // of this unit
};

constexpr uint64_t kFormBlock2 = 0x03, kFormBlock4 = 0x04, kFormData2 = 0x05,
                   kFormData4 = 0x06, kFormData8 = 0x07, kFormString = 0x08,
                   kFormBlock = 0x09, kFormBlock1 = 0x0a, kFormData1 = 0x0b,
                   kFormSdata = 0x0d, kFormStrp = 0x0e, kFormUdata = 0x0f,
                   kFormStrx = 0x1a, kFormData16 = 0x1e, kFormLineStrp = 0x1f,
                   kFormStrx1 = 0x25, kFormStrx2 = 0x26, kFormStrx3 = 0x27,
                   kFormStrx4 = 0x28;
constexpr uint64_t kContentPath = 1;

class ElfObject {
 public:
  ElfObject() = default;
  ElfObject(const ElfObject&) = delete;
  ElfObject& operator=(const ElfObject&) = delete;
  ~ElfObject() {
    if (map_ != nullptr) munmap(map_, map_size_);
  }

  // False when `path` is not a readable 64-bit little-endian ELF file.
  bool Open(const std::string& path) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat st = {};
    if (fstat(fd, &st) != 0 ||
        st.st_size < static_cast<off_t>(sizeof(Elf64_Ehdr))) {
      close(fd);
      return false;
    }
    void* map = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ,
                     MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) return false;
    map_ = map;
    map_size_ = static_cast<size_t>(st.st_size);
    return ReadSections();
  }

  // The symbol of the function that holds `vaddr`, or "".
  std::string FunctionAt(uint64_t vaddr) const {
    for (const auto& [symbols, strings] :
         {std::pair(symtab_, symtab_strings_),
          std::pair(dynsym_, dynsym_strings_)}) {
      const size_t count = symbols.size / sizeof(Elf64_Sym);
      for (size_t i = 0; i < count; ++i) {
        Elf64_Sym sym;
        std::memcpy(&sym, symbols.data + i * sizeof(Elf64_Sym), sizeof(sym));
        const int type = ELF64_ST_TYPE(sym.st_info);
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
            sym.st_shndx == SHN_UNDEF || sym.st_value > vaddr ||
            vaddr - sym.st_value >= sym.st_size) {
          continue;
        }
        const char* name = StringAt(strings, sym.st_name);
        if (name != nullptr && *name != '\0') return name;
      }
    }
    return "";
  }

  // The file (base name) and line of `vaddr`; false when the object has no
  // line table for it.
  bool LineAt(uint64_t vaddr, std::string* file, int* line) {
    if (!indexed_) Index();
    for (const Sequence& s : sequences_) {
      if (vaddr < s.low || vaddr >= s.high) continue;
      LineHeader h;
      if (!ReadLineHeader(s.unit, &h)) continue;
      uint64_t file_index = 0;
      if (RunLineProgram(h, vaddr, &file_index, line) && *line > 0) {
        if (file_index < h.files.size() && h.files[file_index] != nullptr) {
          *file = std::string(BaseName(h.files[file_index]));
          return true;
        }
        return false;
      }
    }
    return false;
  }

 private:
  struct Sequence {
    uint64_t low;
    uint64_t high;
    const uint8_t* unit;
  };

  const uint8_t* base() const { return static_cast<const uint8_t*>(map_); }

  bool ReadSections() {
    Elf64_Ehdr eh;
    std::memcpy(&eh, map_, sizeof(eh));
    if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_ident[EI_DATA] != ELFDATA2LSB ||
        eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff == 0 ||
        eh.e_shoff > map_size_) {
      return false;
    }
    const size_t max_headers = (map_size_ - eh.e_shoff) / sizeof(Elf64_Shdr);
    auto header = [&](size_t i) {
      Elf64_Shdr sh;
      std::memcpy(&sh, base() + eh.e_shoff + i * sizeof(Elf64_Shdr),
                  sizeof(sh));
      return sh;
    };
    if (max_headers == 0) return false;
    size_t count = eh.e_shnum;
    if (count == 0) count = header(0).sh_size;  // more than SHN_LORESERVE
    size_t names_index = eh.e_shstrndx;
    if (names_index == SHN_XINDEX) names_index = header(0).sh_link;
    if (count > max_headers || names_index >= count) return false;
    auto bytes = [&](const Elf64_Shdr& sh) {
      Bytes b;
      if (sh.sh_type == SHT_NOBITS || (sh.sh_flags & SHF_COMPRESSED) != 0 ||
          sh.sh_offset > map_size_ || sh.sh_size > map_size_ - sh.sh_offset) {
        return b;
      }
      b.data = base() + sh.sh_offset;
      b.size = sh.sh_size;
      return b;
    };
    const Bytes names = bytes(header(names_index));
    for (size_t i = 0; i < count; ++i) {
      const Elf64_Shdr sh = header(i);
      const char* name = StringAt(names, sh.sh_name);
      if (name == nullptr) continue;
      const std::string_view n(name);
      if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM) {
        if (sh.sh_link >= count) continue;
        Bytes& symbols = sh.sh_type == SHT_SYMTAB ? symtab_ : dynsym_;
        Bytes& strings =
            sh.sh_type == SHT_SYMTAB ? symtab_strings_ : dynsym_strings_;
        symbols = bytes(sh);
        strings = bytes(header(sh.sh_link));
      } else if (n == ".debug_line") {
        debug_line_ = bytes(sh);
      } else if (n == ".debug_line_str") {
        debug_line_str_ = bytes(sh);
      } else if (n == ".debug_str") {
        debug_str_ = bytes(sh);
      }
    }
    return true;
  }

  // Reads the unit at `unit` (its unit_length field).
  bool ReadLineHeader(const uint8_t* unit, LineHeader* h) const {
    Reader r(unit, debug_line_.end());
    uint64_t length = r.U32();
    bool dwarf64 = false;
    if (length == 0xffffffff) {
      dwarf64 = true;
      length = r.U64();
    } else if (length >= 0xfffffff0) {
      return false;
    }
    if (!r.ok() ||
        length > static_cast<uint64_t>(debug_line_.end() - r.pos())) {
      return false;
    }
    h->end = r.pos() + length;
    r = Reader(r.pos(), h->end);
    h->version = r.U16();
    if (h->version < 2 || h->version > 5) return false;
    if (h->version >= 5) {
      h->address_size = r.U8();
      r.U8();  // segment selector size
    }
    const uint64_t header_length = dwarf64 ? r.U64() : r.U32();
    if (!r.ok() || header_length > static_cast<uint64_t>(h->end - r.pos())) {
      return false;
    }
    h->program = r.pos() + header_length;
    h->min_instruction_length = r.U8();
    if (h->version >= 4) r.U8();  // maximum operations per instruction
    h->default_is_stmt = r.U8() != 0;
    h->line_base = static_cast<int8_t>(r.U8());
    h->line_range = r.U8();
    h->opcode_base = r.U8();
    if (!r.ok() || h->line_range == 0 || h->opcode_base == 0) return false;
    h->opcode_lengths = r.pos();
    r.Skip(h->opcode_base - 1u);
    if (!r.ok()) return false;
    if (h->version < 5) {
      while (true) {  // include directories: not needed
        const char* dir = r.CString();
        if (dir == nullptr) return false;
        if (*dir == '\0') break;
      }
      h->files.push_back(nullptr);  // file numbers start at 1
      while (true) {
        const char* name = r.CString();
        if (name == nullptr) return false;
        if (*name == '\0') break;
        r.Uleb();  // directory
        r.Uleb();  // modification time
        r.Uleb();  // length
        h->files.push_back(name);
      }
      return r.ok();
    }
    // DWARF 5: directories, then files, each described by its formats.
    for (int table = 0; table < 2; ++table) {
      const uint8_t format_count = r.U8();
      std::vector<std::pair<uint64_t, uint64_t>> formats;
      for (int i = 0; i < format_count && r.ok(); ++i) {
        const uint64_t content = r.Uleb();
        formats.emplace_back(content, r.Uleb());
      }
      const uint64_t entries = r.Uleb();
      for (uint64_t e = 0; e < entries && r.ok(); ++e) {
        const char* path = nullptr;
        for (const auto& [content, form] : formats) {
          const char* s = ReadForm(r, form, dwarf64);
          if (content == kContentPath) path = s;
        }
        if (table == 1) h->files.push_back(path);
      }
    }
    return r.ok();
  }

  // Skips (or reads, for strings) one attribute value of `form`; a string
  // form gives the string, anything else nullptr.
  const char* ReadForm(Reader& r, uint64_t form, bool dwarf64) const {
    switch (form) {
      case kFormString:
        return r.CString();
      case kFormLineStrp:
        return StringAt(debug_line_str_, dwarf64 ? r.U64() : r.U32());
      case kFormStrp:
        return StringAt(debug_str_, dwarf64 ? r.U64() : r.U32());
      case kFormData1:
      case kFormStrx1:
        r.Skip(1);
        return nullptr;
      case kFormData2:
      case kFormStrx2:
        r.Skip(2);
        return nullptr;
      case kFormStrx3:
        r.Skip(3);
        return nullptr;
      case kFormData4:
      case kFormStrx4:
        r.Skip(4);
        return nullptr;
      case kFormData8:
        r.Skip(8);
        return nullptr;
      case kFormData16:
        r.Skip(16);
        return nullptr;
      case kFormUdata:
      case kFormStrx:
        r.Uleb();
        return nullptr;
      case kFormSdata:
        r.Sleb();
        return nullptr;
      case kFormBlock:
        r.Skip(r.Uleb());
        return nullptr;
      case kFormBlock1:
        r.Skip(r.U8());
        return nullptr;
      case kFormBlock2:
        r.Skip(r.U16());
        return nullptr;
      case kFormBlock4:
        r.Skip(r.U32());
        return nullptr;
      default:  // a form a line table header does not use: give up
        r.Skip(~uint64_t{0});
        return nullptr;
    }
  }

  // Runs `h`'s program.  With `target` != 0: stops at the row that covers
  // it (true, with its file and line).  With `sequences`: appends every
  // sequence's address range.
  bool RunLineProgram(const LineHeader& h, uint64_t target, uint64_t* file_out,
                      int* line_out, std::vector<Sequence>* sequences = nullptr,
                      const uint8_t* unit = nullptr) const {
    Reader r(h.program, h.end);
    struct Row {
      uint64_t address = 0;
      uint64_t file = 1;
      int64_t line = 1;
    };
    Row row;
    Row previous;
    bool have_previous = false;
    uint64_t low = 0;
    bool in_sequence = false;
    const uint8_t special_base = h.opcode_base;
    auto emit = [&]() {
      if (!in_sequence) {
        low = row.address;
        in_sequence = true;
      }
      if (sequences == nullptr && have_previous && previous.address <= target &&
          target < row.address) {
        *file_out = previous.file;
        *line_out = static_cast<int>(previous.line);
        return true;
      }
      previous = row;
      have_previous = true;
      return false;
    };
    while (!r.AtEnd() && r.ok()) {
      const uint8_t op = r.U8();
      if (op >= special_base) {
        const uint8_t adjusted = op - special_base;
        row.address += static_cast<uint64_t>(adjusted / h.line_range) *
                       h.min_instruction_length;
        row.line += h.line_base + adjusted % h.line_range;
        if (emit()) return true;
        continue;
      }
      switch (op) {
        case 0: {  // extended
          const uint64_t length = r.Uleb();
          if (length == 0 || !r.ok()) return false;
          const uint8_t* next =
              r.pos() + std::min<uint64_t>(
                            length, static_cast<uint64_t>(h.end - r.pos()));
          const uint8_t sub = r.U8();
          if (sub == 1) {  // end_sequence
            if (emit()) return true;
            if (sequences != nullptr && in_sequence && row.address > low) {
              sequences->push_back({low, row.address, unit});
            }
            row = Row();
            have_previous = false;
            in_sequence = false;
          } else if (sub == 2) {  // set_address
            row.address = r.Fixed(length - 1);
          }
          r = Reader(next, h.end);
          break;
        }
        case 1:  // copy
          if (emit()) return true;
          break;
        case 2:  // advance_pc
          row.address += r.Uleb() * h.min_instruction_length;
          break;
        case 3:  // advance_line
          row.line += r.Sleb();
          break;
        case 4:  // set_file
          row.file = r.Uleb();
          break;
        case 5:  // set_column
          r.Uleb();
          break;
        case 6:   // negate_stmt
        case 7:   // set_basic_block
        case 10:  // set_prologue_end
        case 11:  // set_epilogue_begin
          break;
        case 8:  // const_add_pc
          row.address +=
              static_cast<uint64_t>((255 - special_base) / h.line_range) *
              h.min_instruction_length;
          break;
        case 9:  // fixed_advance_pc
          row.address += r.U16();
          break;
        default:  // a standard opcode this reader does not know: skip it
          for (uint8_t i = 0; i < h.opcode_lengths[op - 1]; ++i) r.Uleb();
          break;
      }
    }
    return false;
  }

  void Index() {
    indexed_ = true;
    const uint8_t* unit = debug_line_.data;
    while (unit != nullptr && unit < debug_line_.end()) {
      LineHeader h;
      if (!ReadLineHeader(unit, &h)) break;
      uint64_t file = 0;
      int line = 0;
      RunLineProgram(h, 0, &file, &line, &sequences_, unit);
      unit = h.end;
    }
  }

  void* map_ = nullptr;
  size_t map_size_ = 0;
  Bytes symtab_, symtab_strings_, dynsym_, dynsym_strings_;
  Bytes debug_line_, debug_line_str_, debug_str_;
  bool indexed_ = false;
  std::vector<Sequence> sequences_;
};

std::mutex& ObjectsMutex() {
  static auto* mu = new std::mutex;
  return *mu;
}

// By path; nullptr: not readable.  Guarded by ObjectsMutex().
std::map<std::string, std::unique_ptr<ElfObject>>& Objects() {
  static auto* objects = new std::map<std::string, std::unique_ptr<ElfObject>>;
  return *objects;
}

ElfObject* ObjectLocked(const std::string& path) {
  auto [it, inserted] = Objects().try_emplace(path);
  if (inserted) {
    auto object = std::make_unique<ElfObject>();
    if (object->Open(path)) it->second = std::move(object);
  }
  return it->second.get();
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

CodeLocation ResolveReturnAddress(const void* return_address) {
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
  // The program itself has an empty name in the link map.
  const bool program = map->l_name == nullptr || map->l_name[0] == '\0';
  const std::string path = program ? "/proc/self/exe" : map->l_name;
  if (info.dli_fname != nullptr) {
    where.object = std::string(BaseName(info.dli_fname));
  }
  bool read = false;
  {
    std::lock_guard<std::mutex> lock(ObjectsMutex());
    ElfObject* object = ObjectLocked(path);
    if (object != nullptr) {
      read = true;
      where.symbol = object->FunctionAt(where.offset);
      object->LineAt(where.offset, &where.file, &where.line);
    }
  }
  // An object that cannot be read (the vDSO, a deleted file): the nearest
  // dynamic symbol below, which is all the loader knows.
  if (!read && info.dli_sname != nullptr) where.symbol = info.dli_sname;
  if (!where.symbol.empty()) {
    where.function = ReadableFunctionName(where.symbol);
  }
  return where;
}

}  // namespace uncore::ompt
