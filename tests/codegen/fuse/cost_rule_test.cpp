// The fuser's cost rule (codegen/fuse/fuser.cpp's header comment): where fusing would be slower
// than not fusing, the fuser cuts, with a named reason; values match the reference executor
// either way.
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "codegen/fuse/fuser.h"
#include "codegen/test_util.h"

namespace {

using lf::Shape;
using lf::Tensor;
using lf::fuse::CutReason;

Tensor input(Shape shape, float start = -2.0f, float step = 0.013f) {
  auto data = lf::test::iota_floats(lf::shape_numel(shape), start, step);
  return lf::from_vector(data, std::move(shape));
}

lf::fuse::Partition partition_of(const std::vector<Tensor>& roots) {
  std::vector<lf::ir::Node*> r;
  for (const Tensor& t : roots) r.push_back(t.node().get());
  auto order = lf::ir::topo_order(r);
  return lf::fuse::partition(
      order, [](const lf::ir::Node& n) { return n.user_refs.load() > 0; }, true);
}

int64_t cuts(const lf::fuse::Partition& p, CutReason r) { return p.cuts[static_cast<size_t>(r)]; }

// The group that writes `t`'s node.
const lf::fuse::Group& group_of(const lf::fuse::Partition& p, const Tensor& t) {
  return p.groups[static_cast<size_t>(p.group_of.at(t.node().get()))];
}

void expect_same(const std::vector<Tensor>& ts, int64_t reduce_len) {
  std::vector<lf::test::Values> ref;
  for (const Tensor& t : ts) ref.push_back(lf::test::reference_values(t));
  for (size_t i = 0; i < ts.size(); ++i) {
    std::string diff = lf::test::compare(ref[i], lf::test::fused_values(ts[i]),
                                         lf::test::default_tolerance(ts[i].dtype(), reduce_len));
    EXPECT_TRUE(diff.empty()) << "output " << i << ": " << diff;
  }
}

// Monte Carlo pi (bench/programs.cpp): xy is held, its rows are 2 elements. Fused into the row
// kernel, xy was written (and rand computed twice) by scalar loops of 2, 4.3x slower than unfused;
// now rand and square are a pointwise kernel and the reduction reads them.
TEST(CostRule, ShortRowsWithAHeldElementValueCut) {
  lf::manual_seed(7);
  Tensor xy = lf::rand({int64_t{1} << 16, 2});
  Tensor s = lf::sum(lf::square(xy), {1});
  Tensor count = lf::sum(s < 1);
  auto p = partition_of({xy, s, count});
  EXPECT_EQ(cuts(p, CutReason::kShortRows), 1);
  EXPECT_EQ(group_of(p, xy).kind, lf::fuse::Group::Kind::Pointwise);
  for (const auto& g : p.groups) {
    if (g.kind != lf::fuse::Group::Kind::Row) continue;
    for (const lf::ir::Node* o : g.outputs) EXPECT_FALSE(o->shape == xy.shape()) << "a row kernel writes an element value";
  }
  expect_same({xy, s, count}, 2);
}

// Under kShortRowMinElements a launch costs more than the rows: still one row kernel.
TEST(CostRule, SmallTensorsWithShortRowsStillFuse) {
  lf::manual_seed(7);
  Tensor xy = lf::rand({64, 2});
  Tensor s = lf::sum(lf::square(xy), {1});
  auto p = partition_of({xy, s});
  EXPECT_EQ(cuts(p, CutReason::kShortRows), 0);
  EXPECT_EQ(p.groups.size(), 1u);
  expect_same({xy, s}, 2);
}

// Rows of kShortRowElements vectorize: fused (one kernel) won there (bench/RESULTS.md).
TEST(CostRule, RowsOfSixteenStillFuse) {
  Tensor x = input({int64_t{1} << 13, lf::fuse::kShortRowElements}, -1.0f, 0.0001f);
  Tensor y = lf::square(x);
  Tensor s = lf::sum(y, {1});
  auto p = partition_of({y, s});
  EXPECT_EQ(cuts(p, CutReason::kShortRows), 0);
  EXPECT_EQ(p.groups.size(), 1u);
  expect_same({y, s}, 16);
}

// A held value that broadcasts a short row's result back (x - mean) is a pointwise kernel of its
// own; an unheld one (inside var) stays in the row kernel, which writes no element value.
TEST(CostRule, ShortRowsBroadcastBackHeldIsCut) {
  Tensor x = input({int64_t{1} << 15, 4}, -1.0f, 0.0001f);
  Tensor centered = x - lf::mean(x, {1}, true);
  auto p = partition_of({centered});
  EXPECT_EQ(cuts(p, CutReason::kShortRows), 1);
  EXPECT_EQ(group_of(p, centered).kind, lf::fuse::Group::Kind::Pointwise);
  expect_same({centered}, 4);

  Tensor v = lf::var(input({int64_t{1} << 15, 4}, -1.0f, 0.0001f), {1});
  auto q = partition_of({v});
  EXPECT_EQ(cuts(q, CutReason::kShortRows), 0);
  EXPECT_EQ(q.groups.size(), 1u);
  expect_same({v}, 4);
}

// Top-k by repeated max: each max reads values computed from the previous one, so a row kernel
// with k levels recomputes the chain of `where`s k(k+1)/2 times per element; at most
// kMaxRowLevels levels share a kernel.
TEST(CostRule, ChainedReductionLevelsAreCapped) {
  const int k = 3 * lf::fuse::kMaxRowLevels + 1;
  Tensor x = input({8, 300}, -1.0f, 0.37f);  // distinct values per row
  std::vector<Tensor> maxima;
  for (int i = 0; i < k; ++i) {
    Tensor m = lf::max(x, {1}, true);
    maxima.push_back(m);
    x = lf::where(x == m, lf::Scalar(-std::numeric_limits<float>::infinity()), x);
  }
  std::vector<Tensor> roots = maxima;
  roots.push_back(x);
  auto p = partition_of(roots);
  EXPECT_EQ(cuts(p, CutReason::kRecompute), 3);
  for (const auto& g : p.groups) {
    int reductions = 0;
    for (const lf::ir::Node* n : g.nodes) reductions += lf::ir::is_reduce(n->op) ? 1 : 0;
    EXPECT_LE(reductions, lf::fuse::kMaxRowLevels);
  }
  expect_same(roots, 300);
}

// Two levels (softmax: max, then sum of exp(x - max)) stay one kernel.
TEST(CostRule, SoftmaxKeepsItsTwoLevels) {
  Tensor y = lf::softmax(input({64, 100}, -3.0f, 0.007f), -1);
  auto p = partition_of({y});
  EXPECT_EQ(cuts(p, CutReason::kRecompute), 0);
  EXPECT_EQ(p.groups.size(), 1u);
  expect_same({y}, 100);
}

}  // namespace

