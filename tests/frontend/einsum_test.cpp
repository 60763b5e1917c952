// lf::einsum and the products around it (issue 49) against naive float64 loops written here, on
// random inputs: implicit and explicit output, ellipsis, diagonals, one operand, chains of 3 and 4,
// size-0 and size-1 dims, broadcasting, non-contiguous inputs, dtypes; their errors; their
// gradients against central differences.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "codegen/ir/node.h"
#include "frontend/autograd/gradcheck.h"
#include "frontend/test_util.h"

namespace lf::test {
namespace {

// A float64 array with its shape, row-major: the references' operand and result.
struct Array {
  Shape shape;
  std::vector<double> v;
};

Array random_array(const Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-2, 2);
  Array a{shape, std::vector<double>(static_cast<size_t>(shape_numel(shape)))};
  for (double& x : a.v) x = u(rng);
  return a;
}

Array integer_array(const Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  Array a{shape, std::vector<double>(static_cast<size_t>(shape_numel(shape)))};
  for (double& x : a.v) x = static_cast<double>(static_cast<int>(rng() % 11) - 5);
  return a;
}

Tensor tensor_of(const Array& a) { return from_vector(a.v, a.shape); }

int64_t flat_index(const Shape& shape, const std::vector<int64_t>& idx) {
  int64_t f = 0;
  for (size_t d = 0; d < shape.size(); ++d) f = f * shape[d] + (shape[d] == 1 ? 0 : idx[d]);
  return f;
}

// einsum by loops over every label's values: operands' labels (letters only, no ellipsis) and the
// output's. A dim of size 1 broadcasts to its label's size.
Array naive_einsum(const std::vector<std::string>& terms, const std::string& output, const std::vector<Array>& ops) {
  std::map<char, int64_t> size;
  for (size_t i = 0; i < terms.size(); ++i)
    for (size_t d = 0; d < terms[i].size(); ++d) {
      int64_t& s = size[terms[i][d]];
      s = std::max(s, ops[i].shape[d]);
      if (ops[i].shape[d] == 0) s = -1;  // 0 wins over 1
    }
  for (auto& [c, s] : size) s = std::max<int64_t>(s, 0);
  std::vector<char> labels;
  for (auto& [c, s] : size) labels.push_back(c);
  Array out;
  for (char c : output) out.shape.push_back(size[c]);
  out.v.assign(static_cast<size_t>(shape_numel(out.shape)), 0);
  std::vector<int64_t> at(labels.size(), 0);
  auto value = [&](char c) {
    return at[static_cast<size_t>(std::find(labels.begin(), labels.end(), c) - labels.begin())];
  };
  for (char c : labels)
    if (size[c] == 0) return out;
  for (;;) {
    double p = 1;
    for (size_t i = 0; i < terms.size(); ++i) {
      std::vector<int64_t> idx;
      for (char c : terms[i]) idx.push_back(value(c));
      p *= ops[i].v[static_cast<size_t>(flat_index(ops[i].shape, idx))];
    }
    std::vector<int64_t> oidx;
    for (char c : output) oidx.push_back(value(c));
    out.v[static_cast<size_t>(flat_index(out.shape, oidx))] += p;
    size_t k = labels.size();
    while (k > 0 && ++at[k - 1] == size[labels[k - 1]]) at[--k] = 0;
    if (k == 0) return out;
  }
}

void expect_array(const Tensor& got, const Array& want, double tol = 1e-12) {
  ASSERT_EQ(got.shape(), want.shape);
  expect_close(got, want.v, tol);
}

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

// ---- The products around einsum, each against loops.

TEST(Tensordot, IntAndListForms) {
  Array a = random_array({2, 3, 4}, 21), b = random_array({3, 4, 5}, 22), c = random_array({4, 3, 5}, 23);
  expect_array(tensordot(tensor_of(a), tensor_of(b)), naive_einsum({"ijk", "jkl"}, "il", {a, b}));
  expect_array(tensordot(tensor_of(a), tensor_of(b), 0), naive_einsum({"ijk", "lmn"}, "ijklmn", {a, b}));
  expect_array(tensordot(tensor_of(a), tensor_of(c), 1), naive_einsum({"ijk", "klm"}, "ijlm", {a, c}));
  expect_array(tensordot(tensor_of(a), tensor_of(c), {1, 2}, {1, 0}), naive_einsum({"ijk", "kjl"}, "il", {a, c}));
  expect_array(tensordot(tensor_of(a), tensor_of(c), {-1, 1}, {0, -2}), naive_einsum({"ijk", "kjl"}, "il", {a, c}));
}

TEST(Tensordot, Errors) {
  Tensor a = zeros({2, 3}), b = zeros({3, 4});
  expect_error([&] { tensordot(a, b, 3); }, {"lf::tensordot", "dims must be in [0, 2], not 3", "float32[2, 3]"});
  expect_error([&] { tensordot(a, b, {0}, {0}); }, {"lf::tensordot", "dim 0 of a has 2, dim 0 of b has 3"});
  expect_error([&] { tensordot(a, b, {1, 1}, {0, 0}); }, {"lf::tensordot", "twice"});
  expect_error([&] { tensordot(a, b, {1}, {}); }, {"lf::tensordot", "differ in length"});
  expect_error([&] { tensordot(a > 0, b > 0, 1); }, {"lf::tensordot", "bool"});
}

// Calls f with every multi-index of `shape`, row-major.
void for_each_index(const Shape& shape, const std::function<void(const std::vector<int64_t>&)>& f) {
  if (shape_numel(shape) == 0) return;
  std::vector<int64_t> at(shape.size(), 0);
  for (;;) {
    f(at);
    size_t k = shape.size();
    while (k > 0 && ++at[k - 1] == shape[k - 1]) at[--k] = 0;
    if (k == 0) return;
  }
}

double at_index(const Array& a, const std::vector<int64_t>& idx) {
  return a.v[static_cast<size_t>(flat_index(a.shape, idx))];
}

TEST(Products, OuterDotVdotTrace) {
  Array a = random_array({4}, 31), b = random_array({3}, 32), c = random_array({4}, 33), m = random_array({3, 5}, 34);
  Array outer_ref{{4, 3}, {}};
  for (double x : a.v)
    for (double y : b.v) outer_ref.v.push_back(x * y);
  expect_array(outer(tensor_of(a), tensor_of(b)), outer_ref);
  double d = 0;
  for (size_t i = 0; i < 4; ++i) d += a.v[i] * c.v[i];
  expect_array(dot(tensor_of(a), tensor_of(c)), {{}, {d}});
  expect_array(vdot(tensor_of(a), tensor_of(c)), {{}, {d}});
  expect_array(dot(zeros({0}, DType::Float64), zeros({0}, DType::Float64)), {{}, {0}});
  double t = 0;
  for (int64_t i = 0; i < 3; ++i) t += m.v[static_cast<size_t>(i * 5 + i)];
  expect_array(trace(tensor_of(m)), {{}, {t}});
  Tensor it = trace(cast(tensor_of(integer_array({3, 3}, 35)), DType::Int32));
  EXPECT_EQ(it.dtype(), DType::Int64);  // as PyTorch's sum
  Array im = integer_array({3, 3}, 35);
  expect_array(it, {{}, {im.v[0] + im.v[4] + im.v[8]}}, 0);
  Tensor id = dot(cast(tensor_of(im), DType::Int32).flatten(), cast(tensor_of(im), DType::Int32).flatten());
  EXPECT_EQ(id.dtype(), DType::Int32);
  double sq = 0;
  for (double x : im.v) sq += x * x;
  expect_array(id, {{}, {sq}}, 0);
  Tensor ob = outer(tensor_of(a) > 0, tensor_of(b) > 0);
  EXPECT_EQ(ob.dtype(), DType::Bool);
  expect_error([&] { outer(tensor_of(m), tensor_of(b)); }, {"lf::outer", "1-D", "float64[3, 5]"});
  expect_error([&] { dot(tensor_of(a), tensor_of(b)); }, {"lf::dot", "one size", "float64[4], float64[3]"});
  expect_error([&] { vdot(tensor_of(m), tensor_of(m)); }, {"lf::vdot", "1-D"});
  expect_error([&] { dot(tensor_of(a) > 0, tensor_of(a) > 0); }, {"lf::dot", "bool"});
  expect_error([&] { trace(tensor_of(a)); }, {"lf::trace", "2-D", "float64[4]"});
}

TEST(Products, Kron) {
  Array a = random_array({2, 3}, 41), b = random_array({4, 2}, 42), v = random_array({3}, 43);
  auto kron_ref = [](const Array& x, const Array& y) {
    size_t r = std::max(x.shape.size(), y.shape.size());
    Shape sx(r - x.shape.size(), 1), sy(r - y.shape.size(), 1);
    sx.insert(sx.end(), x.shape.begin(), x.shape.end());
    sy.insert(sy.end(), y.shape.begin(), y.shape.end());
    Array out;
    for (size_t d = 0; d < r; ++d) out.shape.push_back(sx[d] * sy[d]);
    for_each_index(out.shape, [&](const std::vector<int64_t>& idx) {
      std::vector<int64_t> ix, iy;
      for (size_t d = 0; d < r; ++d) ix.push_back(idx[d] / sy[d]), iy.push_back(idx[d] % sy[d]);
      out.v.push_back(at_index({sx, x.v}, ix) * at_index({sy, y.v}, iy));
    });
    return out;
  };
  expect_array(kron(tensor_of(a), tensor_of(b)), kron_ref(a, b));
  expect_array(kron(tensor_of(a), tensor_of(v)), kron_ref(a, v));
  expect_array(kron(tensor_of(v), tensor_of(a)), kron_ref(v, a));
  Array s{{}, {2.5}};
  expect_array(kron(tensor_of(s), tensor_of(v)), kron_ref(s, v));
  Array z = random_array({0, 2}, 44);
  expect_array(kron(tensor_of(z), tensor_of(a)), kron_ref(z, a));
  Tensor ki = kron(cast(tensor_of(integer_array({2, 2}, 45)), DType::Int32), tensor_of(b));
  EXPECT_EQ(ki.dtype(), DType::Float64);
  expect_array(ki, kron_ref(integer_array({2, 2}, 45), b));
}

TEST(Products, Cross) {
  auto cross_ref = [](const Array& x, const Array& y, int64_t dim) {
    Array out{x.shape, {}};  // same shapes here, dim non-negative
    for_each_index(x.shape, [&](const std::vector<int64_t>& idx) {
      auto comp = [&](const Array& t, int64_t k) {
        std::vector<int64_t> j = idx;
        j[static_cast<size_t>(dim)] = k;
        return at_index(t, j);
      };
      int64_t i = idx[static_cast<size_t>(dim)], i1 = (i + 1) % 3, i2 = (i + 2) % 3;
      out.v.push_back(comp(x, i1) * comp(y, i2) - comp(x, i2) * comp(y, i1));
    });
    return out;
  };
  Array a = random_array({4, 3}, 51), b = random_array({4, 3}, 52), c = random_array({3, 2, 2}, 53),
        d = random_array({3, 2, 2}, 54);
  expect_array(cross(tensor_of(a), tensor_of(b)), cross_ref(a, b, 1));
  expect_array(cross(tensor_of(c), tensor_of(d), 0), cross_ref(c, d, 0));
  expect_array(cross(tensor_of(c), tensor_of(d), -3), cross_ref(c, d, 0));
  // Batch dims broadcast (torch.linalg.cross of PyTorch 2).
  Array row{{1, 3}, {a.v[3], a.v[4], a.v[5]}};
  Array rows{{4, 3}, {}};
  for (int k = 0; k < 4; ++k) rows.v.insert(rows.v.end(), row.v.begin(), row.v.end());
  expect_array(cross(tensor_of(row), tensor_of(b)), cross_ref(rows, b, 1));
  expect_array(cross(reshape(tensor_of(row), {3}), tensor_of(b)), cross_ref(rows, b, 1));
  Array ia = integer_array({2, 3}, 55), ib = integer_array({2, 3}, 56);
  Tensor ci = cross(cast(tensor_of(ia), DType::Int64), cast(tensor_of(ib), DType::Int64));
  EXPECT_EQ(ci.dtype(), DType::Int64);
  expect_array(ci, cross_ref(ia, ib, 1), 0);
  expect_array(cross(transpose(tensor_of(c), 0, 2), transpose(tensor_of(d), 0, 2), -1),
               cross_ref({{2, 2, 3}, transpose(tensor_of(c), 0, 2).to_vector<double>()},
                         {{2, 2, 3}, transpose(tensor_of(d), 0, 2).to_vector<double>()}, 2));
  expect_error([&] { cross(zeros({2, 4}), zeros({2, 4})); }, {"lf::cross", "size 3 along dim 1", "float32[2, 4]"});
  expect_error([&] { cross(zeros({3, 2}), zeros({1, 2}), 0); }, {"lf::cross", "size 3"});
  expect_error([&] { cross(zeros({3}) > 0, zeros({3}) > 0); }, {"lf::cross", "bool"});
  expect_error([&] { cross(zeros({2, 3}), zeros({4, 3})); }, {"lf::cross"});
}

TEST(Products, DiagAndDiagEmbed) {
  Array v = random_array({3}, 61), m = random_array({3, 4}, 62), x = random_array({2, 3}, 63);
  for (int64_t k : {0, 1, 2, -1, -3}) {
    SCOPED_TRACE(k);
    int64_t n = 3 + std::abs(k);
    Array want{{n, n}, std::vector<double>(static_cast<size_t>(n * n), 0)};
    for (int64_t i = 0; i < 3; ++i)
      want.v[static_cast<size_t>((k >= 0 ? i : i - k) * n + (k >= 0 ? i + k : i))] = v.v[static_cast<size_t>(i)];
    expect_array(diag(tensor_of(v), k), want);
    Array d{{}, {}};
    for (int64_t i = 0; i < 3; ++i)
      if (i - std::min<int64_t>(k, 0) < 3 && i + std::max<int64_t>(k, 0) < 4)
        d.v.push_back(m.v[static_cast<size_t>((i - std::min<int64_t>(k, 0)) * 4 + i + std::max<int64_t>(k, 0))]);
    d.shape = {static_cast<int64_t>(d.v.size())};
    expect_array(diag(tensor_of(m), k), d);
  }
  expect_array(diag(zeros({0}, DType::Float64)), {{0, 0}, {}});
  // diag_embed: out's (dim1, dim2) planes hold x's last dim on the offset-th diagonal.
  struct Case {
    int64_t offset, dim1, dim2;
  };
  for (Case c : {Case{0, -2, -1}, Case{1, -2, -1}, Case{-2, -2, -1}, Case{1, 0, 2}, Case{-1, 2, 0}, Case{2, 1, 0}}) {
    SCOPED_TRACE(std::to_string(c.offset) + " " + std::to_string(c.dim1) + " " + std::to_string(c.dim2));
    Tensor got = diag_embed(tensor_of(x), c.offset, c.dim1, c.dim2);
    int64_t d1 = c.dim1 < 0 ? c.dim1 + 3 : c.dim1, d2 = c.dim2 < 0 ? c.dim2 + 3 : c.dim2;
    int64_t n = 3 + std::abs(c.offset);
    Array want{{}, {}};
    size_t other = 3 - static_cast<size_t>(d1) - static_cast<size_t>(d2);
    want.shape.assign(3, n);
    want.shape[other] = 2;
    for_each_index(want.shape, [&](const std::vector<int64_t>& idx) {
      int64_t p = idx[static_cast<size_t>(d1)], q = idx[static_cast<size_t>(d2)];
      want.v.push_back(q - p == c.offset ? x.v[static_cast<size_t>(idx[other] * 3 + (c.offset >= 0 ? p : q))] : 0);
    });
    expect_array(got, want);
  }
  Tensor nan_diag = diag_embed(from_vector(std::vector<double>{kNaN, kInf}, {2}));
  expect_close(nan_diag, {kNaN, 0, 0, kInf});  // where, not a multiply by an identity
  EXPECT_EQ(diag_embed(cast(tensor_of(x), DType::Int32)).dtype(), DType::Int32);
  EXPECT_EQ(diag_embed(tensor_of(x) > 0).dtype(), DType::Bool);
  expect_error([&] { diag(zeros({2, 2, 2})); }, {"lf::diag", "1-D or 2-D", "float32[2, 2, 2]"});
  expect_error([&] { diag_embed(scalar(1)); }, {"lf::diag_embed", "at least one dim"});
  expect_error([&] { diag_embed(zeros({2, 3}), 0, 1, -2); }, {"lf::diag_embed", "dim1 and dim2 must differ"});
}

TEST(Products, TrapezoidAndCumulative) {
  Array y = random_array({3, 5}, 71), xs = random_array({5}, 72), xb = random_array({3, 5}, 73);
  std::sort(xs.v.begin(), xs.v.end());
  auto ref = [&](const Array& yy, const std::function<double(int64_t, int64_t)>& dx, bool cumulative) {
    Array out{{3, cumulative ? 4 : 1}, {}};
    if (!cumulative) out.shape = {3};
    for (int64_t r = 0; r < 3; ++r) {
      double acc = 0;
      for (int64_t i = 1; i < 5; ++i) {
        acc += dx(r, i) * (yy.v[static_cast<size_t>(r * 5 + i)] + yy.v[static_cast<size_t>(r * 5 + i - 1)]) / 2;
        if (cumulative) out.v.push_back(acc);
      }
      if (!cumulative) out.v.push_back(acc);
    }
    return out;
  };
  auto spacing = [](double h) { return [h](int64_t, int64_t) { return h; }; };
  auto points = [&](int64_t, int64_t i) { return xs.v[static_cast<size_t>(i)] - xs.v[static_cast<size_t>(i - 1)]; };
  auto rows = [&](int64_t r, int64_t i) {
    return xb.v[static_cast<size_t>(r * 5 + i)] - xb.v[static_cast<size_t>(r * 5 + i - 1)];
  };
  expect_array(trapezoid(tensor_of(y)), ref(y, spacing(1), false));
  expect_array(trapezoid(tensor_of(y), 0.25), ref(y, spacing(0.25), false));
  expect_array(trapezoid(tensor_of(y), tensor_of(xs)), ref(y, points, false));
  expect_array(trapezoid(tensor_of(y), tensor_of(xb)), ref(y, rows, false));
  expect_array(cumulative_trapezoid(tensor_of(y)), ref(y, spacing(1), true));
  expect_array(cumulative_trapezoid(tensor_of(y), 0.25), ref(y, spacing(0.25), true));
  expect_array(cumulative_trapezoid(tensor_of(y), tensor_of(xs)), ref(y, points, true));
  expect_array(cumulative_trapezoid(tensor_of(y), tensor_of(xb)), ref(y, rows, true));
  // Along dim 0 of the transpose: the same numbers.
  Tensor yt = transpose(tensor_of(y), 0, 1);
  expect_array(trapezoid(yt, 0.25, 0), ref(y, spacing(0.25), false));
  expect_array(trapezoid(yt, tensor_of(xs), 0), ref(y, points, false));
  expect_array(transpose(cumulative_trapezoid(yt, tensor_of(xs), 0), 0, 1), ref(y, points, true));
  // Few samples: 0 (and an empty cumulative result).
  expect_array(trapezoid(zeros({2, 0}, DType::Float64)), {{2}, {0, 0}});
  expect_array(trapezoid(ones({2, 1}, DType::Float64)), {{2}, {0, 0}});
  expect_array(trapezoid(zeros({2, 0}, DType::Float64), zeros({0}, DType::Float64)), {{2}, {0, 0}});
  EXPECT_EQ(cumulative_trapezoid(zeros({2, 0})).shape(), (Shape{2, 0}));
  EXPECT_EQ(cumulative_trapezoid(zeros({2, 1})).shape(), (Shape{2, 0}));
  // Integers give float32.
  Tensor yi = from_vector(std::vector<int32_t>{1, 2, 3}, {3});
  EXPECT_EQ(trapezoid(yi).dtype(), DType::Float32);
  expect_close(trapezoid(yi), {4});
  expect_close(trapezoid(yi, from_vector(std::vector<int64_t>{0, 1, 3}, {3})), {6.5});
  expect_close(cumulative_trapezoid(yi), {1.5, 4});
  expect_close(cumulative_trapezoid(yi, from_vector(std::vector<int64_t>{0, 1, 3}, {3})), {1.5, 6.5});
  expect_error([&] { trapezoid(scalar(1)); }, {"lf::trapezoid", "at least one dim"});
  expect_error([&] { trapezoid(zeros({2, 3}), zeros({2})); }, {"lf::trapezoid", "one x for each sample"});
  expect_error([&] { trapezoid(zeros({2, 3}), zeros({2, 1})); }, {"lf::trapezoid", "float32[2, 3], float32[2, 1]"});
  expect_error([&] { cumulative_trapezoid(zeros({2, 3}), zeros({4})); }, {"lf::cumulative_trapezoid", "one x"});
  expect_error([&] { trapezoid(zeros({2, 3}), 1.0, 2); }, {"lf::trapezoid"});
  expect_error([&] { trapezoid(zeros({3}) > 0, zeros({3})); }, {"lf::trapezoid", "bool"});
}

TEST(Products, Cdist) {
  auto cdist_ref = [](const Array& x1, const Array& x2, double p) {
    // x1 [B, P, M], x2 [B, R, M] (B may be 1 in one of them).
    int64_t b = std::max(x1.shape[0], x2.shape[0]), np = x1.shape[1], nr = x2.shape[1], m = x1.shape[2];
    Array out{{b, np, nr}, {}};
    for (int64_t k = 0; k < b; ++k)
      for (int64_t i = 0; i < np; ++i)
        for (int64_t j = 0; j < nr; ++j) {
          double acc = 0;
          for (int64_t c = 0; c < m; ++c) {
            double d = std::fabs(at_index(x1, {k, i, c}) - at_index(x2, {k, j, c}));
            if (p == 0)
              acc += d != 0;
            else if (std::isinf(p))
              acc = std::max(acc, d);
            else
              acc += std::pow(d, p);
          }
          out.v.push_back(p == 0 || std::isinf(p) ? acc : std::pow(acc, 1 / p));
        }
    return out;
  };
  Array a = random_array({2, 4, 3}, 81), b = random_array({2, 5, 3}, 82), c = random_array({1, 5, 3}, 83);
  for (double p : {0.0, 1.0, 2.0, 3.0, 0.5, kInf}) {
    SCOPED_TRACE(p);
    expect_array(cdist(tensor_of(a), tensor_of(b), p), cdist_ref(a, b, p));
    expect_array(cdist(tensor_of(a), tensor_of(c), p), cdist_ref(a, c, p));
    expect_array(cdist(tensor_of(a), reshape(tensor_of(c), {5, 3}), p), cdist_ref(a, c, p));
  }
  // Over 25 rows, p = 2 takes PyTorch's matmul form: equal to rounding.
  Array big1 = random_array({1, 30, 4}, 84), big2 = random_array({1, 7, 4}, 85);
  expect_array(cdist(tensor_of(big1), tensor_of(big2)), cdist_ref(big1, big2, 2), 1e-10);
  Tensor f32 = cdist(cast(tensor_of(a), DType::Float32), cast(tensor_of(b), DType::Float32));
  EXPECT_EQ(f32.dtype(), DType::Float32);
  expect_array(f32, cdist_ref(a, b, 2), 1e-5);
  // Identical rows: distance 0.
  expect_close(cdist(tensor_of(a), tensor_of(a)), cdist_ref(a, a, 2).v, 1e-12);
  // No coordinates, or no rows.
  expect_array(cdist(zeros({2, 0}, DType::Float64), zeros({3, 0}, DType::Float64), kInf),
               {{2, 3}, std::vector<double>(6, 0)});
  EXPECT_EQ(cdist(zeros({0, 3}), zeros({4, 3})).shape(), (Shape{0, 4}));
  expect_error([&] { cdist(zeros({3}), zeros({4, 3})); }, {"lf::cdist", "at least 2 dims", "float32[3]"});
  expect_error([&] { cdist(zeros({2, 3}), zeros({4, 2})); }, {"lf::cdist", "rows of one length"});
  expect_error([&] { cdist(zeros({2, 3}, DType::Int64), zeros({4, 3}, DType::Int64)); }, {"lf::cdist", "floating"});
  expect_error([&] { cdist(zeros({2, 3}), zeros({4, 3}), -1); }, {"lf::cdist", "p >= 0"});
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
  gradcheck("tensordot",
            [](const auto& x) {
              return tensordot(x[0], x[1], {1, 2}, {1, 0});
            },
            {{{2, 3, 4}}, {{4, 3, 2}}});
  gradcheck("tensordot 1", [](const auto& x) { return tensordot(x[0], x[1], 1); }, {{{2, 3}}, {{3, 2}}});
  gradcheck("kron", [](const auto& x) { return kron(x[0], x[1]); }, {{{2, 3}}, {{2, 2}}});
  gradcheck("cross", [](const auto& x) { return cross(x[0], x[1]); }, {{{2, 3}}, {{2, 3}}});
  gradcheck("cross dim 0 broadcast", [](const auto& x) { return cross(x[0], x[1], 0); }, {{{3, 2}}, {{3, 1}}});
  gradcheck("outer", [](const auto& x) { return outer(x[0], x[1]); }, {{{3}}, {{2}}});
  gradcheck("dot", [](const auto& x) { return dot(x[0], x[1]); }, {{{4}}, {{4}}});
  gradcheck("trace", [](const auto& x) { return trace(x[0]); }, {{{3, 4}}});
  gradcheck("diag_embed", [](const auto& x) { return diag_embed(x[0], 1, 0, 2); }, {{{2, 3}}});
  gradcheck("trapezoid dx", [](const auto& x) { return trapezoid(x[0], 0.5); }, {{{2, 5}}});
  gradcheck("trapezoid x", [](const auto& x) { return trapezoid(x[0], x[1]); }, {{{2, 5}}, {{5}}});
  gradcheck("trapezoid x rows", [](const auto& x) { return trapezoid(x[0], x[1], 0); }, {{{4, 2}}, {{4, 2}}});
  gradcheck("cumulative_trapezoid x", [](const auto& x) { return cumulative_trapezoid(x[0], x[1]); },
            {{{2, 5}}, {{5}}});
  for (double p : {1.0, 2.0, 3.0, kInf}) {
    gradcheck("cdist p=" + std::to_string(p), [p](const auto& x) { return cdist(x[0], x[1], p); },
              {{{2, 3, 4}}, {{1, 2, 4}}});
  }
  gradcheck("cdist matmul form", [](const auto& x) { return cdist(x[0], x[1]); }, {{{26, 2}}, {{3, 2}}});
  // A distance of 0 has gradient 0 (PyTorch's), not NaN.
  Tensor x = from_vector(std::vector<double>{1, 2, 3, 4}, {2, 2});
  std::vector<Tensor> g = grad(sum(cdist(x, x)), {x});
  for (double v : g[0].to_vector<double>()) EXPECT_TRUE(std::isfinite(v));
}

}  // namespace
}  // namespace lf::test
