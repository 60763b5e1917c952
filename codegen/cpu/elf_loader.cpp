// The ELF x86-64 relocatable-object loader (elf_loader.h). Every offset and size read from the file
// is checked before use: a cached object that is damaged or from another toolchain must give an
// error (the kernel is then compiled again), never a crash.
#include "codegen/cpu/elf_loader.h"

#include <dlfcn.h>
#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <vector>

#include "runtime/status.h"

namespace lf::cpu {
namespace {

lf::Status bad(const std::string& why) { return lf::InvalidArgumentError("object file: " + why); }

// Sections LLVM puts in a kernel's object that running it does not need: unwind tables (nothing
// unwinds through a kernel) and notes.
bool skipped(const Elf64_Shdr& s) { return s.sh_type == SHT_X86_64_UNWIND || s.sh_type == SHT_NOTE; }

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

constexpr size_t kStubBytes = 8;  // jmp *slot(%rip) (6 bytes), int3 padding

const char* relocation_name(uint32_t type) {
  switch (type) {
    case R_X86_64_32: return "R_X86_64_32";
    case R_X86_64_32S: return "R_X86_64_32S";
    case R_X86_64_GOT32: return "R_X86_64_GOT32";
    case R_X86_64_GOTPC32: return "R_X86_64_GOTPC32";
    case R_X86_64_GOTOFF64: return "R_X86_64_GOTOFF64";
    case R_X86_64_TLSGD: return "R_X86_64_TLSGD";
    case R_X86_64_TLSLD: return "R_X86_64_TLSLD";
    case R_X86_64_DTPOFF32: return "R_X86_64_DTPOFF32";
    case R_X86_64_GOTTPOFF: return "R_X86_64_GOTTPOFF";
    case R_X86_64_TPOFF32: return "R_X86_64_TPOFF32";
    default: return "";
  }
}

// The file's parts, checked: section headers, the symbol table and its strings.
struct Parsed {
  std::string_view file;
  const Elf64_Ehdr* eh = nullptr;
  std::vector<Elf64_Shdr> sections;
  std::vector<Elf64_Sym> symbols;
  std::string_view strings;  // the symbol table's string table
};

bool in_file(std::string_view file, uint64_t offset, uint64_t size) {
  return offset <= file.size() && size <= file.size() - offset;
}

// The section types LLVM writes into a kernel's object; any other (a forged or damaged type, such
// as a relocation table whose type reads 0x71) is refused instead of being skipped.
bool known_type(uint32_t t) {
  constexpr uint32_t kLlvmAddrsig = 0x6fff4c03;  // SHT_LLVM_ADDRSIG
  switch (t) {
    case SHT_NULL: case SHT_PROGBITS: case SHT_NOBITS: case SHT_SYMTAB: case SHT_STRTAB: case SHT_RELA:
    case SHT_REL: case SHT_NOTE: case SHT_GROUP: case SHT_X86_64_UNWIND: case kLlvmAddrsig:
      return true;
    default: return false;
  }
}

lf::StatusOr<std::string> section_name(std::string_view table, const Elf64_Shdr& s) {
  if (s.sh_name >= table.size()) return bad("a section name lies outside its string table");
  size_t end = table.find('\0', s.sh_name);
  if (end == std::string_view::npos) return bad("an unterminated section name");
  return std::string(table.substr(s.sh_name, end - s.sh_name));
}

// The file is its header, its sections and its section header table, one after another, each at
// the first offset its alignment allows after the one before (as LLVM writes it), up to its end: a section header
// whose offset or size was changed shows as an overlap or a gap (a relocation table cut short by
// one entry leaves 24 bytes no part claims).
lf::Status check_tiling(std::string_view file, const Elf64_Ehdr& eh, const std::vector<Elf64_Shdr>& sections) {
  struct Range {
    uint64_t begin, end, align;
  };
  std::vector<Range> parts{{0, sizeof(Elf64_Ehdr), 1},
                           {eh.e_shoff, eh.e_shoff + uint64_t{eh.e_shnum} * sizeof(Elf64_Shdr), 8}};
  for (const Elf64_Shdr& s : sections) {
    if (s.sh_type == SHT_NOBITS || s.sh_type == SHT_NULL || s.sh_size == 0) continue;
    const uint64_t align = std::max<uint64_t>(s.sh_addralign, 1);
    if (align > 4096 || (align & (align - 1))) return bad("unsupported section alignment");
    parts.push_back({s.sh_offset, s.sh_offset + s.sh_size, align});  // in the file: checked before
  }
  std::sort(parts.begin(), parts.end(), [](const Range& a, const Range& b) { return a.begin < b.begin; });
  uint64_t end = 0;
  for (const Range& r : parts) {
    if (r.begin < end) return bad("sections overlap");
    if (r.begin != align_up(end, r.align)) return bad("a gap between sections");
    end = r.end;
  }
  if (end != file.size()) return bad("bytes after the last section");
  return lf::OkStatus();
}

lf::StatusOr<Parsed> parse(std::string_view file) {
  Parsed p;
  p.file = file;
  if (file.size() < sizeof(Elf64_Ehdr)) return bad("truncated (" + std::to_string(file.size()) + " bytes)");
  Elf64_Ehdr eh;
  std::memcpy(&eh, file.data(), sizeof eh);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) return bad("not an ELF file");
  if (eh.e_ident[EI_CLASS] != ELFCLASS64) return bad("not ELF64");
  if (eh.e_ident[EI_DATA] != ELFDATA2LSB) return bad("not little-endian");
  if (eh.e_machine != EM_X86_64) return bad("machine " + std::to_string(eh.e_machine) + ", not x86-64");
  if (eh.e_type != ET_REL) return bad("not a relocatable object (type " + std::to_string(eh.e_type) + ")");
  if (eh.e_shentsize != sizeof(Elf64_Shdr)) return bad("unexpected section header size");
  if (eh.e_shnum == 0 || eh.e_shnum >= SHN_LORESERVE) return bad("unexpected section count");
  if (!in_file(file, eh.e_shoff, uint64_t{eh.e_shnum} * sizeof(Elf64_Shdr))) return bad("truncated section headers");
  p.sections.resize(eh.e_shnum);
  std::memcpy(p.sections.data(), file.data() + eh.e_shoff, p.sections.size() * sizeof(Elf64_Shdr));
  const Elf64_Shdr* symtab = nullptr;
  for (const Elf64_Shdr& s : p.sections) {
    if (!known_type(s.sh_type)) return bad("unknown section type " + std::to_string(s.sh_type));
    if (s.sh_type == SHT_REL) return bad("SHT_REL relocations (x86-64 uses SHT_RELA)");
    if (s.sh_type != SHT_NOBITS && s.sh_type != SHT_NULL && !in_file(file, s.sh_offset, s.sh_size))
      return bad("a section lies outside the file");
    if ((s.sh_type == SHT_RELA || s.sh_type == SHT_SYMTAB) && s.sh_size % 24 != 0)  // both entries are 24 bytes
      return bad("a table that is not a whole number of entries");
    // Zeros are writable data (.bss); read-only data has its bytes in the file.
    if (s.sh_type == SHT_NOBITS && !(s.sh_flags & SHF_WRITE)) return bad("read-only data without bytes");
    // Mergeable constants (.rodata.cst8) are whole entries.
    if ((s.sh_flags & SHF_MERGE) && s.sh_entsize > 0 && s.sh_size % s.sh_entsize != 0)
      return bad("a constant section that is not a whole number of entries");
    if (s.sh_type == SHT_SYMTAB) {
      if (symtab) return bad("two symbol tables");
      symtab = &s;
    }
  }
  if (auto st = check_tiling(file, eh, p.sections); !st.ok()) return st;
  // Section names: a relocation table must be named for the section it patches (".rela.text"
  // for ".text"), and every ".rela" section must be one, so that a forged type or target index
  // cannot make the loader skip the relocations of loaded code.
  if (eh.e_shstrndx >= p.sections.size() || p.sections[eh.e_shstrndx].sh_type != SHT_STRTAB)
    return bad("bad section name table");
  const Elf64_Shdr& names = p.sections[eh.e_shstrndx];
  const std::string_view name_table = file.substr(names.sh_offset, names.sh_size);
  for (const Elf64_Shdr& s : p.sections) {
    if (s.sh_type == SHT_NULL) continue;
    auto name = section_name(name_table, s);
    if (!name.ok()) return name.status();
    const bool rela_name = name->rfind(".rela", 0) == 0 || name->rfind(".rel.", 0) == 0;
    if (rela_name != (s.sh_type == SHT_RELA)) return bad("section " + *name + " has type " + std::to_string(s.sh_type));
    if (s.sh_type != SHT_RELA) continue;
    if (s.sh_info >= p.sections.size()) return bad("a bad relocation section");
    auto target = section_name(name_table, p.sections[s.sh_info]);
    if (!target.ok()) return target.status();
    if (*name != ".rela" + *target) return bad("relocation section " + *name + " patches section " + *target);
  }
  for (const Elf64_Shdr& s : p.sections) {  // ".rodata.cst<N>" holds entries of N bytes
    auto name = section_name(name_table, s);
    if (!name.ok() || name->rfind(".rodata.cst", 0) != 0) continue;
    if (std::to_string(s.sh_entsize) != name->substr(11)) return bad("section " + *name + " with entries of " + std::to_string(s.sh_entsize) + " bytes");
  }
  if (!symtab) return bad("no symbol table");
  if (symtab->sh_entsize != sizeof(Elf64_Sym) || symtab->sh_link >= p.sections.size()) return bad("bad symbol table");
  const Elf64_Shdr& strtab = p.sections[symtab->sh_link];
  if (strtab.sh_type != SHT_STRTAB) return bad("bad symbol string table");
  p.strings = file.substr(strtab.sh_offset, strtab.sh_size);
  p.symbols.resize(symtab->sh_size / sizeof(Elf64_Sym));
  std::memcpy(p.symbols.data(), file.data() + symtab->sh_offset, p.symbols.size() * sizeof(Elf64_Sym));
  return p;
}

lf::StatusOr<std::string> symbol_name(const Parsed& p, const Elf64_Sym& s) {
  if (s.st_name >= p.strings.size()) return bad("a symbol name lies outside its string table");
  size_t end = p.strings.find('\0', s.st_name);
  if (end == std::string_view::npos) return bad("an unterminated symbol name");
  return std::string(p.strings.substr(s.st_name, end - s.st_name));
}

// Where each loaded section goes: code (and the stubs after it), then read-only data (and the
// GOT), then writable data, each part starting on a page of its own so that it gets its own
// protection.
struct Layout {
  std::vector<int64_t> offset;  // per section: its offset in the mapping, or -1 (not loaded)
  uint64_t stubs = 0, got = 0, writable = 0, size = 0, text_end = 0, ro_end = 0;
};

lf::StatusOr<Layout> lay_out(const Parsed& p, size_t slots) {
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  Layout l;
  l.offset.assign(p.sections.size(), -1);
  uint64_t at = 0;
  auto place = [&](bool exec, bool write) -> lf::Status {
    for (size_t i = 0; i < p.sections.size(); ++i) {
      const Elf64_Shdr& s = p.sections[i];
      if (!(s.sh_flags & SHF_ALLOC) || skipped(s)) continue;
      if (bool(s.sh_flags & SHF_EXECINSTR) != exec || bool(s.sh_flags & SHF_WRITE) != write) continue;
      if (s.sh_type != SHT_PROGBITS && s.sh_type != SHT_NOBITS)
        return bad("unsupported allocated section type " + std::to_string(s.sh_type));
      if (s.sh_flags & SHF_TLS) return bad("thread-local data");
      uint64_t align = std::max<uint64_t>(s.sh_addralign, 1);
      if (align > page || (align & (align - 1))) return bad("unsupported section alignment");
      if (s.sh_size > (uint64_t{1} << 30)) return bad("a section too large for a kernel");
      at = align_up(at, align);
      l.offset[i] = static_cast<int64_t>(at);
      at += s.sh_size;
    }
    return lf::OkStatus();
  };
  if (auto st = place(true, false); !st.ok()) return st;
  l.stubs = align_up(at, 16);
  at = l.stubs + slots * kStubBytes;
  l.text_end = align_up(at, page);
  at = l.text_end;
  if (auto st = place(false, false); !st.ok()) return st;
  l.got = align_up(at, 8);
  at = l.got + slots * 8;
  l.ro_end = align_up(at, page);
  at = l.ro_end;
  l.writable = at;
  if (auto st = place(false, true); !st.ok()) return st;
  if (auto st = place(true, true); !st.ok()) return st;  // writable code: refused below
  for (size_t i = 0; i < p.sections.size(); ++i)
    if (l.offset[i] >= 0 && (p.sections[i].sh_flags & SHF_EXECINSTR) && (p.sections[i].sh_flags & SHF_WRITE))
      return bad("a writable code section");
  l.size = std::max<uint64_t>(align_up(at, page), page);
  return l;
}

}  // namespace

