// Checked arithmetic for sizes: every element count, stride, offset and byte size of a shape goes
// through these, so that a size past int64 is an lf::Error naming the op and the operands instead
// of a wrapped number (a negative shape, a zero-byte buffer that kernels then write past).
//
// The rule a shape must meet (shape_problem): no negative size, and the product of its non-zero
// sizes times the element size fits int64. Counting the non-zero sizes (as PyTorch does) keeps the
// contiguous strides of an empty tensor ([0, 2^40, 2^40]) in range too; every stride and in-bounds
// offset of such a shape is then at most its byte size, so they cannot overflow either.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "lazyfuse/types.h"

namespace lf::rt {

// a * b, a + b, a - b; nullopt when the result does not fit int64.
inline std::optional<int64_t> mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<int64_t> add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<int64_t> sub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// The product of `shape`'s sizes, nullopt when a partial product of its non-zero sizes overflows
// or a size is negative.
std::optional<int64_t> numel(const Shape& shape);

// What is wrong with `shape` as the shape of a tensor of `elem_size`-byte elements, in words
// ("has a negative size", "has more than 2^63 - 1 elements", "is 2^64 bytes, more than fit int64"),
// or "" when it is a valid shape. elem_size 0: only the element count is checked.
std::string shape_problem(const Shape& shape, size_t elem_size);

// numel(shape) * elem_size for a shape that passed shape_problem; throws lf::Error naming `op`
// otherwise (a caller that forgot the check gets an error, never a wrapped size).
size_t checked_bytes(const char* op, const Shape& shape, size_t elem_size);

// The checked operations, throwing lf::Error "lf::<op>: <what> overflows int64 (<a> * <b>)".
int64_t checked_mul(const char* op, const char* what, int64_t a, int64_t b);
int64_t checked_add(const char* op, const char* what, int64_t a, int64_t b);

}  // namespace lf::rt
