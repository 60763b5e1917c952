// Golden snippets of emitted code: for a few canonical groups (pointwise with a broadcast, a row
// reduction, a split reduction, a matmul epilogue, gathers) the key lines of the LLVM IR and the CUDA C are
// kept in tests/codegen/golden/, so that any change in emitted code shows in review. After an
// intended change, run tests/codegen/golden/update.sh and commit the new files with it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <lazyfuse/lazyfuse.h>

#include "codegen/cpu/backend.h"
#include "codegen/cuda/emit.h"
#include "codegen/fuse/fuser.h"
#include "codegen/fuse/lower.h"
#include "codegen/ir/view.h"
#include "codegen/test_util.h"
#include "runtime/storage.h"

namespace {

using lf::Tensor;

// The lines that carry the code: no blank lines, comments, metadata, attribute groups, or target
// lines of the host (datalayout, triple), and for CUDA nothing of the shared prelude.
std::vector<std::string> key_lines(const std::string& source, bool cuda) {
  std::vector<std::string> out;
  std::istringstream in(source);
  std::string line;
  bool body = !cuda;
  while (std::getline(in, line)) {
    if (cuda && !body) {
      body = line.rfind("struct Meta", 0) == 0 || line.rfind("extern \"C\"", 0) == 0;
      if (!body) continue;
    }
    size_t first = line.find_first_not_of(' ');
    if (first == std::string::npos) continue;
    std::string t = line.substr(first);
    if (t.rfind("//", 0) == 0 || t.rfind(";", 0) == 0 || t.rfind("!", 0) == 0 || t.rfind("attributes #", 0) == 0 ||
        t.rfind("target ", 0) == 0 || t.rfind("source_filename", 0) == 0)
      continue;
    out.push_back(line);
  }
  return out;
}

// The group of `out` that is not a matmul, lowered as the executor lowers it; with a matmul
// group, its epilogue with the product as a realized input (what both backends' epilogue kernels
// read).
lf::lower::Lowered lowered(const Tensor& out) {
  std::vector<lf::ir::Node*> roots{out.node().get()};
  auto order = lf::ir::topo_order(roots);
  if (lf::fuse::insert_reshape_copies(order) > 0) order = lf::ir::topo_order(roots);  // the executor's rewrites
  auto p = lf::fuse::partition(order, [&](const lf::ir::Node& n) { return &n == roots[0]; }, true);
  EXPECT_EQ(p.groups.size(), 1u);
  lf::fuse::Group g = p.groups[0];
  if (g.kind != lf::fuse::Group::Kind::Matmul) return lf::lower::lower_group(g, p, 0, lf::Device::cpu());
  lf::ir::Node* mm = g.nodes[0];
  mm->storage = lf::rt::Storage::allocate(lf::Device::cpu(), static_cast<size_t>(mm->numel()) * 4);
  mm->layout = lf::ir::Layout{lf::ir::contiguous_strides(mm->shape), 0};
  g.kind = lf::fuse::Group::Kind::Pointwise;
  g.nodes.erase(g.nodes.begin());
  auto low = lf::lower::lower_group(g, p, 0, lf::Device::cpu(), /*keep_last_dim=*/true);
  mm->storage = nullptr;
  mm->layout = lf::ir::Layout{};
  return low;
}

struct Case {
  const char* name;
  Tensor (*make)();
  lf::cuda::EmitOptions cuda;  // as cuda::options_for would choose for a typical launch
  // Also the options options_for derives from the launch's values (integer aranges, 32-bit
  // index math: EmitOptions::int_arange, narrow).
  bool from_launch = false;
};

// A realized float32 input (the values do not matter: only the code is compared).
Tensor input(lf::Shape shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return lf::from_vector(std::vector<float>(static_cast<size_t>(n), 0.5f), shape);
}

Tensor pointwise_broadcast() {
  Tensor x = input({64, 128}), b = input({128});
  return lf::relu(x * 2 + b);
}
Tensor row_softmax() { return lf::softmax(input({64, 1000}), -1); }
Tensor split_sum() {
  Tensor x = input({1 << 17});
  return lf::sum(x * x);
}
Tensor matmul_epilogue() {
  Tensor a = input({64, 32}), w = input({32, 48});
  Tensor b = input({48}), r = input({64, 48});
  return lf::gelu(lf::matmul(a, w) + b) + r;
}

// Issue 23: a gather as index math, in a row kernel (embedding + layer_norm) and a pointwise one.
// The embedding's ids are the host's own, known in range: no check. The pointwise gather's indices
// are computed (a product), unknown until the kernel runs: checked, into the error operand.
Tensor embedding_layer_norm() {
  Tensor ids = lf::from_vector(std::vector<int64_t>{3, 0, 7, 1}, {4});
  return lf::layer_norm(lf::embedding(input({10, 64}), ids), 1);
}
Tensor gather_pointwise() {
  Tensor idx = lf::from_vector(std::vector<int32_t>(64 * 8, 1), {64, 8}) * 1;
  return lf::gather(input({64, 128}), 1, idx) * 2;
}

// Issue 23, shape ops: a Jacobi step as slice assignment (remapped loads, index math inline).
Tensor jacobi_index_put() {
  Tensor u = input({64, 128});
  auto at = [&](int64_t r0, int64_t c0) { return lf::slice(lf::slice(u, 0, r0, r0 + 62), 1, c0, c0 + 126); };
  return lf::index_put(u, {lf::slice(1, -1), lf::slice(1, -1)}, 0.25 * (at(0, 1) + at(2, 1) + at(1, 0) + at(1, 2)));
}

// Issue 23: a scan fused with its producer and consumer (a running total carried in the row's
// ordered pass; a thread a row on a GPU).
Tensor scan_fused() {
  Tensor x = input({64, 24}), y = input({64, 24});
  return lf::cumsum(lf::exp(x) * 2, 1) + y;
}

// Issue 50 item 3: an int64 arange past 2^53 (no 32-bit fast path) in integer arithmetic, and an
// int32 one.
Tensor int_arange_exact() {
  Tensor big = lf::arange(0x1p53, 0x1p53 + 64, 1, lf::DType::Int64);
  return big * 3 + lf::cast(lf::arange(0, 128, 2, lf::DType::Int32), lf::DType::Int64);
}

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {"pointwise_broadcast", pointwise_broadcast, {.index32 = true, .vec4 = true}},
      {"row_softmax", row_softmax, {.index32 = true, .row_cache = 4}},
      {"split_sum", split_sum, {.index32 = true, .vec4 = true}},
      {"matmul_epilogue", matmul_epilogue, {.index32 = true, .matmul_product = 0}},
      {"embedding_layer_norm", embedding_layer_norm, {.index32 = true, .row_cache = 1}},
      {"gather_pointwise", gather_pointwise, {.index32 = true}},
      {"jacobi_index_put", jacobi_index_put, {.index32 = true}, true},
      {"scan_fused", scan_fused, {.index32 = true, .row_group = 1}},
      {"int_arange_exact", int_arange_exact, {.index32 = true}, true},
  };
  return c;
}

