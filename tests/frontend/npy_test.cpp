// lf::save / lf::load (.npy) and lf::savez / lf::load_npz (.npz): round trips and bad files.
// numpy's side is tests/tools/numpy_interop.py.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include "frontend/test_util.h"

namespace {

using lf::test::expect_close;
using lf::test::expect_error;

class NpyFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/lazyfuse-npy-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  void write(const std::string& name, const std::string& bytes) const {
    std::ofstream(path(name), std::ios::binary) << bytes;
  }
  std::string read(const std::string& name) const {
    std::ifstream f(path(name), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  }
  // A version 1.0 .npy image with this header text (padded as numpy pads it) and data.
  static std::string npy(const std::string& dict, const std::string& data) {
    std::string header = dict;
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    std::string out = "\x93NUMPY\x01";
    out += '\0';
    out += static_cast<char>(header.size() & 0xff);
    out += static_cast<char>(header.size() >> 8);
    return out + header + data;
  }
  std::string dir_;
};

TEST_F(NpyFiles, RoundTripEveryDtype) {
  lf::Tensor f32 = lf::arange(0, 6, 1, lf::DType::Float32).reshape({2, 3}) / 4;
  lf::Tensor f64 = lf::arange(0, 4, 1, lf::DType::Float64) - 1.5;
  lf::Tensor f16 = lf::arange(0, 3, 1, lf::DType::Float16) * 0.5;
  lf::Tensor i32 = lf::arange(-3, 3, 1, lf::DType::Int32).reshape({3, 1, 2});
  lf::Tensor i64 = lf::arange(0, 3, 1, lf::DType::Int64) * (int64_t{1} << 40);
  lf::Tensor b = lf::arange(0, 4, 1, lf::DType::Int32) > 1;
  lf::Tensor s = lf::scalar(3.25, lf::DType::Float64);
  lf::Tensor e = lf::zeros({0, 2});
  for (const auto& [name, t] : std::vector<std::pair<std::string, lf::Tensor>>{
           {"f32", f32}, {"f64", f64}, {"f16", f16}, {"i32", i32}, {"i64", i64}, {"b", b}, {"s", s}, {"e", e}}) {
    lf::save(path(name + ".npy"), t);
    lf::Tensor back = lf::load(path(name + ".npy"));
    EXPECT_EQ(back.dtype(), t.dtype()) << name;
    EXPECT_EQ(back.shape(), t.shape()) << name;
    EXPECT_EQ(back.device(), lf::Device::cpu()) << name;
    EXPECT_EQ(back.to_vector<double>(), t.to_vector<double>()) << name;
  }
  // numpy's own header, byte for byte.
  const std::string header = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", "");
  EXPECT_EQ(header.size(), 128u);
  EXPECT_EQ(read("f32.npy").substr(0, 128), header);
  EXPECT_EQ(read("f32.npy").size(), 128u + 24u);
  EXPECT_NE(read("f64.npy").find("'shape': (4,), }"), std::string::npos);
  EXPECT_NE(read("s.npy").find("'shape': (), }"), std::string::npos);
  EXPECT_NE(read("b.npy").find("'descr': '|b1'"), std::string::npos);
}

TEST_F(NpyFiles, StridedTensorsAreWrittenRowMajor) {
  lf::Tensor t = lf::arange(0, 6, 1, lf::DType::Float32).reshape({2, 3}).transpose(0, 1);
  lf::save(path("t.npy"), t);
  lf::Tensor back = lf::load(path("t.npy"));
  EXPECT_EQ(back.shape(), (lf::Shape{3, 2}));
  expect_close(back, {0, 3, 1, 4, 2, 5});
}

TEST_F(NpyFiles, FortranOrderAndBigEndian) {
  // [[1, 2, 3], [4, 5, 6]] stored column by column: a strided view, no copy.
  std::string cols;
  for (int32_t v : {1, 4, 2, 5, 3, 6}) cols.append(reinterpret_cast<const char*>(&v), 4);
  write("f.npy", npy("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }", cols));
  lf::Tensor f = lf::load(path("f.npy"));
  EXPECT_EQ(f.strides(), (lf::Shape{1, 2}));
  EXPECT_EQ(f.to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
  std::string big;
  for (double v : {1.5, -2.0}) {
    const char* p = reinterpret_cast<const char*>(&v);
    for (int i = 7; i >= 0; --i) big += p[i];
  }
  write("b.npy", npy("{'descr': '>f8', 'fortran_order': False, 'shape': (2,), }", big));
  expect_close(lf::load(path("b.npy")), {1.5, -2.0});
}

TEST_F(NpyFiles, Errors) {
  expect_error([&] { lf::load(path("missing.npy")); }, {"lf::load", "missing.npy", "cannot open"});
  write("magic.npy", "PK\x03\x04 not numpy at all");
  expect_error([&] { lf::load(path("magic.npy")); }, {"magic.npy", "not a .npy file"});
  write("version.npy", std::string("\x93NUMPY\x07\x00\x10\x00", 10) + std::string(16, ' '));
  expect_error([&] { lf::load(path("version.npy")); }, {"unsupported .npy version 7"});
  // No element, but the sizes' product overflows int64 (hostile input issue, item 6).
  write("huge.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 999999999999999999, 999999999999999999), }", ""));
  expect_error([&] { lf::load(path("huge.npy")); }, {"lf::load", "huge.npy", "more elements than fit int64"});
  write("header.npy", npy("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }", std::string(8, '\0')));
  expect_error([&] { lf::load(path("header.npy")); }, {"bad .npy header", "True nor False"});
  write("nokey.npy", npy("{'descr': '<f4', 'shape': (2,), }", std::string(8, '\0')));
  expect_error([&] { lf::load(path("nokey.npy")); }, {"bad .npy header", "fortran_order"});
  write("shape.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", ""));
  expect_error([&] { lf::load(path("shape.npy")); }, {"bad .npy header", "not a number"});
  write("dtype.npy", npy("{'descr': '<u2', 'fortran_order': False, 'shape': (2,), }", std::string(4, '\0')));
  expect_error([&] { lf::load(path("dtype.npy")); }, {"'<u2'", "no LazyFuse dtype"});
  write("short.npy", npy("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }", std::string(50, '\0')));
  expect_error([&] { lf::load(path("short.npy")); }, {"short.npy", "truncated", "96 bytes of data, 50 are there"});
  write("cut.npy", npy("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }", "").substr(0, 40));
  expect_error([&] { lf::load(path("cut.npy")); }, {"truncated .npy file"});
  write("tiny.npy", "\x93NU");
  expect_error([&] { lf::load(path("tiny.npy")); }, {"not a .npy file"});
  expect_error([&] { lf::save(path("bf.npy"), lf::ones({2}, lf::DType::BFloat16)); }, {"no bfloat16 dtype"});
  expect_error([&] { lf::save(dir_ + "/no/such/dir/x.npy", lf::ones({2})); }, {"cannot open for writing"});
  expect_error([&] { lf::save(path("x.npy"), lf::Tensor()); }, {"empty Tensor"});
}

