// Checked size arithmetic (runtime/checked.h).
#include "runtime/checked.h"

namespace lf::rt {

std::optional<int64_t> numel(const Shape& shape) {
  int64_t nonzero = 1;
  bool empty = false;
  for (int64_t s : shape) {
    if (s < 0) return std::nullopt;
    if (s == 0) {
      empty = true;
      continue;
    }
    auto p = mul(nonzero, s);
    if (!p) return std::nullopt;
    nonzero = *p;
  }
  return empty ? 0 : nonzero;
}

std::string shape_problem(const Shape& shape, size_t elem_size) {
  int64_t nonzero = 1;
  for (int64_t s : shape)
    if (s < 0) return "shape " + shape_str(shape) + " has a negative size";
  for (int64_t s : shape) {
    if (s == 0) continue;
    auto p = mul(nonzero, s);
    if (!p) return "shape " + shape_str(shape) + " has more elements than fit int64 (2^63 - 1)";
    nonzero = *p;
  }
  if (elem_size > 0 && !mul(nonzero, static_cast<int64_t>(elem_size)))
    return "shape " + shape_str(shape) + " of " + std::to_string(elem_size) + "-byte elements needs more bytes (" +
           std::to_string(nonzero) + " x " + std::to_string(elem_size) + ") than fit int64 (2^63 - 1)";
  return "";
}

size_t checked_bytes(const char* op, const Shape& shape, size_t elem_size) {
  std::string why = shape_problem(shape, elem_size);
  if (!why.empty()) throw Error(std::string("lf::") + op + ": " + why);
  return static_cast<size_t>(*numel(shape)) * elem_size;
}

int64_t checked_mul(const char* op, const char* what, int64_t a, int64_t b) {
  auto r = mul(a, b);
  if (!r)
    throw Error(std::string("lf::") + op + ": " + what + " overflows int64 (" + std::to_string(a) + " * " +
                std::to_string(b) + ")");
  return *r;
}

int64_t checked_add(const char* op, const char* what, int64_t a, int64_t b) {
  auto r = add(a, b);
  if (!r)
    throw Error(std::string("lf::") + op + ": " + what + " overflows int64 (" + std::to_string(a) + " + " +
                std::to_string(b) + ")");
  return *r;
}

}  // namespace lf::rt
