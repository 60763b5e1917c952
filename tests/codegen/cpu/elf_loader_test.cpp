// The ELF object loader (codegen/cpu/elf_loader.h) on real LLVM output (small IR modules compiled by the
// LLVM plugin): every relocation kind it supports, checked by running the code; and the files it
// must refuse without crashing: another machine or class, truncated, corrupted, an unsupported
// relocation, an undefined symbol. Also the plugin's own load errors (codegen/cpu/plugin.h).
#include "codegen/cpu/elf_loader.h"

#include <elf.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "codegen/cpu/plugin.h"

namespace {

using lf::cpu::load_object;

std::string compile(const std::string& ir, bool pic = true) {
  auto api = lf::cpu::plugin::get();
  EXPECT_TRUE(api.ok()) << api.status();
  if (!api.ok()) return "";
  auto obj = (*api)->compile_ir(ir, pic);
  EXPECT_TRUE(obj.ok()) << obj.status();
  return obj.ok() ? *obj : "";
}

// Calls fn(relocation, its place in the file) for every relocation of an object.
template <typename Fn>
void for_each_relocation(const std::string& obj, Fn fn) {
  Elf64_Ehdr eh;
  std::memcpy(&eh, obj.data(), sizeof eh);
  for (int i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr s;
    std::memcpy(&s, obj.data() + eh.e_shoff + i * sizeof(Elf64_Shdr), sizeof s);
    if (s.sh_type != SHT_RELA) continue;
    for (uint64_t at = s.sh_offset; at < s.sh_offset + s.sh_size; at += sizeof(Elf64_Rela)) {
      Elf64_Rela r;
      std::memcpy(&r, obj.data() + at, sizeof r);
      fn(r, at);
    }
  }
}

// The relocations of an object, by type (to check that a test exercises what it says it does).
std::vector<uint32_t> relocation_types(const std::string& obj) {
  std::vector<uint32_t> out;
  for_each_relocation(obj, [&](const Elf64_Rela& r, uint64_t) { out.push_back(static_cast<uint32_t>(ELF64_R_TYPE(r.r_info))); });
  return out;
}
bool has(const std::vector<uint32_t>& types, uint32_t t) { return std::find(types.begin(), types.end(), t) != types.end(); }

// Replaces every relocation of type `from` by `to` (same semantics for the loader, or a type it
// must refuse).
std::string retype(std::string obj, uint32_t from, uint32_t to) {
  std::string out = obj;
  for_each_relocation(obj, [&](Elf64_Rela r, uint64_t at) {
    if (ELF64_R_TYPE(r.r_info) != from) return;
    r.r_info = ELF64_R_INFO(ELF64_R_SYM(r.r_info), to);
    std::memcpy(out.data() + at, &r, sizeof r);
  });
  return out;
}

// Calls of libm (PLT32, through a stub), constants from a constant pool (PC32), a table of function
// pointers (R_X86_64_64), label differences in data (PC64 and PC32 in a data section), the address of
// an external function and of external data (REX_GOTPCRELX and GOTPCRELX, through the GOT).
constexpr const char* kIr = R"(
declare float @cosf(float)
declare double @exp(double)
@stderr = external global ptr

define float @call_cos(float %x) {
  %y = call float @cosf(float %x)
  %z = fmul float %y, 3.5
  ret float %z
}
define double @call_exp(double %x) {
  %y = call double @exp(double %x)
  %z = fadd double %y, 0.125
  ret double %z
}
define i64 @twice(i64 %x) {
  %y = add i64 %x, %x
  ret i64 %y
}
define i64 @thrice(i64 %x) {
  %y = mul i64 %x, 3
  ret i64 %y
}
@table = internal constant [2 x ptr] [ptr @twice, ptr @thrice]
define i64 @call_table(i64 %i, i64 %x) {
  %p = getelementptr [2 x ptr], ptr @table, i64 0, i64 %i
  %f = load ptr, ptr %p
  %r = call i64 %f(i64 %x)
  ret i64 %r
}
@diff64 = constant i64 sub (i64 ptrtoint (ptr @twice to i64), i64 ptrtoint (ptr @diff64 to i64))
@diff32 = constant i32 trunc (i64 sub (i64 ptrtoint (ptr @thrice to i64), i64 ptrtoint (ptr @diff32 to i64)) to i32)
define ptr @cos_address() {
  ret ptr @cosf
}
define ptr @stderr_address() {
  ret ptr @stderr
}
define i32 @read_stderr_nonnull() {
  %f = load ptr, ptr @stderr
  %nz = icmp ne ptr %f, null
  %r = zext i1 %nz to i32
  ret i32 %r
}
)";

