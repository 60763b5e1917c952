// The argument helpers that convolution (ops_conv.cpp, where they are defined) and pooling
// (ops_pool.cpp) share.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

#include "lazyfuse/tensor.h"

namespace lf::detail {

std::string pair_str(int64_t h, int64_t w);
void check_float(const char* op, std::initializer_list<const Tensor*> args);
Tensor batched(const char* op, const Tensor& x, int64_t rank);

}  // namespace lf::detail
