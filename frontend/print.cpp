// operator<< for Tensor, formatted like PyTorch: tensor([[1.0000, 2.5000], ...], dtype=lf.float16).
// Follows torch/_tensor_str.py with its default options (precision 4, threshold 1000, edgeitems 3,
// linewidth 80), step by step, so that output can be compared with PyTorch's character for character.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <ostream>
#include <string>

#include "frontend/record.h"
#include "lazyfuse/complex.h"
#include "lazyfuse/tensor.h"

namespace lf {
namespace {

constexpr int64_t kSummarizeAbove = 1000;  // elements; torch's threshold
constexpr int64_t kEdgeItems = 3;
constexpr int64_t kLineWidth = 80;

// The values of a tensor, read once in the widest type of their kind.
struct Values {
  DType dtype;
  std::vector<double> f;   // floating dtypes; of a complex one, the real parts
  std::vector<int64_t> i;  // integer dtypes
  std::vector<bool> b;     // bool
  std::vector<double> im;  // complex dtypes: the imaginary parts
};

// How every element is written, decided once from the elements that will be shown (torch's
// _Formatter): floats are "integral" ("1.", "-2.") when every finite non-zero value is whole,
// scientific when they span more than 1000x or reach past 1e8 (or below 1e-4 when fractional).
// The width is that of the widest finite non-zero value; nan, inf and 0 are padded to it but may
// be wider.
struct Formatter {
  DType dtype = DType::Float32;
  bool int_mode = true;
  bool sci_mode = false;
  size_t max_width = 1;

  std::string raw(const Values& v, size_t k) const {
    if (dtype == DType::Bool) return v.b[k] ? "True" : "False";
    if (is_integral(dtype)) return std::to_string(v.i[k]);
    double x = v.f[k];
    if (std::isnan(x)) return "nan";  // Python never writes "-nan"
    if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
    char buf[64];
    if (sci_mode) {
      std::snprintf(buf, sizeof buf, "%.4e", x);
    } else if (int_mode) {
      std::snprintf(buf, sizeof buf, "%.0f.", x);
    } else {
      std::snprintf(buf, sizeof buf, "%.4f", x);
    }
    return buf;
  }

  std::string format(const Values& v, size_t k) const {
    std::string s = raw(v, k);
    return s.size() < max_width ? std::string(max_width - s.size(), ' ') + s : s;
  }
};

Formatter make_formatter(const Values& v, const std::vector<int64_t>& shown) {
  Formatter f;
  f.dtype = v.dtype;
  if (!is_floating(v.dtype)) {
    for (int64_t k : shown) f.max_width = std::max(f.max_width, f.raw(v, static_cast<size_t>(k)).size());
    return f;
  }
  std::vector<double> nz;  // finite, non-zero
  for (int64_t k : shown) {
    double x = v.f[static_cast<size_t>(k)];
    if (std::isfinite(x) && x != 0) nz.push_back(x);
  }
  if (nz.empty()) return f;
  double lo = INFINITY, hi = 0;
  for (double x : nz) {
    lo = std::min(lo, std::fabs(x));
    hi = std::max(hi, std::fabs(x));
    if (x != std::ceil(x)) f.int_mode = false;
  }
  f.sci_mode = hi / lo > 1000.0 || hi > 1.0e8 || (!f.int_mode && lo < 1.0e-4);
  Values one{v.dtype, {0.0}, {}, {}};
  for (double x : nz) {
    one.f[0] = x;
    f.max_width = std::max(f.max_width, f.raw(one, 0).size());
  }
  return f;
}

struct Printer {
  const Shape& shape;
  const Values& values;
  bool summarize;
  Formatter fmt;
  Formatter imag_fmt;  // complex values: torch formats the real and imaginary parts apart

  // One element: a complex one as torch's _scalar_str, the real part padded, then the imaginary
  // part's sign and digits unpadded, and "j".
  std::string element(size_t k) const {
    if (!is_complex(values.dtype)) return fmt.format(values, k);
    Values one{DType::Float64, {values.im[k]}, {}, {}, {}};
    std::string imag = imag_fmt.format(one, 0) + "j";
    imag.erase(0, imag.find_first_not_of(' '));
    return fmt.format(values, k) + (imag[0] == '-' || imag[0] == '+' ? "" : "+") + imag;
  }
  size_t element_width() const { return fmt.max_width + (is_complex(values.dtype) ? imag_fmt.max_width + 1 : 0); }

  int64_t stride(size_t dim) const {
    int64_t s = 1;
    for (size_t d = dim + 1; d < shape.size(); ++d) s *= shape[d];
    return s;
  }
  bool cut(size_t dim) const { return summarize && shape[dim] > 2 * kEdgeItems; }