TEST_F(NpyFiles, NpzRoundTripAndErrors) {
  std::map<std::string, lf::Tensor> in{{"weights", lf::arange(0, 6, 1, lf::DType::Float32).reshape({3, 2})},
                                       {"ids", lf::arange(0, 4, 1, lf::DType::Int64)},
                                       {"mask", lf::arange(0, 3, 1, lf::DType::Int32) == 1}};
  lf::savez(path("a.npz"), in);
  std::map<std::string, lf::Tensor> out = lf::load_npz(path("a.npz"));
  ASSERT_EQ(out.size(), 3u);
  for (const auto& [name, t] : in) {
    ASSERT_TRUE(out.count(name)) << name;
    EXPECT_EQ(out[name].dtype(), t.dtype()) << name;
    EXPECT_EQ(out[name].shape(), t.shape()) << name;
    EXPECT_EQ(out[name].to_vector<double>(), t.to_vector<double>()) << name;
  }
  lf::savez(path("empty.npz"), {});
  EXPECT_TRUE(lf::load_npz(path("empty.npz")).empty());

  const std::string whole = read("a.npz");
  write("cut.npz", whole.substr(0, whole.size() - 30));
  expect_error([&] { lf::load_npz(path("cut.npz")); }, {"cut.npz"});
  write("half.npz", whole.substr(0, whole.size() / 2));
  expect_error([&] { lf::load_npz(path("half.npz")); }, {"half.npz", "not a zip archive"});
  std::string flipped = whole;
  flipped[100] ^= 0x55;  // inside the first entry's data
  write("flipped.npz", flipped);
  expect_error([&] { lf::load_npz(path("flipped.npz")); }, {"CRC-32"});
  write("notzip.npz", "hello");
  expect_error([&] { lf::load_npz(path("notzip.npz")); }, {"not a zip archive"});
  expect_error([&] { lf::load_npz(path("none.npz")); }, {"lf::load_npz", "cannot open"});
}

}  // namespace

