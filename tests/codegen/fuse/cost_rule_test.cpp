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
