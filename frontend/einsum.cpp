// lf::einsum: parses numpy's notation, takes each operand's diagonals and sums its private labels,
// then contracts pairs in opt_einsum's greedy order, each pair one batched matmul (or one
// broadcast multiply where nothing is summed). docs/einsum.md has the rules.
#include "lazyfuse/einsum.h"

#include <algorithm>
#include <string>
#include <vector>

#include "frontend/record.h"
#include "lazyfuse/ops.h"

namespace lf {
namespace {

constexpr int kLetters = 52;   // label ids 0-25 are 'A'-'Z', 26-51 'a'-'z' (ASCII order); then ellipsis dims
constexpr int kEllipsis = -1;  // where "..." stands in a parsed term

using Labels = std::vector<int>;

// Every einsum error names the equation and the operands' dtypes and shapes.
[[noreturn]] void fail(const std::string& equation, const std::vector<Tensor>& operands, const std::string& message) {
  std::string msg = "lf::einsum: " + message + " (equation \"" + equation + "\", operands ";
  for (size_t i = 0; i < operands.size(); ++i) msg += (i ? ", " : "") + detail::describe(operands[i]);
  throw Error(msg + (operands.empty() ? "none)" : ")"));
}

std::string label_char(int id) { return std::string(1, static_cast<char>(id < 26 ? 'A' + id : 'a' + (id - 26))); }

struct Equation {
  std::vector<Labels> inputs;  // letters as ids, kEllipsis for "..."
  Labels output;
  bool explicit_output = false;
};

Equation parse(const std::string& equation, const std::vector<Tensor>& operands) {
  Equation eq;
  eq.inputs.emplace_back();
  Labels* term = &eq.inputs.back();
  bool in_output = false;
  for (size_t i = 0; i < equation.size(); ++i) {
    char c = equation[i];
    std::string where = " at index " + std::to_string(i);
    if (c == ' ') continue;
    if (c >= 'A' && c <= 'Z') {
      term->push_back(c - 'A');
    } else if (c >= 'a' && c <= 'z') {
      term->push_back(c - 'a' + 26);
    } else if (c == '.') {
      if (equation.compare(i, 3, "...") != 0) fail(equation, operands, "'.'" + where + " is not part of an ellipsis");
      if (std::count(term->begin(), term->end(), kEllipsis))
        fail(equation, operands, "a second ellipsis in one term" + where);
      term->push_back(kEllipsis);
      i += 2;
    } else if (c == ',') {
      if (in_output) fail(equation, operands, "',' after \"->\"" + where);
      eq.inputs.emplace_back();
      term = &eq.inputs.back();
    } else if (c == '-') {
      if (i + 1 >= equation.size() || equation[i + 1] != '>')
        fail(equation, operands, "'-'" + where + " is not part of \"->\"");
      if (in_output) fail(equation, operands, "a second \"->\"" + where);
      in_output = eq.explicit_output = true;
      term = &eq.output;
      ++i;
    } else {
      fail(equation, operands,
           "invalid character '" + std::string(1, c) + "'" + where + " (labels are letters a-z and A-Z)");
    }
  }
  return eq;
}

// One operand on the way to the result: its tensor and the label of each of its dims.
struct Term {
  Tensor t;
  Labels labels;
};

int64_t size_of(const Term& x, int label) {
  auto it = std::find(x.labels.begin(), x.labels.end(), label);
  return it == x.labels.end() ? 1 : x.t.shape()[static_cast<size_t>(it - x.labels.begin())];
}

bool has(const Labels& l, int label) { return std::find(l.begin(), l.end(), label) != l.end(); }

// Sums the dims whose labels `drop` names, in the term's dtype (an integer sum would be int64).
Term sum_out(Term x, const std::vector<int>& drop) {
  std::vector<int64_t> dims;
  Labels kept;
  for (size_t d = 0; d < x.labels.size(); ++d) {
    if (has(drop, x.labels[d]))
      dims.push_back(static_cast<int64_t>(d));
    else
      kept.push_back(x.labels[d]);
  }
  if (dims.empty()) return x;
  DType dtype = x.t.dtype();
  return {detail::cast_to(sum(x.t, dims), dtype), kept};
}

// x's dims in the order of `order` (labels x has), as a view.
Tensor arrange(const Term& x, const Labels& order) {
  std::vector<int64_t> perm;
  for (int l : order)
    perm.push_back(static_cast<int64_t>(std::find(x.labels.begin(), x.labels.end(), l) - x.labels.begin()));
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == static_cast<int64_t>(i);
  return identity ? x.t : permute(x.t, perm);
}

// A label repeated in one operand selects its diagonal: a view whose last dim is that diagonal.
Term take_diagonals(Term x) {
  size_t i = 0;
  while (i < x.labels.size()) {
    auto first = x.labels.begin() + static_cast<std::ptrdiff_t>(i);
    auto again = std::find(first + 1, x.labels.end(), *first);
    if (again == x.labels.end()) {
      ++i;
      continue;
    }
    int l = *first;
    x.t = diagonal(x.t, 0, static_cast<int64_t>(i), again - x.labels.begin());
    x.labels.erase(again);
    x.labels.erase(first);
    x.labels.push_back(l);  // a third l is found again from position i
  }
  return x;
}

// The labels of x that no other term and not the output needs.
std::vector<int> private_labels(const Term& x, const std::vector<Term>& others, const Labels& output) {
  std::vector<int> out;
  for (int l : x.labels) {
    if (has(output, l) || has(out, l)) continue;
    bool shared = false;
    for (const Term& o : others) shared |= &o != &x && has(o.labels, l);
    if (!shared) out.push_back(l);
  }
  return out;
}

// a * b over their labels: batch labels (in both and kept), summed labels (in both and not kept) and
// each one's own. One batched matmul [batch..., M, K] @ [batch..., K, N] when something is summed,
// else a broadcast multiply (its result is the product itself).
Term contract(Term a, Term b, const Labels& keep) {
  // A summed label of size 1 in one operand broadcasts against the other's: sum the other over it
  // first (the size-1 dim goes too).
  std::vector<int> broadcast_summed;
  for (int l : a.labels)
    if (has(b.labels, l) && !has(keep, l) && (size_of(a, l) == 1) != (size_of(b, l) == 1))
      broadcast_summed.push_back(l);
  a = sum_out(std::move(a), broadcast_summed);
  b = sum_out(std::move(b), broadcast_summed);
  Labels batch, summed, only_a, only_b;
  for (int l : a.labels) {
    if (!has(b.labels, l))
      only_a.push_back(l);
    else if (has(keep, l))
      batch.push_back(l);
    else
      summed.push_back(l);
  }
  for (int l : b.labels)
    if (!has(a.labels, l)) only_b.push_back(l);
  auto cat = [](Labels x, const Labels& y, const Labels& z = {}) {
    x.insert(x.end(), y.begin(), y.end());
    x.insert(x.end(), z.begin(), z.end());
    return x;
  };
  auto sizes = [](const Term& x, const Labels& ls) {
    Shape s;
    for (int l : ls) s.push_back(size_of(x, l));
    return s;
  };
  Labels out_labels = cat(batch, only_a, only_b);
  if (summed.empty()) {
    Tensor x = arrange(a, cat(batch, only_a)), y = arrange(b, cat(batch, only_b));
    for (size_t k = 0; k < only_b.size(); ++k) x = unsqueeze(x, -1);
    for (size_t k = 0; k < only_a.size(); ++k) y = unsqueeze(y, static_cast<int64_t>(batch.size()));
    return {x * y, out_labels};
  }
  Shape ma = sizes(a, batch), mb = sizes(b, batch);
  ma.insert(ma.end(), {shape_numel(sizes(a, only_a)), shape_numel(sizes(a, summed))});
  mb.insert(mb.end(), {shape_numel(sizes(b, summed)), shape_numel(sizes(b, only_b))});
  Tensor r =
      matmul(reshape(arrange(a, cat(batch, only_a, summed)), ma), reshape(arrange(b, cat(batch, summed, only_b)), mb));
  Shape out(r.shape().begin(), r.shape().begin() + static_cast<std::ptrdiff_t>(batch.size()));
  for (int l : only_a) out.push_back(size_of(a, l));
  for (int l : only_b) out.push_back(size_of(b, l));
  return {reshape(r, out), out_labels};
}

// The size of the contraction of a and b, over the labels' broadcast sizes, as a double (no overflow).
double result_size(const Term& a, const Term& b, const Labels& keep) {
  double n = 1;
  for (int l : a.labels)
    if (has(keep, l) || !has(b.labels, l)) n *= static_cast<double>(std::max(size_of(a, l), size_of(b, l)));
  for (int l : b.labels)
    if (!has(a.labels, l)) n *= static_cast<double>(size_of(b, l));
  return n;
}

// The labels that terms other than i and j, or the output, still need.
Labels kept_labels(const std::vector<Term>& terms, size_t i, size_t j, const Labels& output) {
  Labels keep = output;
  for (size_t k = 0; k < terms.size(); ++k)
    if (k != i && k != j) keep.insert(keep.end(), terms[k].labels.begin(), terms[k].labels.end());
  return keep;
}

// opt_einsum's greedy choice: among the pairs that share a label (all pairs when none do), the one
// whose result is smallest against its operands (size(result) - size(a) - size(b)); ties go to the
// first pair in the list, where each contraction's result joins at the end.
std::pair<size_t, size_t> greedy_pair(const std::vector<Term>& terms, const Labels& output) {
  std::pair<size_t, size_t> best{0, 1};
  double best_cost = 0;
  bool found = false, best_shares = false;
  for (size_t i = 0; i < terms.size(); ++i) {
    for (size_t j = i + 1; j < terms.size(); ++j) {
      bool shares = false;
      for (int l : terms[i].labels) shares |= has(terms[j].labels, l);
      double cost = result_size(terms[i], terms[j], kept_labels(terms, i, j, output)) -
                    static_cast<double>(terms[i].t.numel()) - static_cast<double>(terms[j].t.numel());
      if (!found || (shares && !best_shares) || (shares == best_shares && cost < best_cost)) {
        best = {i, j};
        best_cost = cost;
        best_shares = shares;
        found = true;
      }
    }
  }
  return best;
}

}  // namespace

Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands) {
  for (const Tensor& t : operands)
    if (!t.defined()) fail(equation, operands, "an operand is an empty Tensor");
  Equation eq = parse(equation, operands);
  if (eq.inputs.size() != operands.size())
    fail(equation, operands,
         "the equation has " + std::to_string(eq.inputs.size()) + " operand" + (eq.inputs.size() == 1 ? "" : "s") +
             " but " + std::to_string(operands.size()) + " were given");
  DType dtype = operands[0].dtype();
  for (const Tensor& t : operands) {
    if (t.device() != operands[0].device()) fail(equation, operands, "operands are on different devices");
    dtype = detail::promote(dtype, t.dtype());
  }
  if (dtype == DType::Bool) fail(equation, operands, "is not defined for bool tensors");

  // Each operand's label per dim; the ellipsis dims are labels kLetters.., right-aligned across operands.
  int64_t ell_rank = 0;
  for (size_t i = 0; i < operands.size(); ++i) {
    const Labels& in = eq.inputs[i];
    bool ell = has(in, kEllipsis);
    int64_t named = static_cast<int64_t>(in.size()) - (ell ? 1 : 0);
    int64_t rank = operands[i].dim();
    if (ell ? named > rank : named != rank)
      fail(equation, operands,
           "operand " + std::to_string(i) + " has " + std::to_string(rank) + " dims but its subscripts name " +
               std::to_string(named) + (ell ? " besides the ellipsis" : " (and no ellipsis)"));
    if (ell) ell_rank = std::max(ell_rank, rank - named);
  }
  std::vector<Term> terms;
  std::vector<int64_t> label_size(static_cast<size_t>(kLetters + ell_rank), -1);
  for (size_t i = 0; i < operands.size(); ++i) {
    Term term{detail::cast_to(operands[i], dtype), {}};
    int64_t covered = operands[i].dim() - (static_cast<int64_t>(eq.inputs[i].size()) - 1);
    for (int l : eq.inputs[i]) {
      if (l != kEllipsis) {
        term.labels.push_back(l);
        continue;
      }
      for (int64_t e = ell_rank - covered; e < ell_rank; ++e) term.labels.push_back(kLetters + static_cast<int>(e));
    }
    for (size_t d = 0; d < term.labels.size(); ++d) {
      int l = term.labels[d];
      int64_t n = term.t.shape()[d];
      std::string name = l < kLetters ? "label " + label_char(l) : "ellipsis dim " + std::to_string(l - kLetters);
      for (size_t e = 0; e < d; ++e)
        if (term.labels[e] == l && term.t.shape()[e] != n)
          fail(equation, operands,
               name + " is repeated in operand " + std::to_string(i) + " with sizes " +
                   std::to_string(term.t.shape()[e]) + " and " + std::to_string(n));
      int64_t& seen = label_size[static_cast<size_t>(l)];
      if (seen != -1 && seen != n && seen != 1 && n != 1)
        fail(equation, operands,
             name + " has size " + std::to_string(n) + " in operand " + std::to_string(i) +
                 ", which does not broadcast with size " + std::to_string(seen) + " before");
      if (seen == -1 || seen == 1) seen = n;
    }
    terms.push_back(std::move(term));
  }

  Labels output;
  if (!eq.explicit_output) {
    for (int e = 0; e < ell_rank; ++e) output.push_back(kLetters + e);
    for (int l = 0; l < kLetters; ++l) {
      int count = 0;
      for (const Labels& in : eq.inputs) count += static_cast<int>(std::count(in.begin(), in.end(), l));
      if (count == 1) output.push_back(l);
    }
  } else {
    for (int l : eq.output) {
      if (l == kEllipsis) {
        for (int e = 0; e < ell_rank; ++e) output.push_back(kLetters + e);
        continue;
      }
      if (has(output, l)) fail(equation, operands, "output label " + label_char(l) + " appears more than once");
      if (label_size[static_cast<size_t>(l)] == -1)
        fail(equation, operands, "output label " + label_char(l) + " is not in any operand");
      output.push_back(l);
    }
  }

  // Each operand alone: diagonals of repeated labels (views), then sums of the labels no one else needs.
  for (Term& term : terms) {
    term = take_diagonals(std::move(term));
    term = sum_out(term, private_labels(term, terms, output));
  }
  while (terms.size() > 1) {
    auto [i, j] = greedy_pair(terms, output);
    Labels keep = kept_labels(terms, i, j, output);
    Term a = std::move(terms[i]), b = std::move(terms[j]);
    terms.erase(terms.begin() + static_cast<std::ptrdiff_t>(j));
    terms.erase(terms.begin() + static_cast<std::ptrdiff_t>(i));
    terms.push_back(contract(std::move(a), std::move(b), keep));  // its labels: those still needed
  }
  return arrange(terms[0], output);
}

}  // namespace lf
