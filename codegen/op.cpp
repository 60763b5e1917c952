#include "codegen/op.h"

namespace lf::ir {
namespace {

constexpr OpInfo kOpTable[] = {
#define LF_GENERATOR(Name, str) {str, OpKind::Generator, DTypeRule::kNone},
#define LF_UNARY(Name, str, rule, expr) {str, OpKind::Unary, DTypeRule::rule},
#define LF_BINARY(Name, str, rule, expr) {str, OpKind::Binary, DTypeRule::rule},
#define LF_REDUCE(Name, str) {str, OpKind::Reduce, DTypeRule::kNone},
#define LF_VIEW(Name, str) {str, OpKind::View, DTypeRule::kNone},
#define LF_SPECIAL(Name, str) {str, OpKind::Special, DTypeRule::kNone},
#include "codegen/ops.inc"
};

}  // namespace

const OpInfo& op_info(Op op) { return kOpTable[static_cast<int>(op)]; }

}  // namespace lf::ir
