// The host's side of the CUDA emitter (emit.h): the analyses that choose a kernel's EmitOptions
// (int_aranges, narrow_ints, can_split_rows, sweep_invariant) and the metadata a launch packs.
#include "codegen/cuda/emit.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace lf::cuda {

using kir::Instr;
using kir::InstrKind;
using Op = ir::Op;

namespace {

// Launch parameter p (its bits) as the float64 it holds: an arange's start or step.
double param_double(const std::vector<int64_t>& params, int p) {
  double d;
  std::memcpy(&d, &params[static_cast<size_t>(p)], 8);
  return d;
}

}  // namespace

int int_aranges(const kir::Kernel& kernel, const std::vector<int64_t>& params) {
  auto value = [&](int p) { return param_double(params, p); };
  int kind = 2;
  for (const Instr& in : kernel.instrs) {
    if (in.kind != InstrKind::Gen || in.op != Op::Arange || in.dtype != DType::Int64) continue;
    double start = value(in.params[0]), step = value(in.params[1]);
    // |start| + 2^31 |step| < 2^53: every value and partial result is an exact float64 integer.
    if (start != std::trunc(start) || step != std::trunc(step) || !(std::abs(start) < 0x1p51) ||
        !(std::abs(step) < 0x1p20))
      return 0;
    if (step != 1) kind = 1;
  }
  return kind;
}

namespace {

// A closed interval of integers, or unknown. 128-bit bounds: products of two int64 bounds fit.
struct Range {
  bool known = false;
  __int128 lo = 0, hi = 0;
};

Range span(__int128 a, __int128 b) { return {true, std::min(a, b), std::max(a, b)}; }

Range dtype_range(DType d) {
  if (d == DType::Bool) return {true, 0, 1};
  if (d == DType::Int32) return {true, INT32_MIN, INT32_MAX};
  return {};
}

// The range of instruction `in` from its arguments' ranges (kir::Instr semantics; int64 wraps,
// so a result outside int64 is unknown).
Range op_range(const Instr& in, const std::vector<Range>& r) {
  auto a = [&](size_t k) { return r[static_cast<size_t>(in.args[k])]; };
  auto both = [&](auto f) -> Range {
    Range x = a(0), y = a(1);
    if (!x.known || !y.known) return {};
    return f(x, y);
  };
  Range out;
  switch (in.op) {
    case Op::Copy: out = a(0); break;
    case Op::Cast:  // between integers and bool; through a float the range is unknown
      if (in.dtype == DType::Bool) out = {true, 0, 1};
      else if (!is_floating(in.dtype) && a(0).known && (in.dtype == DType::Int64 || (a(0).lo >= INT32_MIN && a(0).hi <= INT32_MAX)))
        out = a(0);
      break;
    case Op::Neg:
      if (a(0).known) out = span(-a(0).lo, -a(0).hi);
      break;
    case Op::Abs:
      if (a(0).known) {
        Range x = a(0);
        __int128 m = std::max(x.hi < 0 ? -x.hi : x.hi, x.lo < 0 ? -x.lo : x.lo);
        out = {true, x.lo <= 0 && x.hi >= 0 ? 0 : std::min(x.lo < 0 ? -x.lo : x.lo, x.hi < 0 ? -x.hi : x.hi), m};
      }
      break;
    case Op::Square:
      if (a(0).known) {
        Range x = a(0);
        __int128 m = std::max(x.lo * x.lo, x.hi * x.hi);
        out = {true, x.lo <= 0 && x.hi >= 0 ? 0 : std::min(x.lo * x.lo, x.hi * x.hi), m};
      }
      break;
    case Op::Relu:
      if (a(0).known) out = {true, std::max<__int128>(a(0).lo, 0), std::max<__int128>(a(0).hi, 0)};
      break;
    case Op::Sign: out = {true, -1, 1}; break;
    case Op::Add: out = both([](Range x, Range y) { return Range{true, x.lo + y.lo, x.hi + y.hi}; }); break;
    case Op::Sub: out = both([](Range x, Range y) { return Range{true, x.lo - y.hi, x.hi - y.lo}; }); break;
    case Op::Mul:
      out = both([](Range x, Range y) {
        __int128 p[] = {x.lo * y.lo, x.lo * y.hi, x.hi * y.lo, x.hi * y.hi};
        return Range{true, *std::min_element(p, p + 4), *std::max_element(p, p + 4)};
      });
      break;
    case Op::Maximum:
      out = both([](Range x, Range y) { return Range{true, std::max(x.lo, y.lo), std::max(x.hi, y.hi)}; });
      break;
    case Op::Minimum:
      out = both([](Range x, Range y) { return Range{true, std::min(x.lo, y.lo), std::min(x.hi, y.hi)}; });
      break;
    case Op::Where: {
      Range x = a(1), y = a(2);
      if (x.known && y.known) out = {true, std::min(x.lo, y.lo), std::max(x.hi, y.hi)};
      break;
    }
    default: break;
  }
  const __int128 lo64 = INT64_MIN, hi64 = INT64_MAX;
  if (out.known && (out.lo < lo64 || out.hi > hi64)) return {};
  return out;
}

}  // namespace