namespace {

// Costs::few_rows (a backend whose row kernels run a row on one processor, a GPU): a row group
// over fewer long rows than the backend asks for takes one reduction and per-row values only.
lf::fuse::Partition few_rows_partition(const std::vector<Tensor>& roots, int64_t few) {
  std::vector<lf::ir::Node*> r;
  for (const Tensor& t : roots) r.push_back(t.node().get());
  auto order = lf::ir::topo_order(r);
  return lf::fuse::partition(
      order, [](const lf::ir::Node& n) { return n.user_refs.load() > 0; }, true, false,
      [few](lf::Device) { return lf::fuse::Costs{few}; });
}

// Every row group of `p`: one reduction, every output a per-row value (the backend splits it).
void expect_splittable_row_groups(const lf::fuse::Partition& p) {
  for (const auto& g : p.groups) {
    if (g.kind != lf::fuse::Group::Kind::Row || g.scan) continue;
    int reductions = 0;
    for (const lf::ir::Node* n : g.nodes) reductions += lf::ir::is_reduce(n->op);
    EXPECT_EQ(reductions, 1) << "a few-rows row group with " << reductions << " reductions";
    for (const lf::ir::Node* o : g.outputs) EXPECT_TRUE(p.row_phase.at(o)) << "a few-rows row group writes an element value";
  }
}

// A variable set for one test (the executor reads rt::config() at each flush).
struct FewRows {
  explicit FewRows(int64_t n) : saved(lf::rt::mutable_config().few_rows) { lf::rt::mutable_config().few_rows = n; }
  ~FewRows() { lf::rt::mutable_config().few_rows = saved; }
  int64_t saved;
};

// A whole tensor normalized: today's backends fuse it into one row kernel (one row: one GPU block
// streams the tensor three times). With few rows the two reductions are split reductions and
// the normalization a pointwise kernel.
TEST(CostRule, FewLongRowsKeepRowGroupsSplittable) {
  Tensor y = input({int64_t{1} << 15}, -3.0f, 0.0002f);
  Tensor x = lf::exp(y * 0.5);
  Tensor z = (x - x.mean()) / x.std();
  // Costs without the rule, whatever this device's backend registered (a GPU's few_rows is its
  // SMs / 4: on the H200 this test failed when an earlier test had flushed on the GPU).
  auto fused = few_rows_partition({z}, 0);
  EXPECT_EQ(fused.groups.size(), 1u) << "without the rule: one row kernel";
  auto p = few_rows_partition({z}, 8);
  EXPECT_GT(cuts(p, CutReason::kFewRows), 0);
  expect_splittable_row_groups(p);
  FewRows rule(8);
  expect_same({z}, int64_t{1} << 15);
}

// Rows that are many, or short, are the backend's to run as they are: no cut.
TEST(CostRule, ManyOrShortRowsIgnoreTheFewRowsRule) {
  Tensor many = input({64, lf::fuse::kFewRowsMinElements});
  Tensor short_rows = input({2, lf::fuse::kFewRowsMinElements / 2});
  Tensor a = lf::softmax(many, -1), b = lf::softmax(short_rows, -1);
  EXPECT_EQ(cuts(few_rows_partition({a}, 8), CutReason::kFewRows), 0);
  EXPECT_EQ(cuts(few_rows_partition({b}, 8), CutReason::kFewRows), 0);
}

// Costs::strided_rows_one_reduction (the CPU's): row groups over rows strided in memory (a
// reduction over a leading dim) take one reduction and per-row values, the column blocks' form;
// softmax, logsumexp and var over dim 0 were one row kernel striding a row at a time, 10-15x slower
// than unfused. Rows along the last dim keep their one kernel.
lf::fuse::Partition strided_rows_partition(const std::vector<Tensor>& roots) {
  std::vector<lf::ir::Node*> r;
  for (const Tensor& t : roots) r.push_back(t.node().get());
  auto order = lf::ir::topo_order(r);
  lf::fuse::Costs costs;
  costs.strided_rows_one_reduction = true;
  return lf::fuse::partition(
      order, [](const lf::ir::Node& n) { return n.user_refs.load() > 0; }, true, false,
      [costs](lf::Device) { return costs; });
}

TEST(CostRule, StridedRowsTakeOneReductionAndRowValues) {
  Tensor x = input({512, 64}, -3.0f, 0.0002f);
  for (auto [name, y] : std::vector<std::pair<const char*, Tensor>>{
           {"softmax", lf::softmax(x, 0)}, {"logsumexp", lf::logsumexp(x, {0})}, {"var", lf::var(x, {0})}}) {
    SCOPED_TRACE(name);
    auto p = strided_rows_partition({y});
    EXPECT_GT(cuts(p, CutReason::kStridedRows), 0);
    expect_splittable_row_groups(p);
    expect_same({y}, 512);
  }
  Tensor z = lf::softmax(x, 1);
  EXPECT_EQ(cuts(strided_rows_partition({z}), CutReason::kStridedRows), 0) << "rows along the last dim are contiguous";
  Tensor small = input({32, 16});
  EXPECT_EQ(cuts(strided_rows_partition({lf::softmax(small, 0)}), CutReason::kStridedRows), 0)
      << "below kStridedRowsMinElements a second kernel costs more";
}

// The layout decides, not the logical dims: rows along the last dim of a transposed buffer are
// columns of memory (logsumexp(x.t(), {1}) was one row kernel striding 16 KB an element, 50.8 ms
// against 17.4 unfused on 4096 x 1024), and rows along dim 0 of a transposed buffer are
// contiguous (one kernel, no cut). Values as the reference's, with NaN, -inf and size-1 dims.
Tensor with_specials(Shape shape) {
  auto data = lf::test::iota_floats(lf::shape_numel(shape), -3.0f, 0.0002f);
  data[5] = std::numeric_limits<float>::quiet_NaN();
  data[77] = -std::numeric_limits<float>::infinity();
  return lf::from_vector(data, std::move(shape));
}

TEST(CostRule, StridedRowsFollowTheBuffersStrides) {
  Tensor wide = with_specials({64, 512});  // wide.t(): 512 x 64, unit stride along dim 0
  Tensor xt = lf::transpose(wide, 0, 1);
  for (auto [name, y] : std::vector<std::pair<const char*, Tensor>>{{"logsumexp", lf::logsumexp(xt, {1})},
                                                                    {"softmax", lf::softmax(xt, 1)},
                                                                    {"var", lf::var(xt, {1})}}) {
    SCOPED_TRACE(name);
    auto p = strided_rows_partition({y});
    EXPECT_GT(cuts(p, CutReason::kStridedRows), 0) << "rows along the last dim of a transposed buffer are strided";
    if (std::string(name) == "logsumexp") expect_splittable_row_groups(p);
    expect_same({y}, 64);
  }
  Tensor tall = with_specials({512, 64});  // tall.t(): 64 x 512, unit stride along dim 0, the reduced one
  Tensor yt = lf::transpose(tall, 0, 1);
  for (auto [name, y] : std::vector<std::pair<const char*, Tensor>>{{"logsumexp", lf::logsumexp(yt, {0})},
                                                                    {"softmax", lf::softmax(yt, 0)},
                                                                    {"var", lf::var(yt, {0})}}) {
    SCOPED_TRACE(name);
    auto p = strided_rows_partition({y});
    EXPECT_EQ(cuts(p, CutReason::kStridedRows), 0) << "rows along dim 0 of a transposed buffer are contiguous";
    expect_same({y}, 64);
  }
  {  // Unfused too: each op its own kernel, over the same views.
    lf::test::FusionScope off(false);
    expect_same({lf::logsumexp(xt, {1}), lf::softmax(xt, 1), lf::var(xt, {1}), lf::logsumexp(yt, {0}),
                 lf::softmax(yt, 0), lf::var(yt, {0})},
                64);
  }
  // Size-1 dims between: the last dims of size > 1 decide.
  Tensor w3 = with_specials({64, 1, 512});
  Tensor t3 = lf::permute(w3, {2, 1, 0});  // 512 x 1 x 64, unit stride along dim 0
  Tensor a = lf::logsumexp(t3, {2}), b = lf::logsumexp(lf::permute(with_specials({512, 1, 64}), {2, 1, 0}), {0});
  EXPECT_GT(cuts(strided_rows_partition({a}), CutReason::kStridedRows), 0);
  EXPECT_EQ(cuts(strided_rows_partition({b}), CutReason::kStridedRows), 0);
  expect_same({a, b}, 512);
}

// The conjugate-gradient step (bench/cg_poisson.cpp) over few rows: its dot products split, its
// updates pointwise, values as the reference's over three steps, also replayed from a plan.
TEST(CostRule, FewRowsConjugateGradientStepsMatchTheReference) {
  FewRows rule(8);
  const int64_t n = 128;
  auto laplacian = [n](const Tensor& p) {
    Tensor q = lf::pad(p, {1, 1, 1, 1});
    return p * 4 - q.slice(0, 0, n).slice(1, 1, n + 1) - q.slice(0, 2, n + 2).slice(1, 1, n + 1) -
           q.slice(0, 1, n + 1).slice(1, 0, n) - q.slice(0, 1, n + 1).slice(1, 2, n + 2);
  };
  for (int run = 0; run < 3; ++run) {
    Tensor b = input({n, n}, -1.0f, 0.0001f).to(lf::DType::Float64);
    Tensor x = lf::zeros({n, n}, lf::DType::Float64), r = b, p = b, rs = lf::sum(r * r);
    for (int k = 0; k < 3; ++k) {
      Tensor ap = laplacian(p);
      Tensor alpha = rs / lf::sum(p * ap);
      x = x + alpha * p;
      r = r - alpha * ap;
      Tensor rs_new = lf::sum(r * r);
      p = r + rs_new / rs * p;
      rs = rs_new;
    }
    if (run == 0) expect_splittable_row_groups(few_rows_partition({x, r, p, rs}, 8));
    expect_same({x, r, p, rs}, n * n);
  }
}

}  // namespace
