// Hostile .npz archives (issue 50 item 9): archives built byte by byte here (a deflated entry as
// one stored deflate block, so no zlib is needed to write it) whose sizes lie: a 193-byte file
// claiming 0xFFFFFFFE inflated bytes, a zip64 size of 2^62, a zip64 extra field past the end of
// the file. Each is an lf::Error before any large allocation or read past the buffer; and a small
// fuzzer of .npy and .npz files (truncations, field lies, byte flips) asserts lf::Error or success.
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include "frontend/test_util.h"

namespace {

using lf::test::expect_error;

uint32_t crc32(const std::string& s) {
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : s) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1)));
  }
  return c ^ 0xFFFFFFFFu;
}

void put16(std::string& o, uint32_t v) { o += static_cast<char>(v & 0xff), o += static_cast<char>(v >> 8 & 0xff); }
void put32(std::string& o, uint32_t v) { put16(o, v & 0xffff), put16(o, v >> 16); }
void put64(std::string& o, uint64_t v) { put32(o, static_cast<uint32_t>(v)), put32(o, static_cast<uint32_t>(v >> 32)); }

// A .npy image of float32 [n] holding 0, 1, ... n-1.
std::string npy_floats(int n) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(n) + ",), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY\x01";
  out += '\0';
  put16(out, static_cast<uint32_t>(header.size()));
  out += header;
  for (int i = 0; i < n; ++i) {
    float f = static_cast<float>(i);
    out.append(reinterpret_cast<const char*>(&f), 4);
  }
  return out;
}

// One entry "x.npy": `data` deflated as one stored block (method 8) or stored (method 0). The
// central directory's sizes can be overridden, a zip64 extra field given, and the central
// directory put after the end record (so that its extra field ends the file).
struct Zip {
  std::string data;
  int method = 8;
  uint32_t usize = 0, csize = 0;  // 0: the true sizes
  std::string extra;              // the central entry's extra field(s)
  bool directory_last = false;
  uint16_t extra_len_delta = 0;  // added to the stated extra length

  std::string build() const {
    std::string body = data;
    if (method == 8) {  // BFINAL, BTYPE 00 (stored), LEN, NLEN, the bytes
      body = "\x01";
      put16(body, static_cast<uint32_t>(data.size()));
      put16(body, static_cast<uint32_t>(~data.size() & 0xffff));
      body += data;
    }
    const uint32_t crc = crc32(data);
    const uint32_t cs = csize ? csize : static_cast<uint32_t>(body.size()), us = usize ? usize : static_cast<uint32_t>(data.size());
    const std::string name = "x.npy";
    std::string local;
    put32(local, 0x04034b50), put16(local, 20), put16(local, 0), put16(local, static_cast<uint32_t>(method));
    put32(local, 0), put32(local, crc), put32(local, static_cast<uint32_t>(body.size())), put32(local, static_cast<uint32_t>(data.size()));
    put16(local, static_cast<uint32_t>(name.size())), put16(local, 0);
    local += name + body;
    std::string central;
    put32(central, 0x02014b50), put16(central, 20), put16(central, 20), put16(central, 0);
    put16(central, static_cast<uint32_t>(method)), put32(central, 0), put32(central, crc), put32(central, cs), put32(central, us);
    put16(central, static_cast<uint32_t>(name.size())), put16(central, static_cast<uint32_t>(extra.size() + extra_len_delta));
    put16(central, 0), put16(central, 0), put16(central, 0), put32(central, 0), put32(central, 0);
    central += name + extra;
    std::string end;
    const uint32_t cd_offset = static_cast<uint32_t>(local.size() + (directory_last ? 22 : 0));
    put32(end, 0x06054b50), put16(end, 0), put16(end, 0), put16(end, 1), put16(end, 1);
    put32(end, static_cast<uint32_t>(central.size())), put32(end, cd_offset), put16(end, 0);
    return directory_last ? local + end + central : local + central + end;
  }
};

// Loads `path` under a 1 GiB address-space limit and exits 0 on the lf::Error that refuses the
// stated size, another code on anything else (a death test's child: the limit stays there).
[[noreturn, maybe_unused]] void load_limited(const std::string& path) {
  rlimit lim{size_t{1} << 30, size_t{1} << 30};
  setrlimit(RLIMIT_AS, &lim);
  try {
    lf::load_npz(path);
  } catch (const lf::Error& e) {
    std::fprintf(stderr, "lf::Error: %s\n", e.what());
    std::_Exit(std::string(e.what()).find("more than deflate can expand") != std::string::npos ? 0 : 3);
  } catch (...) {
    std::_Exit(2);
  }
  std::_Exit(1);
}

