// The CPU part of a kernel cache key, computed without LLVM (a lookup in the persistent cache must
// not load the LLVM plugin). LLVM picks the host CPU name and features from cpuid and xgetbv
// alone, so the words they read, with the LLVM version the plugin was built with and whether
// libmvec is there, decide the code it generates: two machines with the same key get the same code.
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "codegen/cpu/backend.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#ifndef LAZYFUSE_LLVM_VERSION
#error "LAZYFUSE_LLVM_VERSION (the LLVM version of the plugin build) must be defined by the build"
#endif

namespace lf::cpu {
namespace {

// FNV-1a, 64 bits: a stable hash of the cpuid words.
uint64_t fnv1a(const std::vector<uint32_t>& words) {
  uint64_t h = 1469598103934665603ull;
  for (uint32_t w : words)
    for (int i = 0; i < 4; ++i) {
      h ^= (w >> (8 * i)) & 0xff;
      h *= 1099511628211ull;
    }
  return h;
}

#if defined(__x86_64__)
struct Regs {
  uint32_t a = 0, b = 0, c = 0, d = 0;
};
Regs cpuid(uint32_t leaf, uint32_t sub = 0) {
  Regs r;
  __cpuid_count(leaf, sub, r.a, r.b, r.c, r.d);
  return r;
}

std::string compute() {
  Regs v = cpuid(0);
  const uint32_t max_leaf = v.a;
  char vendor[13] = {};
  __builtin_memcpy(vendor, &v.b, 4);
  __builtin_memcpy(vendor + 4, &v.d, 4);
  __builtin_memcpy(vendor + 8, &v.c, 4);
  // What LLVM's sys::getHostCPUName and getHostCPUFeatures read (llvm/lib/TargetParser/Host.cpp),
  // leaving out leaf 1's EBX (APIC id and logical CPU count differ between the cores of one CPU).
  std::vector<uint32_t> words{v.a, v.b, v.c, v.d};
  auto add = [&](uint32_t leaf, uint32_t sub, bool a, bool b, bool c, bool d) {
    Regs r = cpuid(leaf, sub);
    for (auto [use, w] : {std::pair{a, r.a}, {b, r.b}, {c, r.c}, {d, r.d}}) words.push_back(use ? w : 0);
  };
  Regs one = cpuid(1);
  words.insert(words.end(), {one.a, one.c, one.d});
  // Each cpuid is a trap to the hypervisor in a VM (about 12 us on the 2-core machine): leaf 7 once.
  Regs seven = max_leaf >= 7 ? cpuid(7) : Regs{};
  words.insert(words.end(), {seven.b, seven.c, seven.d});
  if (max_leaf >= 7) add(7, 1, true, true, true, true);
  if (max_leaf >= 0xd) add(0xd, 1, true, false, false, false);
  if (max_leaf >= 0x14) add(0x14, 0, false, true, false, false);
  if (max_leaf >= 0x19) add(0x19, 0, false, true, false, false);
  if (max_leaf >= 0x24) add(0x24, 0, false, true, false, false);
  Regs ext = cpuid(0x80000000);
  words.push_back(ext.a);
  if (ext.a >= 0x80000001) add(0x80000001, 0, false, false, true, true);
  if (ext.a >= 0x80000008) add(0x80000008, 0, false, true, false, false);
  // The register state the OS saves (AVX, AVX-512, AMX): LLVM drops features the OS does not enable.
  uint32_t xcr0 = 0;
  if (one.c & (1u << 27)) {  // OSXSAVE
    uint32_t hi = 0;
    __asm__("xgetbv" : "=a"(xcr0), "=d"(hi) : "c"(0));
  }
  words.push_back(xcr0);

  // Family, model and stepping as /proc/cpuinfo shows them, for people reading `lazyfuse-cache list`.
  uint32_t family = (one.a >> 8) & 0xf, model = (one.a >> 4) & 0xf, stepping = one.a & 0xf;
  if (family == 0xf) family += (one.a >> 20) & 0xff;
  if (family == 0x6 || family >= 0xf) model += ((one.a >> 16) & 0xf) << 4;
  std::string v_short = std::string(vendor) == "GenuineIntel"   ? "intel"
                        : std::string(vendor) == "AuthenticAMD" ? "amd"
                                                                : std::string(vendor);
  bool avx_state = (xcr0 & 0x6) == 0x6, avx512_state = (xcr0 & 0xe6) == 0xe6;
  std::string features;
  auto feature = [&](bool has, const char* name) {
    if (has) features += (features.empty() ? "+" : ",+") + std::string(name);
  };
  feature(one.c & (1u << 20), "sse4.2");
  feature(avx_state && (one.c & (1u << 28)), "avx");
  feature(avx_state && (seven.b & (1u << 5)), "avx2");
  feature(avx_state && (one.c & (1u << 12)), "fma");
  feature(avx512_state && (seven.b & (1u << 16)), "avx512f");
  feature(avx512_state && (seven.b & (1u << 30)), "avx512bw");
  char cpu[64], hash[24];
  std::snprintf(cpu, sizeof cpu, "%s-%u-%u-%u", v_short.c_str(), family, model, stepping);
  std::snprintf(hash, sizeof hash, "cpuid-%016llx", static_cast<unsigned long long>(fnv1a(words)));
  return std::string(cpu) + "/" + hash + "/" + (features.empty() ? "-" : features);
}
#else
// Elsewhere (aarch64 Linux) LLVM names the host CPU from /proc/cpuinfo's "CPU implementer" and
// "CPU part" lines and takes its features from the "Features" line (sys::getHostCPUName and
// getHostCPUFeatures): those lines, hashed, decide the code as the cpuid words do on x86-64.
std::string compute() {
  std::vector<uint32_t> words;
  std::string implementer = "?", part = "?";
  if (FILE* f = std::fopen("/proc/cpuinfo", "r")) {
    char line[4096];
    while (std::fgets(line, sizeof line, f)) {
      std::string l = line;
      auto is = [&](const char* key) { return l.rfind(key, 0) == 0; };
      if (l == "\n") break;  // the first processor's block is enough
      if (!is("CPU implementer") && !is("CPU part") && !is("Features")) continue;
      for (unsigned char c : l) words.push_back(c);
      std::string value = l.substr(l.find(':') == std::string::npos ? l.size() : l.find(':') + 1);
      while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.erase(0, 1);
      while (!value.empty() && (value.back() == '\n' || value.back() == ' ')) value.pop_back();
      if (is("CPU implementer")) implementer = value;
      if (is("CPU part")) part = value;
    }
    std::fclose(f);
  }
  char hash[32];
  std::snprintf(hash, sizeof hash, "cpuinfo-%016llx", static_cast<unsigned long long>(fnv1a(words)));
  return implementer + "-" + part + "/" + hash;
}
#endif

// The architecture the library (and so the plugin and its kernels) is built for.
#if defined(__x86_64__)
constexpr const char* kArch = "x86_64";
#elif defined(__aarch64__)
constexpr const char* kArch = "aarch64";
#else
constexpr const char* kArch = "other";
#endif

}  // namespace

#if defined(__x86_64__)
namespace {
// Whether the CPU has XSAVE enabled by the OS (OSXSAVE), leaf 7, and the OS saves every register
// state in `xcr0_mask` (XCR0 bits: 0x6 SSE and AVX; 0xe6 also the AVX-512 states).
bool os_saves(uint32_t xcr0_mask) {
  if (!(cpuid(1).c & (1u << 27)) || cpuid(0).a < 7) return false;
  uint32_t xcr0 = 0, hi = 0;
  __asm__("xgetbv" : "=a"(xcr0), "=d"(hi) : "c"(0));
  return (xcr0 & xcr0_mask) == xcr0_mask;
}
}  // namespace
#endif

bool host_has_avx512f() {
#if defined(__x86_64__)
  return os_saves(0xe6) && (cpuid(7).b & (1u << 16));
#else
  return false;
#endif
}

bool host_has_avx2_fma() {
#if defined(__x86_64__)
  constexpr uint32_t kFma = 1u << 12, kAvx = 1u << 28;
  return (cpuid(1).c & (kFma | kAvx)) == (kFma | kAvx) && os_saves(0x6) && (cpuid(7).b & (1u << 5));  // AVX2
#else
  return false;
#endif
}

const std::string& target_id() {
  // The plugin uses libmvec's vector functions when it can load them (llvm_jit.cpp).
  static const std::string id = [] {
    // Kept open: loaded kernels resolve their vector functions in it (elf_loader.cpp).
    void* mvec = dlopen("libmvec.so.1", RTLD_NOW | RTLD_LOCAL);
    return "llvm" LAZYFUSE_LLVM_VERSION "/" + std::string(kArch) + "/" + compute() + (mvec ? "/libmvec" : "");
  }();
  return id;
}

}  // namespace lf::cpu