TEST(ElfLoader, EveryRelocationKindOnLlvmOutput) {
  std::string obj = compile(kIr);
  ASSERT_FALSE(obj.empty());
  auto types = relocation_types(obj);
  for (uint32_t t : {R_X86_64_64, R_X86_64_PC32, R_X86_64_PLT32, R_X86_64_PC64, R_X86_64_REX_GOTPCRELX})
    EXPECT_TRUE(has(types, t)) << "LLVM emitted no relocation of type " << t << " here";
  auto loaded = load_object(obj);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const lf::cpu::LoadedObject& o = **loaded;
  auto call_cos = reinterpret_cast<float (*)(float)>(o.symbol("call_cos"));
  auto call_exp = reinterpret_cast<double (*)(double)>(o.symbol("call_exp"));
  auto call_table = reinterpret_cast<int64_t (*)(int64_t, int64_t)>(o.symbol("call_table"));
  auto cos_address = reinterpret_cast<void* (*)()>(o.symbol("cos_address"));
  auto stderr_address = reinterpret_cast<void* (*)()>(o.symbol("stderr_address"));
  auto read_stderr = reinterpret_cast<int (*)()>(o.symbol("read_stderr_nonnull"));
  ASSERT_TRUE(call_cos && call_exp && call_table && cos_address && stderr_address && read_stderr);
  EXPECT_EQ(o.symbol("no_such_symbol"), nullptr);
  EXPECT_FLOAT_EQ(call_cos(0.5f), std::cos(0.5f) * 3.5f);
  EXPECT_DOUBLE_EQ(call_exp(1.0), std::exp(1.0) + 0.125);
  EXPECT_EQ(call_table(0, 21), 42);
  EXPECT_EQ(call_table(1, 21), 63);
  EXPECT_EQ(cos_address(), lf::cpu::resolve_process_symbol("cosf"));
  EXPECT_EQ(stderr_address(), static_cast<void*>(&stderr));
  EXPECT_EQ(read_stderr(), 1);
  auto* diff64 = static_cast<const int64_t*>(o.symbol("diff64"));
  auto* diff32 = static_cast<const int32_t*>(o.symbol("diff32"));
  ASSERT_TRUE(diff64 && diff32);
  EXPECT_EQ(reinterpret_cast<intptr_t>(diff64) + *diff64, reinterpret_cast<intptr_t>(o.symbol("twice")));
  EXPECT_EQ(reinterpret_cast<intptr_t>(diff32) + *diff32, reinterpret_cast<intptr_t>(o.symbol("thrice")));
}

// GOTPCREL and GOTPCRELX mean the same to the loader as REX_GOTPCRELX (no relaxation is done).
TEST(ElfLoader, GotRelocationsWithoutRelaxation) {
  std::string obj = compile(kIr);
  ASSERT_FALSE(obj.empty());
  for (uint32_t t : {R_X86_64_GOTPCREL, R_X86_64_GOTPCRELX}) {
    std::string changed = retype(obj, R_X86_64_REX_GOTPCRELX, t);
    ASSERT_TRUE(has(relocation_types(changed), t));
    auto loaded = load_object(changed);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    auto stderr_address = reinterpret_cast<void* (*)()>((*loaded)->symbol("stderr_address"));
    EXPECT_EQ(stderr_address(), static_cast<void*>(&stderr));
  }
}

// Code that is not position-independent uses absolute 32-bit addresses, which a mapping anywhere in
// the address space cannot honour: refused by name.
TEST(ElfLoader, AbsoluteRelocationIsRefused) {
  std::string obj = compile(R"(
@g = dso_local global i32 7
define ptr @address() {
  ret ptr @g
}
)", /*pic=*/false);
  ASSERT_FALSE(obj.empty());
  auto loaded = load_object(obj);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("unsupported relocation R_X86_64_32"), std::string::npos)
      << loaded.status();
  std::string indexed = compile(R"(
@a = dso_local global [4 x i32] zeroinitializer
define i32 @get(i64 %i) {
  %p = getelementptr [4 x i32], ptr @a, i64 0, i64 %i
  %v = load i32, ptr %p
  ret i32 %v
}
)", /*pic=*/false);
  ASSERT_TRUE(has(relocation_types(indexed), R_X86_64_32S));
  auto s = load_object(indexed);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("unsupported relocation R_X86_64_32S"), std::string::npos) << s.status();
  auto tpoff = load_object(retype(compile(kIr), R_X86_64_PLT32, R_X86_64_TPOFF32));
  ASSERT_FALSE(tpoff.ok());
  EXPECT_NE(tpoff.status().message().find("R_X86_64_TPOFF32"), std::string::npos) << tpoff.status();
  auto unknown = load_object(retype(compile(kIr), R_X86_64_PLT32, 200));
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("type 200"), std::string::npos) << unknown.status();
}

