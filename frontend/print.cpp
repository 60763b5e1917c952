// operator<< for Tensor, formatted like PyTorch: tensor([[1.0000, 2.5000], ...], dtype=lf.float16).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>

#include "lazyfuse/tensor.h"

namespace lf {
namespace {

constexpr int64_t kSummarizeAbove = 1000;  // elements; like torch's threshold
constexpr int64_t kEdgeItems = 3;

// How every float element is written, decided once for the whole tensor (as PyTorch does).
struct FloatFormat {
  bool integral = true;  // all finite values are whole numbers: "1.", "-2."
  bool scientific = false;
};

FloatFormat choose_format(const std::vector<double>& v) {
  FloatFormat f;
  double max_abs = 0, min_abs = INFINITY;
  bool any = false;
  for (double x : v) {
    if (!std::isfinite(x)) continue;
    any = true;
    if (x != std::floor(x)) f.integral = false;
    double a = std::fabs(x);
    max_abs = std::max(max_abs, a);
    if (a != 0) min_abs = std::min(min_abs, a);
  }
  if (!any) return f;
  if (f.integral) {
    f.scientific = max_abs >= 1e8;
  } else {
    f.scientific = max_abs >= 1e8 || min_abs < 1e-4 || (min_abs != INFINITY && max_abs / min_abs > 1000);
  }
  return f;
}

std::string format_float(double x, const FloatFormat& f) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[64];
  if (f.scientific) {
    std::snprintf(buf, sizeof buf, "%.4e", x);
  } else if (f.integral) {
    std::snprintf(buf, sizeof buf, "%.0f.", x);
  } else {
    std::snprintf(buf, sizeof buf, "%.4f", x);
  }
  return buf;
}

struct Printer {
  const Shape& shape;
  std::vector<std::string> cells;  // every element, formatted, row-major
  size_t width = 0;
  bool summarize = false;

  void print(std::ostream& os, size_t dim, int64_t base, int indent) const {
    if (dim == shape.size()) {
      std::string s = cells[static_cast<size_t>(base)];
      os << std::string(width - s.size(), ' ') << s;
      return;
    }
    int64_t n = shape[dim];
    int64_t stride = 1;
    for (size_t d = dim + 1; d < shape.size(); ++d) stride *= shape[d];
    os << '[';
    bool cut = summarize && n > 2 * kEdgeItems;
    for (int64_t i = 0; i < n; ++i) {
      if (cut && i == kEdgeItems) {
        os << "...";
        i = n - kEdgeItems - 1;
        os << (dim + 1 == shape.size() ? ", " : ",\n" + std::string(static_cast<size_t>(indent + 1), ' '));
        continue;
      }
      print(os, dim + 1, base + i * stride, indent + 1);
      if (i + 1 < n) {
        if (dim + 1 == shape.size()) {
          os << ", ";
        } else {
          os << ',' << std::string(shape.size() - dim - 1, '\n') << std::string(static_cast<size_t>(indent + 1), ' ');
        }
      }
    }
    os << ']';
  }
};

}  // namespace

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "tensor(<empty handle>)";
  DType d = t.dtype();
  Printer p{t.shape(), {}};
  p.summarize = t.numel() > kSummarizeAbove;
  if (d == DType::Bool) {
    for (bool b : t.to_vector<bool>()) p.cells.push_back(b ? "True" : "False");
  } else if (is_integral(d)) {
    for (int64_t v : t.to_vector<int64_t>()) p.cells.push_back(std::to_string(v));
  } else {
    std::vector<double> v = t.to_vector<double>();
    FloatFormat f = choose_format(v);
    for (double x : v) p.cells.push_back(format_float(x, f));
  }
  for (const std::string& c : p.cells) p.width = std::max(p.width, c.size());
  os << "tensor(";
  if (t.dim() == 0) {
    os << p.cells[0];
  } else if (t.numel() == 0) {
    os << "[]";
    if (t.dim() > 1) {
      os << ", size=(";
      for (size_t i = 0; i < t.shape().size(); ++i) os << (i ? ", " : "") << t.shape()[i];
      os << ')';
    }
  } else {
    p.print(os, 0, 0, 7);  // "tensor(" is 7 characters wide
  }
  if (t.device().is_cuda()) os << ", device='" << t.device().str() << "'";
  if (d != DType::Float32 && d != DType::Int64 && d != DType::Bool) os << ", dtype=lf." << dtype_name(d);
  return os << ')';
}

}  // namespace lf
