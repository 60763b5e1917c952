// lf::einsum (issue 49) against einsum by loops in float64 (einsum_util.h), on random inputs:
// implicit and explicit output, ellipsis, diagonals, one operand, chains of 3 to 5, size-0 and size-1
// dims, broadcasting, non-contiguous inputs, dtypes; the lowering's matmuls and contraction order;
// errors; gradients against central differences. The products around it: products_test.cpp.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "codegen/ir/node.h"
#include "frontend/autograd/gradcheck.h"
#include "frontend/einsum_util.h"
#include "frontend/test_util.h"

namespace lf::test {
namespace {

// lf::einsum(equation) on float64 inputs of `shapes` against the loops over `terms` -> `output` (the
// same contraction with the ellipsis written out as letters).
void check_einsum(const std::string& equation, const std::vector<Shape>& shapes, const std::vector<std::string>& terms,
                  const std::string& output) {
  SCOPED_TRACE(equation);
  std::vector<Array> arrays;
  std::vector<Tensor> ts;
  for (size_t i = 0; i < shapes.size(); ++i) {
    arrays.push_back(random_array(shapes[i], static_cast<uint32_t>(100 + i)));
    ts.push_back(tensor_of(arrays.back()));
  }
  Tensor r = einsum(equation, ts);
  EXPECT_EQ(r.dtype(), DType::Float64);
  expect_array(r, naive_einsum(terms, output, arrays));
}

TEST(Einsum, ExplicitOutput) {
  check_einsum("ij,jk->ik", {{3, 4}, {4, 5}}, {"ij", "jk"}, "ik");
  check_einsum("ij,kj->ik", {{3, 4}, {5, 4}}, {"ij", "kj"}, "ik");
  check_einsum("ij,jk->ki", {{3, 4}, {4, 5}}, {"ij", "jk"}, "ki");
  check_einsum("bij,bjk->bik", {{2, 3, 4}, {2, 4, 5}}, {"bij", "bjk"}, "bik");
  check_einsum("bij,bkj->bki", {{2, 3, 4}, {2, 5, 4}}, {"bij", "bkj"}, "bki");
  check_einsum("i,i->", {{7}, {7}}, {"i", "i"}, "");
  check_einsum("i,j->ij", {{3}, {4}}, {"i", "j"}, "ij");
  check_einsum("i,j->ji", {{3}, {4}}, {"i", "j"}, "ji");
  check_einsum("ij,ij->ij", {{3, 4}, {3, 4}}, {"ij", "ij"}, "ij");
  check_einsum("ij,ij->", {{3, 4}, {3, 4}}, {"ij", "ij"}, "");
  check_einsum("ijk,ikl->jl", {{2, 3, 4}, {2, 4, 5}}, {"ijk", "ikl"}, "jl");
  check_einsum("abcd,cdbe->ae", {{2, 3, 4, 2}, {4, 2, 3, 3}}, {"abcd", "cdbe"}, "ae");
  check_einsum("bhqd,bhkd->bhqk", {{2, 2, 3, 4}, {2, 2, 5, 4}}, {"bhqd", "bhkd"}, "bhqk");
  check_einsum("ij,jk->", {{3, 4}, {4, 5}}, {"ij", "jk"}, "");
  check_einsum("ij,k->ijk", {{2, 3}, {4}}, {"ij", "k"}, "ijk");
  check_einsum("ij,j->i", {{3, 4}, {4}}, {"ij", "j"}, "i");
  check_einsum("ij,jk->ijk", {{2, 3}, {3, 4}}, {"ij", "jk"}, "ijk");  // j kept: a broadcast multiply
  check_einsum("Ab,bA->", {{3, 4}, {4, 3}}, {"Ab", "bA"}, "");
  check_einsum(" i j , j k -> i k ", {{3, 4}, {4, 5}}, {"ij", "jk"}, "ik");
}

TEST(Einsum, ImplicitOutputIsAlphabeticalLabelsSeenOnce) {
  check_einsum("ij,jk", {{3, 4}, {4, 5}}, {"ij", "jk"}, "ik");
  check_einsum("ba", {{3, 4}}, {"ba"}, "ab");  // a transpose
  check_einsum("kj,ji", {{3, 4}, {4, 5}}, {"kj", "ji"}, "ik");
  check_einsum("i,i", {{5}, {5}}, {"i", "i"}, "");
  check_einsum("i,j", {{2}, {3}}, {"i", "j"}, "ij");
  check_einsum("ii", {{4, 4}}, {"ii"}, "");    // the trace
  check_einsum("aB", {{3, 4}}, {"aB"}, "Ba");  // ASCII order: upper case first
  check_einsum("ij,jk,kl", {{2, 3}, {3, 4}, {4, 2}}, {"ij", "jk", "kl"}, "il");
}

TEST(Einsum, EllipsisBroadcastsBatchDims) {
  check_einsum("...ij,...jk->...ik", {{2, 3, 4}, {2, 4, 5}}, {"aij", "ajk"}, "aik");
  check_einsum("...ij,...jk", {{2, 3, 4}, {4, 5}}, {"aij", "jk"}, "aik");  // implicit: ellipsis first
  check_einsum("...ij,...jk->...ik", {{2, 1, 3, 4}, {5, 4, 2}}, {"abij", "bjk"}, "abik");
  check_einsum("...ij,...jk->ik", {{2, 3, 4}, {2, 4, 5}}, {"aij", "ajk"}, "ik");  // summed when left out
  check_einsum("...ij->...ji", {{2, 3, 4, 5}}, {"abij"}, "abji");
  check_einsum("i...->...", {{3, 2, 4}}, {"iab"}, "ab");
  check_einsum("...->...", {{2, 3}}, {"ab"}, "ab");
  check_einsum("i...j,j...->...i", {{3, 2, 4}, {4, 2}}, {"iaj", "ja"}, "ai");
  check_einsum("...,...->...", {{2, 3}, {3}}, {"ab", "b"}, "ab");
  check_einsum("...i,...i->...", {{4}, {2, 4}}, {"i", "ai"}, "a");
  check_einsum("ij...,jk...->ik...", {{2, 3}, {3, 4}}, {"ij", "jk"}, "ik");  // an ellipsis of no dims
  check_einsum("b...i,b...i->b...", {{2, 3, 1, 4}, {2, 1, 5, 4}}, {"bxyi", "bxyi"}, "bxy");
}

TEST(Einsum, RepeatedLabelsTakeDiagonals) {
  check_einsum("ii->i", {{4, 4}}, {"ii"}, "i");
  check_einsum("ii->", {{4, 4}}, {"ii"}, "");
  check_einsum("iij->ji", {{3, 3, 2}}, {"iij"}, "ji");
  check_einsum("iii->i", {{3, 3, 3}}, {"iii"}, "i");
  check_einsum("ijij->ij", {{2, 3, 2, 3}}, {"ijij"}, "ij");
  check_einsum("bii->bi", {{2, 3, 3}}, {"bii"}, "bi");
  check_einsum("...ii->...i", {{2, 3, 3}}, {"aii"}, "ai");
  check_einsum("ii,ij->j", {{3, 3}, {3, 4}}, {"ii", "ij"}, "j");
  check_einsum("iij,jk->ik", {{3, 3, 2}, {2, 4}}, {"iij", "jk"}, "ik");
}

TEST(Einsum, OneOperandReducesAndPermutes) {
  check_einsum("ijk->", {{2, 3, 4}}, {"ijk"}, "");
  check_einsum("ijk->k", {{2, 3, 4}}, {"ijk"}, "k");
  check_einsum("ijk->kij", {{2, 3, 4}}, {"ijk"}, "kij");
  check_einsum("ijk->ki", {{2, 3, 4}}, {"ijk"}, "ki");
  check_einsum("ij->ij", {{2, 3}}, {"ij"}, "ij");
  check_einsum("", {{}}, {""}, "");
  check_einsum("->", {{}}, {""}, "");
  check_einsum(",->", {{}, {}}, {"", ""}, "");
  check_einsum("i,->i", {{3}, {}}, {"i", ""}, "i");
}

TEST(Einsum, ChainsOfThreeAndFourOperands) {
  check_einsum("ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 5}}, {"ij", "jk", "kl"}, "il");
  check_einsum("ij,jk,kl,lm->im", {{2, 3}, {3, 4}, {4, 5}, {5, 2}}, {"ij", "jk", "kl", "lm"}, "im");
  check_einsum("i,ij,j->", {{3}, {3, 4}, {4}}, {"i", "ij", "j"}, "");
  check_einsum("ab,bc,ca->", {{2, 3}, {3, 4}, {4, 2}}, {"ab", "bc", "ca"}, "");
  check_einsum("bij,bjk,bkl->bil", {{2, 3, 4}, {2, 4, 2}, {2, 2, 3}}, {"bij", "bjk", "bkl"}, "bil");
  check_einsum("ijk,jl,kl->il", {{2, 3, 4}, {3, 5}, {4, 5}}, {"ijk", "jl", "kl"}, "il");
  check_einsum("i,i,i->", {{4}, {4}, {4}}, {"i", "i", "i"}, "");
  check_einsum("i,i,i->i", {{4}, {4}, {4}}, {"i", "i", "i"}, "i");
  check_einsum("i,j,k->ijk", {{2}, {3}, {4}}, {"i", "j", "k"}, "ijk");  // outer products only
  check_einsum("ij,kl,jk->il", {{2, 3}, {4, 2}, {3, 4}}, {"ij", "kl", "jk"}, "il");
  check_einsum("ea,fb,abcd,gc,hd->efgh", {{2, 3}, {2, 2}, {3, 2, 2, 3}, {2, 2}, {2, 3}},
               {"ea", "fb", "abcd", "gc", "hd"}, "efgh");
  check_einsum("...ij,...jk,...kl->...il", {{2, 2, 3}, {3, 4}, {2, 4, 2}}, {"aij", "jk", "akl"}, "ail");
  // A large middle operand: the greedy order contracts the small vectors into it first.
  check_einsum("i,ijk,k->j", {{5}, {5, 6, 7}, {7}}, {"i", "ijk", "k"}, "j");
}

TEST(Einsum, SizeZeroAndSizeOneDims) {
  check_einsum("ij,jk->ik", {{2, 0}, {0, 3}}, {"ij", "jk"}, "ik");  // summed over nothing: zeros
  check_einsum("ij,jk->ik", {{0, 3}, {3, 4}}, {"ij", "jk"}, "ik");
  check_einsum("ij,jk->ik", {{2, 3}, {3, 0}}, {"ij", "jk"}, "ik");
  check_einsum("i,j->ij", {{0}, {3}}, {"i", "j"}, "ij");
  check_einsum("ij->", {{0, 3}}, {"ij"}, "");
  check_einsum("ii->i", {{0, 0}}, {"ii"}, "i");
  check_einsum("ij,jk,kl->il", {{2, 3}, {3, 0}, {0, 2}}, {"ij", "jk", "kl"}, "il");
  check_einsum("ij,jk->ik", {{1, 1}, {1, 1}}, {"ij", "jk"}, "ik");
  // A labelled dim of size 1 broadcasts against the same label's other size.
  check_einsum("ij,jk->ik", {{2, 1}, {3, 4}}, {"ij", "jk"}, "ik");
  check_einsum("ij,jk->ik", {{2, 3}, {1, 4}}, {"ij", "jk"}, "ik");
  check_einsum("ij,ij->ij", {{2, 1}, {1, 4}}, {"ij", "ij"}, "ij");
  check_einsum("bij,bjk->bik", {{1, 2, 3}, {4, 3, 2}}, {"bij", "bjk"}, "bik");
  check_einsum("i,i->i", {{1}, {3}}, {"i", "i"}, "i");
  check_einsum("i,i->", {{1}, {3}}, {"i", "i"}, "");
  check_einsum("i,i->", {{1}, {0}}, {"i", "i"}, "");
}

TEST(Einsum, NonContiguousInputs) {
  Array a = random_array({4, 3}, 1), b = random_array({5, 4}, 2), c = random_array({3, 8}, 3);
  Tensor at = transpose(tensor_of(a), 0, 1);    // [3, 4], transposed
  Tensor bt = transpose(tensor_of(b), 0, 1);    // [4, 5]
  Tensor cs = slice(tensor_of(c), 1, 0, 8, 2);  // [3, 4], every other column
  Array at_ref = naive_einsum({"ji"}, "ij", {a}), bt_ref = naive_einsum({"ji"}, "ij", {b});
  Array cs_ref{{3, 4}, {}};
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j) cs_ref.v.push_back(c.v[static_cast<size_t>(i * 8 + 2 * j)]);
  expect_array(einsum("ij,jk->ik", {at, bt}), naive_einsum({"ij", "jk"}, "ik", {at_ref, bt_ref}));
  expect_array(einsum("ij,ij->j", {at, cs}), naive_einsum({"ij", "ij"}, "j", {at_ref, cs_ref}));
  expect_array(einsum("ij,jk,il->kl", {cs, bt, at}), naive_einsum({"ij", "jk", "il"}, "kl", {cs_ref, bt_ref, at_ref}));
  Tensor sq = expand(reshape(tensor_of(random_array({3}, 4)), {3, 1}), {3, 3});  // an expanded view
  std::vector<double> sq_v = sq.to_vector<double>();
  expect_array(einsum("ii->i", {sq}), naive_einsum({"ii"}, "i", {Array{{3, 3}, sq_v}}));
}

TEST(Einsum, DtypesPromoteAsMatmul) {
  Array a = random_array({3, 4}, 5), b = random_array({4, 2}, 6);
  Array want = naive_einsum({"ij", "jk"}, "ik", {a, b});
  Tensor f32 = einsum("ij,jk->ik", {cast(tensor_of(a), DType::Float32), cast(tensor_of(b), DType::Float32)});
  EXPECT_EQ(f32.dtype(), DType::Float32);
  expect_array(f32, want, 1e-5);
  Tensor mixed = einsum("ij,jk->ik", {cast(tensor_of(a), DType::Float32), tensor_of(b)});
  EXPECT_EQ(mixed.dtype(), DType::Float64);
  expect_array(
      mixed, naive_einsum({"ij", "jk"}, "ik", {{a.shape, cast(tensor_of(a), DType::Float32).to_vector<double>()}, b}));
  // Integers: exact, in the operands' dtype (int32 stays int32, int32 with int64 is int64).
  Array ia = integer_array({3, 4}, 7), ib = integer_array({4, 2}, 8), ic = integer_array({3, 3}, 9);
  for (DType d : {DType::Int32, DType::Int64}) {
    Tensor x = cast(tensor_of(ia), d), y = cast(tensor_of(ib), d), z = cast(tensor_of(ic), d);
    Tensor r = einsum("ij,jk->ik", {x, y});
    EXPECT_EQ(r.dtype(), d);
    expect_array(r, naive_einsum({"ij", "jk"}, "ik", {ia, ib}), 0);
    Tensor s = einsum("ij->j", {x});
    EXPECT_EQ(s.dtype(), d);
    expect_array(s, naive_einsum({"ij"}, "j", {ia}), 0);
    expect_array(einsum("ii,ij->j", {z, x}), naive_einsum({"ii", "ij"}, "j", {ic, ia}), 0);
    expect_array(einsum("ij,jk,kl->il", {x, y, cast(tensor_of(integer_array({2, 3}, 10)), d)}),
                 naive_einsum({"ij", "jk", "kl"}, "il", {ia, ib, integer_array({2, 3}, 10)}), 0);
  }
  EXPECT_EQ(einsum("ij,jk->ik", {cast(tensor_of(ia), DType::Int32), cast(tensor_of(ib), DType::Int64)}).dtype(),
            DType::Int64);
  Tensor half = einsum("ij,jk->ik", {cast(tensor_of(a), DType::BFloat16), cast(tensor_of(b), DType::BFloat16)});
  EXPECT_EQ(half.dtype(), DType::BFloat16);
  expect_array(half, want, 5e-2);
}

TEST(Einsum, FusedAndUnfusedAgree) {
  Array a = random_array({2, 3, 4}, 11), b = random_array({4, 5}, 12), c = random_array({2, 5}, 13);
  Array want = naive_einsum({"bij", "jk", "bk"}, "bi", {a, b, c});
  bool saved = fusion_enabled();
  for (bool fused : {true, false}) {
    set_fusion_enabled(fused);
    expect_array(einsum("bij,jk,bk->bi", {tensor_of(a), tensor_of(b), tensor_of(c)}), want);
    expect_array(einsum("bii->b", {tensor_of(random_array({2, 3, 3}, 14))}),
                 naive_einsum({"bii"}, "b", {random_array({2, 3, 3}, 14)}));
  }
  set_fusion_enabled(saved);
}

// The shapes of the pending nodes behind t, and of its matmuls.
struct Graph {
  int64_t largest = 0;
  std::vector<Shape> matmuls;
};
void walk(const ir::Node& n, Graph& g, std::vector<const ir::Node*>& seen) {
  if (std::find(seen.begin(), seen.end(), &n) != seen.end()) return;
  seen.push_back(&n);
  g.largest = std::max(g.largest, shape_numel(n.shape));
  if (n.op == ir::Op::Matmul) g.matmuls.push_back(n.shape);
  for (const ir::NodePtr& i : n.inputs) walk(*i, g, seen);
}
Graph graph_of(const Tensor& t) {
  Graph g;
  std::vector<const ir::Node*> seen;
  walk(*t.node(), g, seen);
  return g;
}

TEST(Einsum, LowersToMatmulsInGreedyOrder) {
  // A batched matmul, never the broadcast product [2, 3, 4, 5].
  Graph g = graph_of(einsum("bij,bjk->bik", {zeros({2, 3, 4}), zeros({2, 4, 5})}));
  EXPECT_EQ(g.matmuls, (std::vector<Shape>{{2, 3, 5}}));
  EXPECT_LE(g.largest, 40);
  // ij,jk first (its result [2, 40] against the operands' 2100 beats jk,kl's [50, 3] against 2120).
  g = graph_of(einsum("ij,jk,kl->il", {zeros({2, 50}), zeros({50, 40}), zeros({40, 3})}));
  EXPECT_EQ(g.matmuls, (std::vector<Shape>{{3, 2}, {2, 40}}));  // kl with the result: [l, i]
  // The big middle operand meets the vector that removes most of it first: ijk,k (-> [5, 6]).
  g = graph_of(einsum("i,ijk,k->j", {zeros({5}), zeros({5, 6, 7}), zeros({7})}));
  ASSERT_EQ(g.matmuls.size(), 2u);
  EXPECT_EQ(g.matmuls[1], (Shape{30, 1}));
  EXPECT_LE(g.largest, 210);
  // Pairs that share a label come before outer products: ij,jk then the vector l.
  g = graph_of(einsum("ij,l,jk->ikl", {zeros({2, 3}), zeros({4}), zeros({3, 5})}));
  EXPECT_EQ(g.matmuls, (std::vector<Shape>{{2, 5}}));
}

TEST(Einsum, ErrorsNameTheEquationAndShapes) {
  Tensor a = zeros({2, 3}), b = zeros({3, 4});
  auto err = [](const std::string& eq, std::vector<Tensor> ops, std::vector<std::string> parts) {
    parts.insert(parts.begin(), {"lf::einsum", "\"" + eq + "\""});
    expect_error([&] { einsum(eq, ops); }, parts);
  };
  err("ij,jk->ik", {a}, {"2 operands but 1 were given", "float32[2, 3]"});
  err("ij->ij", {a, b}, {"1 operand but 2 were given", "float32[2, 3], float32[3, 4]"});
  err("ijk,jk->ik", {a, b}, {"operand 0 has 2 dims but its subscripts name 3"});
  err("i,jk->ik", {a, b}, {"operand 0 has 2 dims but its subscripts name 1 (and no ellipsis)"});
  err("...ijk->i", {a}, {"besides the ellipsis"});
  err("ij,jk->ik", {a, a}, {"label j has size 2 in operand 1", "size 3"});
  err("ii->i", {a}, {"label i is repeated in operand 0 with sizes 2 and 3"});
  err("...i,...i->...", {zeros({2, 3}), zeros({4, 3})}, {"ellipsis dim 0"});
  err("i1,jk", {a, b}, {"invalid character '1' at index 1"});
  err("ij,jk=>ik", {a, b}, {"invalid character '='"});
  err("ij,jk-ik", {a, b}, {"'-' at index 5 is not part of \"->\""});
  err("ij->i->j", {a}, {"a second \"->\""});
  err("i.j", {a}, {"'.' at index 1 is not part of an ellipsis"});
  err("...i...", {a}, {"a second ellipsis"});
  err("ij,jk->il", {a, b}, {"output label l is not in any operand"});
  err("ij,jk->ii", {a, b}, {"output label i appears more than once"});
  err("ij->i,j", {a}, {"',' after \"->\""});
  err("ij", {a > 0}, {"bool", "bool[2, 3]"});
  expect_error([&] { einsum("ij", {Tensor()}); }, {"lf::einsum", "empty Tensor"});
  expect_error([&] { einsum("", {}); }, {"lf::einsum", "1 operand but 0 were given", "operands none"});
}

// ---- Gradients: composed of differentiable ops, checked against float64 central differences.

TEST(EinsumGradients, AgainstFiniteDifferences) {
  auto eq = [](const std::string& e) { return [e](const std::vector<Tensor>& x) { return einsum(e, x); }; };
  gradcheck("ij,jk->ik", eq("ij,jk->ik"), {{{3, 4}}, {{4, 2}}});
  gradcheck("bij,bkj->bik", eq("bij,bkj->bik"), {{{2, 3, 4}}, {{2, 2, 4}}});
  gradcheck("ii->i", eq("ii->i"), {{{3, 3}}});
  gradcheck("iij,jk", eq("iij,jk"), {{{3, 3, 2}}, {{2, 2}}});
  gradcheck("...ij,...jk", eq("...ij,...jk"), {{{2, 3, 4}}, {{4, 2}}});
  gradcheck("ij,jk,kl->il", eq("ij,jk,kl->il"), {{{2, 3}}, {{3, 4}}, {{4, 2}}});
  gradcheck("i,ij,j->", eq("i,ij,j->"), {{{3}}, {{3, 4}}, {{4}}});
  gradcheck("ij,jk (size-1 j)", eq("ij,jk->ik"), {{{2, 1}}, {{3, 2}}});
  gradcheck("i,j->ij", eq("i,j->ij"), {{{3}}, {{2}}});
}

}  // namespace
}  // namespace lf::test