std::vector<bool> narrow_ints(const kir::Kernel& kernel, const kir::LaunchArgs& args, int int_arange) {
  const size_t n = kernel.instrs.size(), rank = args.sizes.size();
  std::vector<Range> r(n);
  std::vector<bool> narrow(n, false);
  bool any = false;
  auto value = [&](int p) { return param_double(args.params, p); };
  for (size_t i = 0; i < n; ++i) {
    const Instr& in = kernel.instrs[i];
    Range out;
    switch (in.kind) {
      case InstrKind::Param:
        if (kernel.params[static_cast<size_t>(in.slot)] == kir::ParamKind::Int) {
          __int128 v = args.params[static_cast<size_t>(in.slot)];
          out = {true, v, v};
        }
        break;
      case InstrKind::Gen:
        // start + index * step, integral (int_aranges); the index spans the Index operand's reach.
        if (in.op == Op::Arange && in.dtype == DType::Int64 && int_arange > 0) {
          __int128 lo = args.offsets[static_cast<size_t>(in.slot)], hi = lo;
          for (size_t d = 0; d < rank; ++d) {
            __int128 reach = __int128{std::max<int64_t>(args.sizes[d] - 1, 0)} * args.strides[static_cast<size_t>(in.slot) * rank + d];
            (reach < 0 ? lo : hi) += reach;
          }
          __int128 start = static_cast<int64_t>(value(in.params[0])), step = static_cast<int64_t>(value(in.params[1]));
          out = span(start + lo * step, start + hi * step);
        }
        break;
      case InstrKind::Op: out = op_range(in, r); break;
      default: break;
    }
    if (out.known && in.dtype == DType::Int32 && (out.lo < INT32_MIN || out.hi > INT32_MAX)) out = {};  // wraps
    if (!out.known) out = dtype_range(in.dtype);
    if (is_floating(in.dtype)) out = {};
    r[i] = out;
    // Narrowed: an int64 value within int32 whose int64 arguments are narrowed too (an Op's
    // arguments; a Gen or Param has none). Row values stay 64-bit (a reduction's result is one).
    // (Only a Param, an integer Gen or an Op can have a known int64 range.)
    if (in.dtype != DType::Int64 || !out.known || out.lo < INT32_MIN || out.hi > INT32_MAX) continue;
    bool ok = true;
    for (size_t k = 0; k < in.args.size(); ++k) {
      const Instr& a = kernel.instrs[static_cast<size_t>(in.args[k])];
      if (a.dtype == DType::Int64 && !narrow[static_cast<size_t>(in.args[k])]) ok = false;
      if (a.dtype != DType::Int64 && !(in.op == Op::Where && k == 0) && !(in.op == Op::Cast && is_integral(a.dtype)))
        ok = false;  // int64 ops take int64 arguments; a cast from a narrower integer is exact
    }
    if (!ok) continue;
    narrow[i] = true;
    any = true;
  }
  if (!any) narrow.clear();
  return narrow;
}

std::string narrow_key(const std::vector<bool>& narrow) {
  if (narrow.empty()) return "";
  std::string k = "|n";
  for (size_t i = 0; i < narrow.size(); ++i)
    if (narrow[i]) k += std::to_string(i) + ".";
  return k;
}

int64_t fast_div_word(int64_t n) {
  if (n < 2 || n >= (int64_t{1} << 31)) return 0;
  int log2 = 63 - __builtin_clzll(static_cast<uint64_t>(n));
  if ((n & (n - 1)) != 0) ++log2;  // ceil(log2(n))
  const int p = 31 + log2;
  const uint64_t m = ((uint64_t{1} << p) + static_cast<uint64_t>(n) - 1) / static_cast<uint64_t>(n);
  return static_cast<int64_t>((static_cast<uint64_t>(p - 32) << 32) | (m & 0xffffffffu));
}

int32_t fast_div(int32_t x, int32_t n, int64_t word) {
  if (n == 1) return x;
  uint64_t hi = (static_cast<uint64_t>(static_cast<uint32_t>(x)) * static_cast<uint32_t>(word)) >> 32;
  return static_cast<int32_t>(static_cast<uint32_t>(hi) >> static_cast<uint32_t>(static_cast<uint64_t>(word) >> 32));
}

void pack_kernel_meta(const kir::Kernel& kernel, const kir::LaunchArgs& args, std::vector<int64_t>* meta) {
  kir::pack_meta(kernel, args, meta);
  for (int64_t n : args.sizes) meta->push_back(fast_div_word(n));
}

bool can_split_rows(const kir::Kernel& k) {
  if (!k.row) return false;
  int reductions = 0;
  for (const kir::Instr& in : k.instrs) reductions += in.kind == kir::InstrKind::Reduce;
  for (const kir::Output& o : k.outputs)
    if (!k.instrs[o.instr].row) return false;
  return reductions == 1;
}

std::vector<bool> sweep_invariant(const kir::Kernel& k) {
  std::vector<bool> out(k.operands.size(), false);
  if (!k.row || k.outer_rank < 2) return out;
  for (const kir::Instr& in : k.instrs) {
    if (in.kind != kir::InstrKind::Load || in.row) continue;
    const std::vector<kir::StrideClass>& s = k.operands[static_cast<size_t>(in.slot)].strides;
    out[static_cast<size_t>(in.slot)] =
        std::all_of(s.begin(), s.begin() + (k.outer_rank - 1), [](kir::StrideClass c) { return c == kir::StrideClass::Zero; });
  }
  return out;
}

}  // namespace lf::cuda
