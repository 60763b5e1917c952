// Bool memory holding bytes other than 0 and 1 (issue 50 item 5): from from_blob and DLPack (viewed
// in place, so every read normalizes: the kernels compare with 0, the host conversions read bytes)
// and from .npy files (copied, so made 0/1 at import). Every read gives 0/1: to_vector of every
// type, item, kernels fused and unfused, and a save.
#include <lazyfuse/dlpack.h>

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "frontend/test_util.h"

namespace {

using lf::DType;
using lf::Tensor;

class BoolBytes : public lf::test::OnCpu {};

const std::vector<int32_t> kWant = {0, 1, 1, 1, 0, 1};

void expect_canonical(const Tensor& b) {
  EXPECT_EQ(b.to_vector<int32_t>(), kWant);
  EXPECT_EQ(b.to_vector<int64_t>(), (std::vector<int64_t>(kWant.begin(), kWant.end())));
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>(kWant.begin(), kWant.end())));
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{false, true, true, true, false, true}));
  EXPECT_EQ(lf::slice(b, 0, 2, 3).item<int32_t>(), 1);
  EXPECT_EQ(lf::slice(b, 0, 1, 6, 2).to_vector<int32_t>(), (std::vector<int32_t>{1, 1, 1}));  // a strided view
  EXPECT_EQ(lf::cast(b, DType::Int32).to_vector<int32_t>(), kWant);                          // in a kernel
  EXPECT_EQ(lf::sum(lf::cast(b, DType::Int64)).item<int64_t>(), 4);
  EXPECT_EQ((lf::cast(b, DType::Int32) * 3).to_vector<int32_t>(), (std::vector<int32_t>{0, 3, 3, 3, 0, 3}));
}

TEST_F(BoolBytes, FromBlobReadsAsZeroAndOne) {
  unsigned char bytes[6] = {0, 1, 2, 255, 0, 0x80};
  Tensor b = lf::from_blob(bytes, {6}, DType::Bool);
  expect_canonical(b);
  EXPECT_EQ(bytes[2], 2) << "the caller's memory is not written";
}

TEST_F(BoolBytes, DLPackReadsAsZeroAndOne) {
  static unsigned char bytes[6] = {0, 1, 2, 255, 0, 0x80};
  static int64_t shape[1] = {6};
  auto* m = new DLManagedTensor{};
  m->dl_tensor.data = bytes;
  m->dl_tensor.device = DLDevice{kDLCPU, 0};
  m->dl_tensor.ndim = 1;
  m->dl_tensor.dtype = DLDataType{lf::dlpack_detail::kBoolCode, 8, 1};
  m->dl_tensor.shape = shape;
  m->deleter = [](DLManagedTensor* self) { delete self; };
  expect_canonical(lf::from_dlpack(m));
}

TEST_F(BoolBytes, NpyFilesAreMadeCanonicalAtImportAndSavesWriteZeroAndOne) {
  char tmpl[] = "/tmp/lazyfuse-bool-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  std::string header = "{'descr': '|b1', 'fortran_order': False, 'shape': (6,), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string file = std::string("\x93NUMPY\x01\x00", 8);
  file += static_cast<char>(header.size()), file += '\0';
  file += header + std::string("\x00\x01\x02\xff\x00\x80", 6);
  std::ofstream(dir + "/b.npy", std::ios::binary) << file;
  Tensor b = lf::load(dir + "/b.npy");
  expect_canonical(b);
  const auto* raw = static_cast<const unsigned char*>(b.data_ptr());
  EXPECT_EQ(std::vector<int32_t>(raw, raw + 6), kWant) << "data_ptr() sees 0/1";
  // A save of a from_blob view writes 0/1 (numpy's own bools).
  unsigned char bytes[6] = {0, 1, 2, 255, 0, 0x80};
  lf::save(dir + "/c.npy", lf::from_blob(bytes, {6}, DType::Bool));
  std::ifstream in(dir + "/c.npy", std::ios::binary);
  std::string saved((std::istreambuf_iterator<char>(in)), {});
  ASSERT_GE(saved.size(), 6u);
  EXPECT_EQ(saved.substr(saved.size() - 6), std::string("\x00\x01\x01\x01\x00\x01", 6));
  std::system(("rm -rf '" + dir + "'").c_str());
}

}  // namespace