TEST(ElfLoader, UndefinedSymbolIsAnError) {
  std::string obj = compile(R"(
declare void @lf_no_such_function()
define void @f() {
  call void @lf_no_such_function()
  ret void
}
)");
  auto loaded = load_object(obj);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("undefined symbol lf_no_such_function"), std::string::npos)
      << loaded.status();
}

TEST(ElfLoader, WrongMachineOrClassIsRefused) {
  std::string obj = compile(kIr);
  ASSERT_FALSE(obj.empty());
  std::string arm = obj;
  uint16_t machine = EM_AARCH64;
  std::memcpy(arm.data() + offsetof(Elf64_Ehdr, e_machine), &machine, 2);
  auto a = load_object(arm);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("not x86-64"), std::string::npos) << a.status();
  std::string elf32 = obj;
  elf32[EI_CLASS] = ELFCLASS32;
  auto b = load_object(elf32);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("not ELF64"), std::string::npos) << b.status();
  auto c = load_object("definitely not an object file, but long enough to hold an ELF header....");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("not an ELF file"), std::string::npos) << c.status();
}

// Every cut of a real object is refused (the section headers come last), never read past.
TEST(ElfLoader, TruncatedObjectIsRefused) {
  std::string obj = compile(kIr);
  ASSERT_FALSE(obj.empty());
  for (size_t n = 0; n < obj.size(); n += (n < 128 ? 1 : 13)) {
    auto loaded = load_object(std::string_view(obj).substr(0, n));
    EXPECT_FALSE(loaded.ok()) << "a cut at " << n << " of " << obj.size() << " bytes loaded";
  }
}

// Random damage: whatever happens, no crash (and no out-of-bounds read under ASan); what loads is
// not run.
TEST(ElfLoader, CorruptedObjectNeverCrashes) {
  std::string obj = compile(kIr);
  ASSERT_FALSE(obj.empty());
  std::mt19937 rng(5);
  int refused = 0;
  constexpr int kTrials = 3000;
  for (int i = 0; i < kTrials; ++i) {
    std::string bad = obj;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) bad[rng() % bad.size()] ^= static_cast<char>(1 + rng() % 255);
    refused += !load_object(bad).ok();
  }
  EXPECT_GT(refused, 0);
}

TEST(LlvmPlugin, LoadErrorsSayWhatAndWhere) {
  auto missing = lf::cpu::plugin::load_from("/nonexistent/liblazyfuse-llvm.so");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), lf::StatusCode::kUnavailable);
  EXPECT_NE(missing.status().message().find("/nonexistent/liblazyfuse-llvm.so"), std::string::npos)
      << missing.status();
  auto not_plugin = lf::cpu::plugin::load_from("libm.so.6");
  ASSERT_FALSE(not_plugin.ok());
  EXPECT_NE(not_plugin.status().message().find("no lazyfuse_llvm_plugin symbol"), std::string::npos)
      << not_plugin.status();
}

}  // namespace

// Issue 50 item 13: a cache entry forged with a recomputed checksum, changing only the ELF header
// or section headers. Every field of every section header (and the header's section fields) is set
// to values near and far from its own; each object that still loads must compute the right
// answers (run in a child, so that a crash shows as a failure, not the end of the suite). A forged
// relocation table's type (0x71) was skipped silently, and its code then crashed.
namespace {

// 0 when the object's functions give the right answers, 1 when one is wrong.
int run_checks(const lf::cpu::LoadedObject& o) {
  auto call_cos = reinterpret_cast<float (*)(float)>(o.symbol("call_cos"));
  auto call_exp = reinterpret_cast<double (*)(double)>(o.symbol("call_exp"));
  auto call_table = reinterpret_cast<int64_t (*)(int64_t, int64_t)>(o.symbol("call_table"));
  auto read_stderr = reinterpret_cast<int (*)()>(o.symbol("read_stderr_nonnull"));
  if (!call_cos || !call_exp || !call_table || !read_stderr) return 0;  // not found: the caller compiles again
  bool ok = call_cos(0.5f) == std::cos(0.5f) * 3.5f && call_exp(1.0) == std::exp(1.0) + 0.125 &&
            call_table(0, 21) == 42 && call_table(1, 21) == 63 && read_stderr() == 1;
  return ok ? 0 : 1;
}

}  // namespace