  // The flat indices of the elements that will be shown, in order (torch's get_summarized_data).
  void collect(size_t dim, int64_t base, std::vector<int64_t>& out) const {
    if (dim == shape.size()) {
      out.push_back(base);
      return;
    }
    for (int64_t i = 0; i < shape[dim]; ++i) {
      if (cut(dim) && i == kEdgeItems) i = shape[dim] - kEdgeItems;
      collect(dim + 1, base + i * stride(dim), out);
    }
  }

  // torch's _vector_str: elements joined by ", ", wrapped to the line width.
  std::string vector_str(int64_t base, int64_t indent) const {
    size_t dim = shape.size() - 1;
    std::vector<std::string> data;
    for (int64_t i = 0; i < shape[dim]; ++i) {
      if (cut(dim) && i == kEdgeItems) {
        data.push_back(" ...");
        i = shape[dim] - kEdgeItems;
      }
      data.push_back(element(static_cast<size_t>(base + i)));
    }
    int64_t element_length = static_cast<int64_t>(element_width()) + 2;
    size_t per_line = static_cast<size_t>(std::max<int64_t>(1, (kLineWidth - indent) / element_length));
    std::string s = "[";
    for (size_t k = 0; k < data.size(); ++k) {
      if (k > 0) s += k % per_line == 0 ? ",\n" + std::string(static_cast<size_t>(indent + 1), ' ') : ", ";
      s += data[k];
    }
    return s + "]";
  }

  // torch's _tensor_str_with_formatter: slices joined by "," and (dims left - 1) newlines.
  std::string tensor_str(size_t dim, int64_t base, int64_t indent) const {
    if (dim + 1 == shape.size()) return vector_str(base, indent);
    std::vector<std::string> slices;
    for (int64_t i = 0; i < shape[dim]; ++i) {
      if (cut(dim) && i == kEdgeItems) {
        slices.push_back("...");
        i = shape[dim] - kEdgeItems;
      }
      slices.push_back(tensor_str(dim + 1, base + i * stride(dim), indent + 1));
    }
    std::string sep = "," + std::string(shape.size() - dim - 1, '\n') + std::string(static_cast<size_t>(indent + 1), ' ');
    std::string s = "[";
    for (size_t k = 0; k < slices.size(); ++k) s += (k ? sep : "") + slices[k];
    return s + "]";
  }
};

Values read(const Tensor& t) {
  Values v{t.dtype(), {}, {}, {}};
  if (v.dtype == DType::Bool) {
    v.b = t.to_vector<bool>();
  } else if (is_integral(v.dtype)) {
    v.i = t.to_vector<int64_t>();
  } else if (is_complex(v.dtype)) {
    for (std::complex<double> z : t.to_vector<std::complex<double>>()) {
      v.f.push_back(z.real());
      v.im.push_back(z.imag());
    }
  } else {
    v.f = t.to_vector<double>();
  }
  return v;
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  detail::check_defined("print", {&t});  // like every other use of an empty handle
  DType d = t.dtype();
  const Shape& shape = t.shape();
  Values values = read(t);
  std::vector<std::string> suffixes;
  if (t.device().is_cuda()) suffixes.push_back("device='" + t.device().str() + "'");
  std::string body;
  if (t.numel() == 0) {
    body = "[]";
    // Like NumPy, the shape is shown unless it is (0,); nothing shows the dtype but the suffix.
    if (t.dim() != 1) {
      std::string size = "size=(";
      for (size_t i = 0; i < shape.size(); ++i) size += (i ? ", " : "") + std::to_string(shape[i]);
      suffixes.push_back(size + ")");
    }
    if (d != DType::Float32 && d != DType::Complex64) suffixes.push_back(std::string("dtype=lf.") + dtype_name(d));
  } else {
    Printer p{shape, values, t.numel() > kSummarizeAbove, {}};
    std::vector<int64_t> shown;
    p.collect(0, 0, shown);
    // A complex tensor's parts are formatted as float64 values (torch's real and imag formatters).
    const DType part = is_complex(d) ? DType::Float64 : d;
    p.fmt = make_formatter(Values{part, values.f, values.i, values.b, {}}, shown);
    if (is_complex(d)) p.imag_fmt = make_formatter(Values{part, values.im, {}, {}, {}}, shown);
    body = t.dim() == 0 ? p.element(0) : p.tensor_str(0, 0, 7);  // "tensor(" is 7 wide
    if (d != DType::Float32 && d != DType::Int64 && d != DType::Bool && d != DType::Complex64)
      suffixes.push_back(std::string("dtype=lf.") + dtype_name(d));
  }
  os << "tensor(" << body;
  for (const std::string& s : suffixes) os << ", " << s;
  return os << ')';
}

}  // namespace lf