// LAZYFUSE_GOLDEN_DIR overrides the source folder the build knows (a test binary carried elsewhere).
std::string golden_path(const std::string& name) {
  const char* dir = std::getenv("LAZYFUSE_GOLDEN_DIR");
  return std::string(dir && *dir ? dir : LF_GOLDEN_DIR) + "/" + name;
}

void check_or_update(const std::string& file, const std::vector<std::string>& lines) {
  std::string path = golden_path(file);
  if (std::getenv("LAZYFUSE_UPDATE_GOLDEN")) {
    std::ofstream out(path);
    for (const std::string& l : lines) out << l << "\n";
    ASSERT_TRUE(out.good()) << "cannot write " << path;
    return;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << path << " is missing: run tests/codegen/golden/update.sh";
  std::vector<std::string> want;
  for (std::string l; std::getline(in, l);) want.push_back(l);
  for (size_t i = 0; i < std::max(want.size(), lines.size()); ++i) {
    std::string w = i < want.size() ? want[i] : "(end)", g = i < lines.size() ? lines[i] : "(end)";
    ASSERT_EQ(g, w) << file << " line " << i + 1
                    << " changed: if the change in emitted code is intended, run tests/codegen/golden/update.sh";
  }
}

class Golden : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override { lf::set_default_device(lf::Device::cpu()); }
  void TearDown() override { lf::set_default_device(saved_); }

 private:
  lf::Device saved_ = lf::default_device();
};

TEST_P(Golden, LlvmIr) {
  const Case& c = GetParam();
  lf::lower::Lowered low = lowered(c.make());
  check_or_update(std::string(c.name) + ".ll", key_lines(lf::cpu::emit_ir(low.kernel, c.name), false));
}

TEST_P(Golden, CudaC) {
  const Case& c = GetParam();
  lf::lower::Lowered low = lowered(c.make());
  lf::cuda::EmitOptions opt = c.cuda;
  if (c.from_launch) {
    opt.int_arange = lf::cuda::int_aranges(low.kernel, low.args.params);
    opt.narrow = lf::cuda::narrow_ints(low.kernel, low.args, opt.int_arange);
  }
  std::string source = lf::cuda::emit_cuda(low.kernel, c.name, opt);
  // LAZYFUSE_GOLDEN_CUDA_DIR: also write the whole source there (to compile it with nvcc where no
  // GPU is present).
  if (const char* dir = std::getenv("LAZYFUSE_GOLDEN_CUDA_DIR")) std::ofstream(std::string(dir) + "/" + c.name + ".cu") << source;
  check_or_update(std::string(c.name) + ".cu", key_lines(source, true));
}

INSTANTIATE_TEST_SUITE_P(Canonical, Golden, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