TEST(ElfLoader, ForgedSectionHeadersNeverCrashOrComputeWrong) {
  const std::string obj = compile(kIr);
  ASSERT_FALSE(obj.empty());
  Elf64_Ehdr eh;
  std::memcpy(&eh, obj.data(), sizeof eh);
  struct Field {
    size_t offset, width;
  };
  std::vector<Field> fields;
  for (size_t s = 0; s < eh.e_shnum; ++s) {
    const size_t at = eh.e_shoff + s * sizeof(Elf64_Shdr);
    for (auto [off, width] : {std::pair{offsetof(Elf64_Shdr, sh_name), 4}, {offsetof(Elf64_Shdr, sh_type), 4},
                              {offsetof(Elf64_Shdr, sh_flags), 8}, {offsetof(Elf64_Shdr, sh_addr), 8},
                              {offsetof(Elf64_Shdr, sh_offset), 8}, {offsetof(Elf64_Shdr, sh_size), 8},
                              {offsetof(Elf64_Shdr, sh_link), 4}, {offsetof(Elf64_Shdr, sh_info), 4},
                              {offsetof(Elf64_Shdr, sh_addralign), 8}, {offsetof(Elf64_Shdr, sh_entsize), 8}})
      fields.push_back({at + off, static_cast<size_t>(width)});
  }
  for (auto [off, width] : {std::pair{offsetof(Elf64_Ehdr, e_shoff), 8}, {offsetof(Elf64_Ehdr, e_shnum), 2},
                            {offsetof(Elf64_Ehdr, e_shstrndx), 2}, {offsetof(Elf64_Ehdr, e_shentsize), 2},
                            {offsetof(Elf64_Ehdr, e_entry), 8}, {offsetof(Elf64_Ehdr, e_flags), 4}})
    fields.push_back({off, static_cast<size_t>(width)});
  int loaded = 0, tried = 0;
  std::vector<std::string> failures;
  for (const Field& f : fields) {
    uint64_t orig = 0;
    std::memcpy(&orig, obj.data() + f.offset, f.width);
    const uint64_t mask = f.width == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * f.width)) - 1;
    for (uint64_t v : {uint64_t{0}, uint64_t{1}, orig ^ 1, orig ^ 2, orig ^ 4, orig + 8, orig - 8, orig + 16, orig - 16,
                       orig + 24, orig - 24, orig * 2, orig / 2, uint64_t{0x71}, uint64_t{SHT_RELA}, uint64_t{SHT_PROGBITS},
                       uint64_t{SHT_NOBITS}, orig | SHF_EXECINSTR, orig & ~uint64_t{SHF_EXECINSTR}, orig | SHF_WRITE,
                       orig & ~uint64_t{SHF_ALLOC}, ~uint64_t{0}, uint64_t{1} << 62}) {
      v &= mask;
      if (v == orig) continue;
      std::string m = obj;
      std::memcpy(m.data() + f.offset, &v, f.width);
      ++tried;
      auto l = load_object(m);
      if (!l.ok()) continue;
      ++loaded;
      const pid_t pid = fork();
      if (pid == 0) _exit(run_checks(**l));
      int status = 0;
      waitpid(pid, &status, 0);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        failures.push_back("byte " + std::to_string(f.offset) + " (section " +
                           std::to_string(f.offset >= eh.e_shoff ? (f.offset - eh.e_shoff) / sizeof(Elf64_Shdr) : -1) +
                           ", field at " + std::to_string(f.offset >= eh.e_shoff ? (f.offset - eh.e_shoff) % sizeof(Elf64_Shdr) : f.offset) +
                           ") = " + std::to_string(v) +
                           (WIFSIGNALED(status) ? ": signal " + std::to_string(WTERMSIG(status)) : ": a wrong answer"));
    }
  }
  EXPECT_GT(tried, 1000);
  EXPECT_GT(loaded, 0) << "harmless changes (sh_addr, e_entry) still load";
  EXPECT_TRUE(failures.empty()) << failures.size() << " of " << loaded << " loaded forgeries failed, e.g. "
                                << (failures.empty() ? "" : failures[0]);
}