class NpzHostile : public lf::test::OnCpu {
 protected:
  void SetUp() override {
    OnCpu::SetUp();
    char tmpl[] = "/tmp/lazyfuse-npz-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::system(("rm -rf '" + dir_ + "'").c_str());
    OnCpu::TearDown();
  }
  std::string write(const std::string& name, const std::string& bytes) const {
    std::string p = dir_ + "/" + name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  std::string dir_;
};

TEST_F(NpzHostile, AValidDeflatedEntryLoads) {
  Zip z;
  z.data = npy_floats(5);
  std::map<std::string, lf::Tensor> m = lf::load_npz(write("ok.npz", z.build()));
  ASSERT_EQ(m.count("x"), 1u);
  EXPECT_EQ(m["x"].to_vector<float>(), (std::vector<float>{0, 1, 2, 3, 4}));
  z.method = 0;
  EXPECT_EQ(lf::load_npz(write("stored.npz", z.build()))["x"].to_vector<float>(), (std::vector<float>{0, 1, 2, 3, 4}));
}

TEST_F(NpzHostile, StatedSizesThatLieAreErrorsBeforeAllocating) {
  // Under a 1 GiB address-space limit, so that an allocation of the stated size fails loudly (a
  // bad_alloc is not an lf::Error) instead of passing on a big machine.
  Zip z;
  z.data = npy_floats(5);
  z.usize = 0xFFFFFFFEu;
  const std::string bomb = write("bomb.npz", z.build());
  EXPECT_LT(z.build().size(), 400u);
  expect_error([&] { lf::load_npz(bomb); }, {"lf::load_npz", "more than deflate can expand"});
  // AddressSanitizer's shadow memory does not fit in the 1 GiB limit (its start-up mmap fails).
#ifndef __SANITIZE_ADDRESS__
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(load_limited(bomb), ::testing::ExitedWithCode(0), "lf::Error");
#endif
  // One byte more or fewer than the stream holds.
  z.usize = static_cast<uint32_t>(z.data.size() + 1);
  expect_error([&] { lf::load_npz(write("more.npz", z.build())); }, {"lf::load_npz", "does not inflate to its stated"});
  z.usize = static_cast<uint32_t>(z.data.size() - 1);
  expect_error([&] { lf::load_npz(write("fewer.npz", z.build())); }, {"lf::load_npz", "does not inflate to its stated"});
  // A zip64 size of 2^62 (the 32-bit field 0xFFFFFFFF, the real one in the extra field).
  z.usize = 0xFFFFFFFFu;
  z.extra.clear();
  put16(z.extra, 1), put16(z.extra, 8), put64(z.extra, uint64_t{1} << 62);
  expect_error([&] { lf::load_npz(write("zip64.npz", z.build())); }, {"lf::load_npz", "4611686018427387904"});
}

TEST_F(NpzHostile, AnExtraFieldPastTheEndOfTheFileIsAnError) {
  // The central directory ends the file; its zip64 field says 16 bytes where 8 follow.
  Zip z;
  z.data = npy_floats(3);
  z.usize = 0xFFFFFFFFu;
  z.directory_last = true;
  put16(z.extra, 1), put16(z.extra, 16), put64(z.extra, z.data.size());
  expect_error([&] { lf::load_npz(write("past.npz", z.build())); }, {"lf::load_npz", "extra field runs past"});
  // The header's extra length itself past the end of the file.
  z.extra_len_delta = 8;
  expect_error([&] { lf::load_npz(write("past2.npz", z.build())); }, {"lf::load_npz"});
}

// A deterministic mutation fuzzer of valid files: every outcome is a value or an lf::Error.
uint64_t next(uint64_t& s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

template <typename Load>
void fuzz(const std::string& valid, const std::string& path, uint64_t seed, int rounds, const Load& load) {
  uint64_t s = seed;
  for (int r = 0; r < rounds; ++r) {
    std::string f = valid;
    switch (next(s) % 4) {
      case 0: f.resize(next(s) % f.size()); break;  // truncated
      case 1:                                       // random bytes flipped
        for (int k = 0, n = 1 + static_cast<int>(next(s) % 4); k < n; ++k) f[next(s) % f.size()] ^= static_cast<char>(1 + next(s) % 255);
        break;
      case 2: {  // a 16- or 32-bit field set to an extreme
        const size_t at = next(s) % (f.size() - 4);
        const uint32_t v[] = {0, 0xFFFFFFFFu, 0x7FFFFFFFu, 0x80000000u, 0xFFFFu, 1};
        const uint32_t x = v[next(s) % 6];
        for (int b = 0; b < (next(s) % 2 ? 2 : 4); ++b) f[at + static_cast<size_t>(b)] = static_cast<char>(x >> (8 * b));
        break;
      }
      default: {  // a digit of the header text changed (shapes, sizes), or bytes appended
        size_t at = f.find_first_of("0123456789(", next(s) % f.size());
        if (at != std::string::npos) f[at] = "9(-,)x"[next(s) % 6];
        else f += std::string(next(s) % 64, '\x7f');
      }
    }
    std::ofstream(path, std::ios::binary | std::ios::trunc) << f;
    try {
      load(path);
    } catch (const lf::Error&) {
    } catch (const std::exception& e) {
      ADD_FAILURE() << "round " << r << " (seed " << seed << "): " << typeid(e).name() << ": " << e.what();
    }
  }
}

TEST_F(NpzHostile, FuzzedFilesGiveValuesOrErrors) {
  const std::string npy = npy_floats(7);
  fuzz(npy, dir_ + "/f.npy", 1, 400, [](const std::string& p) { (void)lf::load(p).to_vector<float>(); });
  Zip z;
  z.data = npy;
  fuzz(z.build(), dir_ + "/f.npz", 2, 400, [](const std::string& p) {
    for (auto& [name, t] : lf::load_npz(p)) (void)t.to_vector<float>();
  });
  z.method = 0;
  fuzz(z.build(), dir_ + "/s.npz", 3, 400, [](const std::string& p) {
    for (auto& [name, t] : lf::load_npz(p)) (void)t.to_vector<float>();
  });
}

}  // namespace
