// Op codes and their static facts, generated from the op table (ops.inc).
#pragma once

#include <cstdint>

namespace lf::ir {

enum class Op : uint8_t {
#define LF_GENERATOR(Name, str, grad) Name,
#define LF_UNARY(Name, str, rule, expr, grad) Name,
#define LF_BINARY(Name, str, rule, expr, grad_a, grad_b) Name,
#define LF_REDUCE(Name, str, grad) Name,
#define LF_VIEW(Name, str, grad) Name,
#define LF_SPECIAL(Name, str, grad) Name,
#include "codegen/ir/ops.inc"
};

enum class OpKind : uint8_t { Special, Generator, Unary, Binary, Reduce, View };

// How an elementwise op treats dtypes; the frontend applies it when the op is recorded, so every
// elementwise node's inputs already share the op's compute dtype.
enum class DTypeRule : uint8_t {
  kNone,          // not elementwise
  kAny,           // any dtype, result the same
  kNumeric,       // not Bool; result the same
  kFloat,         // not Bool; integers computed in float32
  kRounding,      // not Bool; identity on integers
  kPredicate,     // any; result Bool
  kLogical,       // Bool only; result Bool
  kArith,         // promoted; two Bools are an error
  kTrueDiv,       // promoted, then integers to float32
  kFloatBinary,   // promoted, then integers to float32
  kCompare,       // promoted; result Bool
  kBitwise,       // Bool or integers, promoted; floats are an error
  kShift,         // integers, promoted; Bool and floats are an error
};

struct OpInfo {
  const char* name;
  OpKind kind;
  DTypeRule rule;
};

// The table itself is a constexpr array in the header so that op_info is a load, not a call: it
// is asked on every recorded op and many times a node in the fuser.
inline constexpr OpInfo kOpTable[] = {
#define LF_GENERATOR(Name, str, grad) {str, OpKind::Generator, DTypeRule::kNone},
#define LF_UNARY(Name, str, rule, expr, grad) {str, OpKind::Unary, DTypeRule::rule},
#define LF_BINARY(Name, str, rule, expr, grad_a, grad_b) {str, OpKind::Binary, DTypeRule::rule},
#define LF_REDUCE(Name, str, grad) {str, OpKind::Reduce, DTypeRule::kNone},
#define LF_VIEW(Name, str, grad) {str, OpKind::View, DTypeRule::kNone},
#define LF_SPECIAL(Name, str, grad) {str, OpKind::Special, DTypeRule::kNone},
#include "codegen/ir/ops.inc"
};

inline const OpInfo& op_info(Op op) { return kOpTable[static_cast<int>(op)]; }
inline const char* op_name(Op op) { return op_info(op).name; }
inline bool is_elementwise(Op op) {
  OpKind k = op_info(op).kind;
  return k == OpKind::Unary || k == OpKind::Binary || op == Op::Where || op == Op::Cast;
}
inline bool is_view(Op op) { return op_info(op).kind == OpKind::View; }
inline bool is_reduce(Op op) { return op_info(op).kind == OpKind::Reduce; }
inline bool is_generator(Op op) { return op_info(op).kind == OpKind::Generator; }
// The cumulative ops along one dim (a scan group each: Backend::scan).
inline bool is_scan(Op op) {
  return op == Op::CumSum || op == Op::CumProd || op == Op::LogCumSumExp || op == Op::CumMax || op == Op::CumMin;
}

}  // namespace lf::ir
