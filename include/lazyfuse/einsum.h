// einsum and the products around it (issue 49), with PyTorch's names and semantics. Each is a
// composite of recorded ops (views, matmul, sums, elementwise), so it fuses with its neighbours and
// lf::grad differentiates it. docs/einsum.md says how einsum lowers and orders its contractions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lazyfuse/tensor.h"

namespace lf {

// numpy's and torch.einsum's notation: letters [a-zA-Z] label dims, ',' separates operands, "->"
// gives the output (without it: the labels that appear once, in ASCII order, after the ellipsis
// dims), "..." stands for broadcast dims (summed when an explicit output leaves it out), a label
// repeated in one operand takes its diagonal, spaces are ignored. A labelled dim of size 1
// broadcasts against the same label's other size. Operands are promoted to one dtype as matmul's
// (bool is an error); the result has that dtype.
Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands);

// torch.tensordot: contracts a's last `dims` dims with b's first `dims` dims, or a's dims_a with
// b's dims_b pairwise (negative dims count from the end); the result has a's other dims, then b's.
Tensor tensordot(const Tensor& a, const Tensor& b, int64_t dims = 2);
Tensor tensordot(const Tensor& a, const Tensor& b, const std::vector<int64_t>& dims_a,
                 const std::vector<int64_t>& dims_b);
Tensor outer(const Tensor& a, const Tensor& b);  // 1-D a and b: [a.size, b.size]
// torch.kron: the Kronecker product; the operand of lower rank gains leading dims of size 1.
Tensor kron(const Tensor& a, const Tensor& b);
// torch.linalg.cross: the cross product along dim (size 3 in both) of a and b broadcast together.
Tensor cross(const Tensor& a, const Tensor& b, int64_t dim = -1);
Tensor dot(const Tensor& a, const Tensor& b);   // 1-D a and b of one size: a 0-D sum of products
Tensor vdot(const Tensor& a, const Tensor& b);  // dot of conj(a) and b
Tensor trace(const Tensor& x);                  // 2-D: the sum of the diagonal (integers give int64)
// torch.diag: a 1-D x on the diagonal-th diagonal of a square matrix, or the diagonal-th diagonal of
// a 2-D x (a view).
Tensor diag(const Tensor& x, int64_t diagonal = 0);
// torch.diag_embed: x's last dim on the offset-th diagonal of the planes (dim1, dim2) of the result
// (rank x.dim() + 1; dim1 and dim2 count in it), zeros elsewhere.
Tensor diag_embed(const Tensor& x, int64_t offset = 0, int64_t dim1 = -2, int64_t dim2 = -1);
// torch.trapezoid / torch.cumulative_trapezoid along dim: samples y spaced dx apart, or at the points
// x (1-D with one point per sample, or broadcasting with y). Integers give float32.
Tensor trapezoid(const Tensor& y, double dx = 1, int64_t dim = -1);
Tensor trapezoid(const Tensor& y, const Tensor& x, int64_t dim = -1);
Tensor cumulative_trapezoid(const Tensor& y, double dx = 1, int64_t dim = -1);
Tensor cumulative_trapezoid(const Tensor& y, const Tensor& x, int64_t dim = -1);
// torch.cdist: the p-norm distances between the rows of x1 [B..., P, M] and x2 [B..., R, M] (batch
// dims broadcast): [B..., P, R]; p >= 0 (0 counts the differing coordinates, inf is the largest
// difference). Floating dtypes. For p = 2 with P or R above 25, PyTorch's matmul form
// (|a|^2 + |b|^2 - 2 a.b, at least 1e-30, square-rooted); a distance of 0 has gradient 0.
Tensor cdist(const Tensor& x1, const Tensor& x2, double p = 2);

}  // namespace lf