namespace lf::test {
namespace {

class NpyPaths : public OnCpu {
 protected:
  void SetUp() override {
    OnCpu::SetUp();
    char tmpl[] = "/tmp/lazyfuse-paths-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::system(("rm -rf '" + dir_ + "'").c_str());
    OnCpu::TearDown();
  }
  std::string dir_;
};

// A directory or a FIFO is refused at once, never read as a huge file or waited on.
TEST_F(NpyPaths, DirectoriesAndFifosAreErrorsNotHangs) {
  expect_error([&] { load(dir_); }, {"lf::load", dir_, "is a directory"});
  expect_error([&] { load_npz(dir_); }, {"lf::load_npz", "is a directory"});
  std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  expect_error([&] { load(fifo); }, {"lf::load", "not a regular file"});
  expect_error([&] { load_npz(fifo); }, {"lf::load_npz", "not a regular file"});
  expect_error([&] { save(fifo, ones({2})); }, {"lf::save", "not a regular file"});
  expect_error([&] { savez(fifo, {{"a", ones({2})}}); }, {"lf::savez", "not a regular file"});
}

// save writes a temporary file and renames it: a failed save leaves the old file whole, and a
// good one leaves nothing else behind.
TEST_F(NpyPaths, SaveReplacesTheFileWhole) {
  std::string p = dir_ + "/x.npy";
  save(p, from_vector(std::vector<float>{1, 2}, {2}));
  expect_error([&] { save(p, cast(ones({2}), DType::BFloat16)); }, {"lf::save", "bfloat16"});
  expect_close(load(p), {1, 2});
  save(p, from_vector(std::vector<float>{3}, {1}));
  expect_close(load(p), {3});
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir_)) entries += e.is_regular_file();
  EXPECT_EQ(entries, 1);
  expect_error([&] { save(dir_ + "/missing/x.npy", ones({1})); }, {"lf::save", "cannot open for writing"});
}

}  // namespace
}  // namespace lf::test

namespace lf::test {
namespace {

class Safetensors : public NpyPaths {
 protected:
  // A file of this header text and these data bytes.
  std::string file(const std::string& header, const std::string& data) {
    std::string p = dir_ + "/f.safetensors";
    std::string bytes(8, '\0');
    for (int i = 0; i < 8; ++i) bytes[static_cast<size_t>(i)] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
    std::ofstream(p, std::ios::binary) << bytes << header << data;
    return p;
  }
};

TEST_F(Safetensors, RoundTripEveryDtypeAndMetadata) {
  std::map<std::string, Tensor> in{
      {"b", from_vector(std::vector<bool>{true, false, true}, {3})},
      {"i32", from_vector(std::vector<int32_t>{-1, 2}, {2, 1})},
      {"i64", from_vector(std::vector<int64_t>{9007199254740993LL}, {1})},
      {"f16", cast(from_vector(std::vector<float>{0.5, -2}, {2}), DType::Float16)},
      {"bf16", cast(from_vector(std::vector<float>{1.5}, {1}), DType::BFloat16)},
      {"f32", transpose(from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}), 0, 1)},  // strided: written row-major
      {"f64", from_vector(std::vector<double>{3.25}, {})},
      {"empty", zeros({0, 4})},
      {"model.layers.0.weight \"quoted\"", ones({2})},
  };
  std::string p = dir_ + "/m.safetensors";
  save_safetensors(p, in, {{"format", "pt"}});
  std::map<std::string, std::string> meta;
  std::map<std::string, Tensor> out = load_safetensors(p, &meta);
  EXPECT_EQ(meta.at("format"), "pt");
  ASSERT_EQ(out.size(), in.size());
  for (const auto& [name, t] : in) {
    SCOPED_TRACE(name);
    const Tensor& got = out.at(name);
    EXPECT_EQ(got.dtype(), t.dtype());
    EXPECT_EQ(got.shape(), t.shape());
    if (t.dtype() == DType::Int64) EXPECT_EQ(got.to_vector<int64_t>(), t.to_vector<int64_t>());
    else expect_close(got, t.to_vector<double>());
  }
}

TEST_F(Safetensors, HeadersThatDoNotMatchTheDataAreErrorsNamingTheTensor) {
  const std::string four(4, '\0');
  expect_error([&] { load_safetensors(file("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", four)); },
               {"lf::load_safetensors", "tensor \"w\"", "outside the 4 bytes"});
  expect_error([&] { load_safetensors(file("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}", four)); },
               {"tensor \"w\"", "4 bytes of data for F32[2], which takes 8"});
  expect_error([&] { load_safetensors(file("{\"w\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]}}", four)); },
               {"tensor \"w\"", "dtype U8"});
  expect_error([&] { load_safetensors(file("{\"w\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", four)); },
               {"tensor \"w\"", "non-negative"});
  expect_error([&] {
    load_safetensors(file("{\"w\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,4]}}", four));
  }, {"tensor \"w\"", "overflows"});
  expect_error([&] { load_safetensors(file("{\"w\":{\"dtype\":\"F32\"", four)); }, {"bad header"});
  expect_error([&] { load_safetensors(file("{\"a\":1,\"a\":2}", "")); }, {"appears twice"});
  std::string p = dir_ + "/short.safetensors";
  std::ofstream(p, std::ios::binary) << std::string("\xff\xff\xff\xff\0\0\0\0{}", 10);
  expect_error([&] { load_safetensors(p); }, {"lf::load_safetensors", "claims 4294967295 bytes"});
}

}  // namespace
}  // namespace lf::test
