// How a row kernel's passes share work: an analysis of the kernel IR that the CPU emitter reads.
#pragma once

#include <vector>
#include <unordered_map>

#include "codegen/kir/kernel_ir.h"

namespace lf::kir {

// How a row's passes share work (row_plan.cpp): `keep` maps an element value that a
// reduction pass computes, and the output pass needs again at some cost (a transcendental, a
// division), to an element output of its dtype that holds it meanwhile (softmax's e^(x - max));
// `row_divisions` are the float divisions of an element value by a row value that the output pass
// computes (softmax's e / sum), which it may do with one reciprocal per row.
struct RowPlan {
  std::unordered_map<int, int> keep;  // element value -> output operand
  std::vector<int> row_divisions;     // instructions
  bool is_row_division(int i) const;
};
RowPlan row_plan(const Kernel& kernel);

}  // namespace lf::kir