void* resolve_process_symbol(const std::string& name) {
  if (void* p = dlsym(RTLD_DEFAULT, name.c_str())) return p;
  // libmvec's vector functions (_ZGV...): the plugin vectorizes calls to them when it is present.
  static void* mvec = dlopen("libmvec.so.1", RTLD_NOW | RTLD_LOCAL);
  return mvec ? dlsym(mvec, name.c_str()) : nullptr;
}

LoadedObject::~LoadedObject() {
  if (base_) munmap(base_, size_);
}

void* LoadedObject::symbol(const std::string& name) const {
  auto it = symbols_.find(name);
  return it == symbols_.end() ? nullptr : it->second;
}

lf::StatusOr<std::unique_ptr<LoadedObject>> load_object(std::string_view object, const SymbolResolver& resolve) {
  auto parsed = parse(object);
  if (!parsed.ok()) return parsed.status();
  const Parsed& p = *parsed;
  // The relocation tables that patch loaded sections, checked against the symbol table.
  std::vector<const Elf64_Shdr*> relas;
  for (const Elf64_Shdr& s : p.sections) {
    if (s.sh_type != SHT_RELA) continue;
    if (s.sh_info >= p.sections.size() || s.sh_link >= p.sections.size() ||
        p.sections[s.sh_link].sh_type != SHT_SYMTAB || s.sh_entsize != sizeof(Elf64_Rela))
      return bad("a bad relocation section");
    const Elf64_Shdr& target = p.sections[s.sh_info];
    if (!(target.sh_flags & SHF_ALLOC) || skipped(target)) continue;
    relas.push_back(&s);
  }
  // One GOT slot and one stub per symbol that relocations name (more than needed, never short).
  std::map<uint32_t, size_t> slot_of;
  for (const Elf64_Shdr* r : relas) {
    for (uint64_t at = r->sh_offset; at < r->sh_offset + r->sh_size; at += sizeof(Elf64_Rela)) {
      Elf64_Rela rel;
      std::memcpy(&rel, p.file.data() + at, sizeof rel);
      uint32_t sym = static_cast<uint32_t>(ELF64_R_SYM(rel.r_info));
      if (sym >= p.symbols.size()) return bad("a relocation names no symbol");
      slot_of.emplace(sym, slot_of.size());
    }
  }
  auto layout = lay_out(p, slot_of.size());
  if (!layout.ok()) return layout.status();
  const Layout& l = *layout;

  void* base = mmap(nullptr, l.size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) return lf::ResourceExhaustedError("mmap of " + std::to_string(l.size) + " bytes failed");
  std::unique_ptr<LoadedObject> out(new LoadedObject());
  out->base_ = base;
  out->size_ = l.size;
  auto* mem = static_cast<uint8_t*>(base);
  const uint64_t addr0 = reinterpret_cast<uint64_t>(base);
  for (size_t i = 0; i < p.sections.size(); ++i) {
    const Elf64_Shdr& s = p.sections[i];
    if (l.offset[i] < 0 || s.sh_type == SHT_NOBITS) continue;  // the mapping is zeroed
    std::memcpy(mem + l.offset[i], p.file.data() + s.sh_offset, s.sh_size);
  }

  // Symbol addresses: defined ones in their loaded section, undefined ones from the resolver.
  std::vector<uint64_t> address(p.symbols.size(), 0);
  std::vector<bool> known(p.symbols.size(), false);
  auto symbol_address = [&](uint32_t index) -> lf::StatusOr<uint64_t> {
    if (known[index]) return address[index];
    const Elf64_Sym& s = p.symbols[index];
    uint64_t a = 0;
    if (s.st_shndx == SHN_UNDEF) {
      auto name = symbol_name(p, s);
      if (!name.ok()) return name.status();
      void* resolved = resolve(*name);
      if (!resolved && ELF64_ST_BIND(s.st_info) != STB_WEAK) return bad("undefined symbol " + *name);
      a = reinterpret_cast<uint64_t>(resolved);
    } else if (s.st_shndx == SHN_ABS) {
      a = s.st_value;
    } else if (s.st_shndx >= p.sections.size() || l.offset[s.st_shndx] < 0) {
      return bad("a symbol in a section that is not loaded");
    } else {
      const Elf64_Shdr& in = p.sections[s.st_shndx];
      if (s.st_value > in.sh_size || s.st_size > in.sh_size - s.st_value) return bad("a symbol past the end of its section");
      // A function runs where it lies: in code, whole (a section cut short would run zeros).
      if (ELF64_ST_TYPE(s.st_info) == STT_FUNC && !(in.sh_flags & SHF_EXECINSTR)) return bad("a function outside code");
      a = addr0 + static_cast<uint64_t>(l.offset[s.st_shndx]) + s.st_value;
    }
    address[index] = a;
    known[index] = true;
    return a;
  };
  auto fits32 = [](int64_t v) { return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max(); };

  for (const Elf64_Shdr* r : relas) {
    const Elf64_Shdr& target = p.sections[r->sh_info];
    uint8_t* section = mem + l.offset[r->sh_info];
    for (uint64_t at = r->sh_offset; at < r->sh_offset + r->sh_size; at += sizeof(Elf64_Rela)) {
      Elf64_Rela rel;
      std::memcpy(&rel, p.file.data() + at, sizeof rel);
      uint32_t type = static_cast<uint32_t>(ELF64_R_TYPE(rel.r_info));
      uint32_t sym = static_cast<uint32_t>(ELF64_R_SYM(rel.r_info));
      if (type == R_X86_64_NONE) continue;
      size_t width = (type == R_X86_64_64 || type == R_X86_64_PC64) ? 8 : 4;
      if (rel.r_offset > target.sh_size || width > target.sh_size - rel.r_offset)
        return bad("a relocation outside its section");
      if (target.sh_type == SHT_NOBITS) return bad("a relocation in a section without data");
      auto s = symbol_address(sym);
      if (!s.ok()) return s.status();
      // A reference to a defined symbol (a constant's label, a section, a function) lands inside
      // the symbol's section: its value plus the addend (in code, less the 4 bytes of a PC-relative
      // displacement, which the addend counts from the field's end).
      if (const Elf64_Sym& named = p.symbols[sym]; named.st_shndx != SHN_UNDEF && named.st_shndx < p.sections.size()) {
        const bool pc_field = (target.sh_flags & SHF_EXECINSTR) && type != R_X86_64_64 && type != R_X86_64_32 &&
                              type != R_X86_64_32S;  // an instruction's PC-relative displacement
        const int64_t at_offset = static_cast<int64_t>(named.st_value) + rel.r_addend + (pc_field ? 4 : 0);
        if (at_offset < -4 || at_offset >= static_cast<int64_t>(p.sections[named.st_shndx].sh_size))
          return bad("a relocation into a section past its end");
      }
      const uint64_t place = addr0 + static_cast<uint64_t>(l.offset[r->sh_info]) + rel.r_offset;
      const int64_t addend = rel.r_addend;
      const size_t slot = slot_of.at(sym);
      const uint64_t got = addr0 + l.got + slot * 8;
      uint64_t value = 0;
      switch (type) {
        case R_X86_64_64: value = *s + static_cast<uint64_t>(addend); break;
        case R_X86_64_PC64: value = *s + static_cast<uint64_t>(addend) - place; break;
        case R_X86_64_PC32:
        case R_X86_64_PLT32: {
          uint64_t dest = *s;
          // A call to a function outside the mapping goes through a stub that jumps via the GOT.
          bool far = dest < addr0 || dest >= addr0 + l.size;
          if (far && type == R_X86_64_PLT32) {
            std::memcpy(mem + l.got + slot * 8, &dest, 8);
            uint8_t* stub = mem + l.stubs + slot * kStubBytes;
            int32_t rel32 = static_cast<int32_t>(static_cast<int64_t>(got - (addr0 + l.stubs + slot * kStubBytes + 6)));
            const uint8_t jmp[2] = {0xff, 0x25};
            std::memcpy(stub, jmp, 2);
            std::memcpy(stub + 2, &rel32, 4);
            stub[6] = stub[7] = 0xcc;
            dest = addr0 + l.stubs + slot * kStubBytes;
          }
          value = dest + static_cast<uint64_t>(addend) - place;
          if (!fits32(static_cast<int64_t>(value))) return bad("a 32-bit PC-relative relocation out of range");
          break;
        }
        case R_X86_64_GOTPCREL:
        case R_X86_64_GOTPCRELX:
        case R_X86_64_REX_GOTPCRELX: {
          uint64_t dest = *s;
          std::memcpy(mem + l.got + slot * 8, &dest, 8);
          value = got + static_cast<uint64_t>(addend) - place;
          if (!fits32(static_cast<int64_t>(value))) return bad("a GOT-relative relocation out of range");
          break;
        }
        default: {
          std::string name = relocation_name(type);
          return bad("unsupported relocation " + (name.empty() ? "type " + std::to_string(type) : name));
        }
      }
      std::memcpy(section + rel.r_offset, &value, width);
    }
  }

  // Exported functions and data, by name.
  for (uint32_t i = 1; i < p.symbols.size(); ++i) {
    const Elf64_Sym& s = p.symbols[i];
    int bind = ELF64_ST_BIND(s.st_info), type = ELF64_ST_TYPE(s.st_info);
    if (s.st_shndx == SHN_UNDEF || (bind != STB_GLOBAL && bind != STB_WEAK)) continue;
    if (type != STT_FUNC && type != STT_OBJECT && type != STT_NOTYPE) continue;
    auto name = symbol_name(p, s);
    if (!name.ok()) return name.status();
    auto a = symbol_address(i);
    if (!a.ok()) return a.status();
    out->symbols_[*name] = reinterpret_cast<void*>(*a);
  }

  if (mprotect(base, l.text_end, PROT_READ | PROT_EXEC) != 0 ||
      (l.ro_end > l.text_end && mprotect(mem + l.text_end, l.ro_end - l.text_end, PROT_READ) != 0))
    return lf::InternalError("mprotect of a loaded kernel failed");
  return out;
}

}  // namespace lf::cpu
