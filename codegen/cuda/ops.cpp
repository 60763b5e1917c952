// The CUDA backend's op table: the CUDA C of every elementwise op, one case each, and the prelude
// every kernel starts with. The switch over the op enum has no default
// (codegen/ir/not_elementwise_cases.inc lists the other ops), so an op missing here is a compile
// error.
#include "codegen/cuda/ops.h"

#include <cmath>
#include <sstream>

namespace lf::cuda {

using Op = ir::Op;

// Shared by every kernel: 16-bit float conversions (the same rounding as the CPU backend),
// NaN-propagating max/min, and the counter-based generator of codegen/ir/random.h.
extern const char* const kPrelude = R"(
typedef long long i64;
typedef unsigned long long u64;
#define INFINITY __int_as_float(0x7f800000)
#define NAN __int_as_float(0x7fc00000)
__device__ __forceinline__ float lf_h2f(unsigned short h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ unsigned short lf_f2h(float f) { unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
__device__ __forceinline__ float lf_b2f(unsigned short b) { return __uint_as_float(((unsigned)b) << 16); }
__device__ __forceinline__ unsigned short lf_f2b(float f) {
  unsigned u = __float_as_uint(f);
  if (f != f) return (unsigned short)((u >> 16) | 0x40u);
  return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
__device__ __forceinline__ float lf_r16h(float f) { return lf_h2f(lf_f2h(f)); }
__device__ __forceinline__ float lf_r16b(float f) { return lf_b2f(lf_f2b(f)); }
template <class T> __device__ __forceinline__ T lf_max(T a, T b) { return (a != a || b != b) ? (T)NAN : (a < b ? b : a); }
// log(e^a + e^b) without overflow (a fused logcumsumexp's step; codegen/reference/math.h's).
template <class T> __device__ __forceinline__ T lf_logaddexp(T a, T b) {
  if (a != a || b != b) return (T)NAN;
  const T hi = a < b ? b : a, lo = a < b ? a : b;
  return isinf(hi) ? hi : hi + log1p(exp(lo - hi));
}
template <class T> __device__ __forceinline__ T lf_min(T a, T b) { return (a != a || b != b) ? (T)NAN : (b < a ? b : a); }
// The low 32 bits of an index known to fit: through asm, so that the compiler does not fold
// (int)a * (int)b back into a 64-bit multiply and a truncation.
__device__ __forceinline__ int lf_i32(long long x) { int r; asm("cvt.u32.u64 %0, %1;" : "=r"(r) : "l"(x)); return r; }
// x / n for 0 <= x < 2^31 through the multiplier (low half) and shift (high half) the host packed
// into w (cuda::fast_div_word, CUTLASS's FastDivmod): a multiply-high and a shift instead of the
// twenty-odd instructions of a division by a number only known at run time.
__device__ __forceinline__ int lf_div(int x, int n, long long w) {
  return n == 1 ? x : (int)(__umulhi((unsigned)x, (unsigned)w) >> (unsigned)(w >> 32));
}
template <class T> __device__ __forceinline__ T lf_imax(T a, T b) { return a < b ? b : a; }
template <class T> __device__ __forceinline__ T lf_imin(T a, T b) { return b < a ? b : a; }
template <class T> __device__ __forceinline__ T lf_ipow(T a, T e) {
  if (e < 0) return a == 1 ? (T)1 : a == -1 ? ((e & 1) ? (T)-1 : (T)1) : (T)0;
  T r = 1;
  while (e) { if (e & 1) r *= a; a *= a; e >>= 1; }
  return r;
}
// remainder, fmod, floor_divide and shifts as codegen/reference/math.h defines them: integer
// division by 0 gives 0, INT_MIN / -1 wraps.
template <class T> __device__ __forceinline__ T lf_ifmod(T a, T b) { return (b == 0 || b == -1) ? (T)0 : (T)(a % b); }
template <class T> __device__ __forceinline__ T lf_irem(T a, T b) {
  T r = lf_ifmod<T>(a, b);
  return (r != 0 && ((r < 0) != (b < 0))) ? (T)(r + b) : r;
}
template <class T> __device__ __forceinline__ T lf_ifloordiv(T a, T b) {
  if (b == 0) return (T)0;
  if (b == -1) return (T)(0ull - (u64)a);
  T q = a / b, r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? (T)(q - 1) : q;
}
__device__ __forceinline__ float lf_fmodx(float a, float b) { return fmodf(a, b); }
__device__ __forceinline__ double lf_fmodx(double a, double b) { return fmod(a, b); }
__device__ __forceinline__ float lf_floorx(float a) { return floorf(a); }
__device__ __forceinline__ double lf_floorx(double a) { return floor(a); }
__device__ __forceinline__ float lf_copysignx(float a, float b) { return copysignf(a, b); }
__device__ __forceinline__ double lf_copysignx(double a, double b) { return copysign(a, b); }
template <class T> __device__ __forceinline__ T lf_frem(T a, T b) {
  T m = lf_fmodx(a, b);
  return (m != 0 && ((b < 0) != (m < 0))) ? m + b : m;
}
template <class T> __device__ __forceinline__ T lf_ffloordiv(T a, T b) {
  if (b == 0) return a / b;
  T mod = lf_fmodx(a, b);
  T div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= (T)1;
  if (div == 0) return lf_copysignx((T)0, a / b);
  T fl = lf_floorx(div);
  return div - fl > (T)0.5 ? fl + (T)1 : fl;
}
template <class T> __device__ __forceinline__ T lf_shl(T a, T b) {
  return (b < 0 || b >= (T)(sizeof(T) * 8)) ? (T)0 : (T)((u64)a << b);
}
template <class T> __device__ __forceinline__ T lf_shr(T a, T b) {
  return (b < 0 || b >= (T)(sizeof(T) * 8)) ? (T)(a < 0 ? -1 : 0) : (T)(a >> b);
}
__device__ __forceinline__ u64 lf_mix(u64 seed, u64 index) {
  u64 z = seed + (index + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
// An integer within int64 (ir::arange_is_integral): (i64)x is then defined and exact.
__device__ __forceinline__ bool lf_integral(double x) { return x >= -9223372036854775808.0 && x < 9223372036854775808.0 && (double)(i64)x == x; }
template <class T> __device__ __forceinline__ T lf_shfl_down(T v, int d) { return __shfl_down_sync(0xffffffffu, v, d); }
__device__ __forceinline__ bool lf_shfl_down(bool v, int d) { return __shfl_down_sync(0xffffffffu, (int)v, d) != 0; }
template <class T> __device__ __forceinline__ T lf_shfl(T v, int src) { return __shfl_sync(0xffffffffu, v, src); }
__device__ __forceinline__ bool lf_shfl(bool v, int src) { return __shfl_sync(0xffffffffu, (int)v, src) != 0; }
)";

const char* ctype(DType d) {
  switch (d) {
    case DType::Bool: return "bool";
    case DType::Int32: return "int";
    case DType::Int64: return "i64";
    case DType::Float64: return "double";
    default: return "float";
  }
}

const char* stype(DType d) {
  switch (d) {
    case DType::Bool: return "unsigned char";
    case DType::Float16:
    case DType::BFloat16: return "unsigned short";
    default: return ctype(d);
  }
}

std::string lit(double v, DType d) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  std::string s = os.str();
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return d == DType::Float64 ? s : s + "f";
}

std::string math1(const char* fname, const std::string& x, DType d) {
  return d == DType::Float64 ? std::string(fname) + "(" + x + ")" : std::string(fname) + "f(" + x + ")";
}
std::string math2(const char* fname, const std::string& x, const std::string& y, DType d) {
  return d == DType::Float64 ? std::string(fname) + "(" + x + ", " + y + ")"
                             : std::string(fname) + "f(" + x + ", " + y + ")";
}

std::string elementwise(Op op, const std::vector<std::string>& a, DType dt) {
  const std::string& x = a[0];
  const std::string& y = a.size() > 1 ? a[1] : x;
  std::string t = ctype(dt);
  // Integer + - * wrap in two's complement: compute in unsigned.
  std::string ut = dt == DType::Int32 ? "unsigned" : "u64";
  bool fl = is_floating(dt);
  std::string one = fl ? lit(1.0, dt) : "1";
  std::string zero = fl ? lit(0.0, dt) : "0";
  auto c = [&](double val) { return lit(val, dt); };
  switch (op) {
    case Op::Neg: return "(-" + x + ")";
    case Op::Abs: return fl ? math1("fabs", x, dt) : "(" + x + " < 0 ? -" + x + " : " + x + ")";
    case Op::Exp: return math1("exp", x, dt);
    case Op::Exp2: return math1("exp2", x, dt);
    case Op::Log: return math1("log", x, dt);
    case Op::Log2: return math1("log2", x, dt);
    case Op::Log1p: return math1("log1p", x, dt);
    case Op::Expm1: return math1("expm1", x, dt);
    case Op::Sqrt: return math1("sqrt", x, dt);
    case Op::Rsqrt: return "(" + one + " / " + math1("sqrt", x, dt) + ")";
    case Op::Sin: return math1("sin", x, dt);
    case Op::Cos: return math1("cos", x, dt);
    case Op::Tan: return math1("tan", x, dt);
    case Op::Asin: return math1("asin", x, dt);
    case Op::Acos: return math1("acos", x, dt);
    case Op::Atan: return math1("atan", x, dt);
    case Op::Sinh: return math1("sinh", x, dt);
    case Op::Cosh: return math1("cosh", x, dt);
    case Op::Tanh: return math1("tanh", x, dt);
    case Op::Erf: return math1("erf", x, dt);
    case Op::Sigmoid: return "(" + one + " / (" + one + " + " + math1("exp", "-" + x, dt) + "))";
    case Op::Silu: return "(" + x + " / (" + one + " + " + math1("exp", "-" + x, dt) + "))";
    case Op::Gelu: return "(" + c(0.5) + " * " + x + " * (" + one + " + " + math1("erf", x + " * " + c(0.70710678118654752440), dt) + "))";
    case Op::GeluTanh:
      return "(" + c(0.5) + " * " + x + " * (" + one + " + " +
             math1("tanh", c(0.79788456080286535588) + " * (" + x + " + " + c(0.044715) + " * " + x + " * " + x + " * " + x + ")", dt) + "))";
    case Op::HardSwish: return "([&]{ auto r_ = " + x + " + " + c(3) + "; return " + x + " * (r_ < " + zero + " ? " + zero + " : r_ > " + c(6) + " ? " + c(6) + " : r_) / " + c(6) + "; }())";
    case Op::Logit: return math1("log", "(" + x + " / (" + one + " - " + x + "))", dt);
    case Op::Relu: return "(" + x + " < " + zero + " ? " + zero + " : " + x + ")";
    case Op::Floor: return fl ? math1("floor", x, dt) : x;
    case Op::Ceil: return fl ? math1("ceil", x, dt) : x;
    case Op::Round: return fl ? math1("rint", x, dt) : x;
    case Op::Sign:
      if (!fl) return "((" + std::string(ctype(dt)) + ")((" + x + " > 0) - (" + x + " < 0)))";
      return "(" + x + " != " + x + " ? " + x + " : (" + std::string(ctype(dt)) + ")((" + x + " > " + zero + ") - (" + x + " < " + zero + ")))";
    case Op::Reciprocal: return "(" + one + " / " + x + ")";
    case Op::Square: return "(" + x + " * " + x + ")";
    case Op::IsNan: return "(" + x + " != " + x + ")";
    case Op::IsInf: return "isinf(" + x + ")";
    case Op::IsFinite: return "isfinite(" + x + ")";
    case Op::LogicalNot: return "(!" + x + ")";
    case Op::Copy: return x;
    case Op::Add: return fl ? "(" + x + " + " + y + ")" : "((" + t + ")((" + ut + ")" + x + " + (" + ut + ")" + y + "))";
    case Op::Sub: return fl ? "(" + x + " - " + y + ")" : "((" + t + ")((" + ut + ")" + x + " - (" + ut + ")" + y + "))";
    case Op::Mul: return fl ? "(" + x + " * " + y + ")" : "((" + t + ")((" + ut + ")" + x + " * (" + ut + ")" + y + "))";
    case Op::Div: return "(" + x + " / " + y + ")";
    case Op::Pow: return fl ? math2("pow", x, y, dt) : "lf_ipow<" + t + ">(" + x + ", " + y + ")";
    case Op::Maximum: return fl ? "lf_max<" + t + ">(" + x + ", " + y + ")" : "lf_imax<" + t + ">(" + x + ", " + y + ")";
    case Op::Minimum: return fl ? "lf_min<" + t + ">(" + x + ", " + y + ")" : "lf_imin<" + t + ">(" + x + ", " + y + ")";
    case Op::Atan2: return math2("atan2", x, y, dt);
    case Op::Eq: return "(" + x + " == " + y + ")";
    case Op::Ne: return "(" + x + " != " + y + ")";
    case Op::Lt: return "(" + x + " < " + y + ")";
    case Op::Le: return "(" + x + " <= " + y + ")";
    case Op::Gt: return "(" + x + " > " + y + ")";
    case Op::Ge: return "(" + x + " >= " + y + ")";
    case Op::LogicalAnd: return "(" + x + " && " + y + ")";
    case Op::LogicalOr: return "(" + x + " || " + y + ")";
    case Op::Remainder: return (fl ? "lf_frem<" : "lf_irem<") + t + ">(" + x + ", " + y + ")";
    case Op::Fmod: return fl ? "lf_fmodx(" + x + ", " + y + ")" : "lf_ifmod<" + t + ">(" + x + ", " + y + ")";
    case Op::FloorDivide: return (fl ? "lf_ffloordiv<" : "lf_ifloordiv<") + t + ">(" + x + ", " + y + ")";
    case Op::BitwiseAnd: return "((" + t + ")(" + x + " & " + y + "))";
    case Op::BitwiseOr: return "((" + t + ")(" + x + " | " + y + "))";
    case Op::BitwiseXor: return "((" + t + ")(" + x + " ^ " + y + "))";
    case Op::BitwiseNot: return dt == DType::Bool ? "(!" + x + ")" : "((" + t + ")~" + x + ")";
    case Op::BitwiseLeftShift: return "lf_shl<" + t + ">(" + x + ", " + y + ")";
    case Op::BitwiseRightShift: return "lf_shr<" + t + ">(" + x + ", " + y + ")";
#include "codegen/ir/not_elementwise_cases.inc"
      break;
  }
  throw Error(std::string("cuda emitter: no lowering for op ") + ir::op_name(op));
}

}  // namespace lf::cuda
