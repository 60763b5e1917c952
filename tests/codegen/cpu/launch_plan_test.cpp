// How cpu::launch cuts work over threads (plan_launch): a function of the sizes and the thread
// count, checked here without timing.
#include <gtest/gtest.h>

#include "codegen/cpu/backend.h"

namespace {

using lf::cpu::LaunchPlan;

lf::kir::LaunchArgs args_of(std::vector<int64_t> sizes, int outer_rank) {
  lf::kir::LaunchArgs a;
  a.outer_rank = outer_rank;
  a.sizes = std::move(sizes);
  return a;
}

lf::kir::Kernel kernel_of(bool row) {
  lf::kir::Kernel k;
  k.row = row;
  k.outer_rank = 1;
  return k;
}

// Monte Carlo pi's row kernel before the cost rule (2^22 rows of 2 writing xy and a value per row,
// no split functions): its rows go to every thread, 4 chunks each.
TEST(LaunchPlan, ManyShortRowsWithElementOutputsUseEveryThread) {
  LaunchPlan p = lf::cpu::plan_launch(kernel_of(true), args_of({int64_t{1} << 22, 2}, 1), false, 2);
  EXPECT_EQ(p.mode, LaunchPlan::Mode::Rows);
  EXPECT_EQ(p.chunks, 8);
  EXPECT_EQ(lf::cpu::plan_launch(kernel_of(true), args_of({int64_t{1} << 22, 2}, 1), false, 16).chunks, 64);
}

// One long row: split when the kernel has split functions (outputs all per row), else one task
// (softmax of one row: the cost rule's parallelism note in fuser.cpp).
TEST(LaunchPlan, OneLongRow) {
  auto a = args_of({1, int64_t{1} << 22}, 1);
  LaunchPlan split = lf::cpu::plan_launch(kernel_of(true), a, true, 2);
  EXPECT_EQ(split.mode, LaunchPlan::Mode::Split);
  EXPECT_EQ(split.per_row, (int64_t{1} << 22) / lf::cpu::kSplitGrain);
  LaunchPlan whole = lf::cpu::plan_launch(kernel_of(true), a, false, 2);
  EXPECT_EQ(whole.mode, LaunchPlan::Mode::Rows);
  EXPECT_EQ(whole.chunks, 1);
}

// A pointwise kernel over contiguous data is one row: its columns are split.
TEST(LaunchPlan, PointwiseOneRowSplitsColumns) {
  LaunchPlan p = lf::cpu::plan_launch(kernel_of(false), args_of({1, int64_t{1} << 23}, 1), false, 2);
  EXPECT_EQ(p.mode, LaunchPlan::Mode::Columns);
  EXPECT_EQ(p.chunks, 8);
  EXPECT_EQ(lf::cpu::plan_launch(kernel_of(false), args_of({1, 1000}, 1), false, 2).chunks, 1);
  EXPECT_EQ(lf::cpu::plan_launch(kernel_of(false), args_of({0, 1000}, 1), false, 2).mode, LaunchPlan::Mode::None);
}

}  // namespace
