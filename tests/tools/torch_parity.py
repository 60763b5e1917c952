"""PyTorch's side of the autograd parity test: for each case, random inputs, torch's output and its
gradients (of sum(output * w) for random weights w) go to <dir>/<case>.npz; lazyfuse-torch-parity
then computes the same case with LazyFuse and compares. The case names are the contract between
the two programs (tests/tools/torch_parity.cpp has the same list).

Usage: torch_parity.py <dir>
"""
import os
import sys

import warnings

import numpy as np
import torch
import torch.nn.functional as F

warnings.filterwarnings("ignore", message="scatter_reduce")  # "in beta" in 1.13
rng = np.random.default_rng(2026)


def u(*shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, size=shape)


def ints(hi, *shape):
    return rng.integers(0, hi, size=shape).astype(np.int64)


X = lambda a: a  # noqa: E731  (inputs as given)

# name: (inputs, function of torch tensors)
CASES = {
    "cross_entropy": ([u(4, 5), ints(5, 4)], lambda x, t: F.cross_entropy(x, t)),
    "cross_entropy_weight_ignore": (
        [u(6, 4), np.array([0, 3, -100, 1, 3, 2]), u(4, lo=0.5, hi=2)],
        lambda x, t, w: F.cross_entropy(x, t, weight=w, ignore_index=-100)),
    "cross_entropy_smoothing": (
        [u(5, 3), ints(3, 5), u(3, lo=0.5, hi=2)],
        lambda x, t, w: F.cross_entropy(x, t, weight=w, label_smoothing=0.2)),
    "cross_entropy_smoothing_ignore_sum": (
        [u(5, 3), np.array([0, 2, 7, 1, 7])],
        lambda x, t: F.cross_entropy(x, t, ignore_index=7, label_smoothing=0.1, reduction="sum")),
    "cross_entropy_spatial_none": ([u(2, 3, 2, 2), ints(3, 2, 2, 2)],
                                   lambda x, t: F.cross_entropy(x, t, reduction="none")),
    "cross_entropy_probs": ([u(3, 4), rng.dirichlet(np.ones(4), size=3)],
                            lambda x, p: F.cross_entropy(x, p, label_smoothing=0.1)),
    "nll_loss": ([u(4, 3), ints(3, 4)], lambda x, t: F.nll_loss(F.log_softmax(x, 1), t)),
    "mse_loss": ([u(3, 4), u(3, 4)], lambda a, b: F.mse_loss(a, b)),
    "l1_loss_sum": ([u(3, 4), u(3, 4)], lambda a, b: F.l1_loss(a, b, reduction="sum")),
    "smooth_l1_loss": ([u(3, 4), u(3, 4)], lambda a, b: F.smooth_l1_loss(a, b, beta=0.7)),
    "huber_loss": ([u(3, 4), u(3, 4)], lambda a, b: F.huber_loss(a, b, delta=0.6)),
    "binary_cross_entropy": ([u(3, 4, lo=0.05, hi=0.95), u(3, 4, lo=0, hi=1), u(3, 4, lo=0.5, hi=2)],
                             lambda p, t, w: F.binary_cross_entropy(p, t, weight=w)),
    "bce_with_logits": ([u(3, 4, lo=-30, hi=30), u(3, 4, lo=0, hi=1), u(4, lo=0.5, hi=3)],
                        lambda x, t, pw: F.binary_cross_entropy_with_logits(x, t, pos_weight=pw)),
    "kl_div_batchmean": ([u(3, 4), rng.dirichlet(np.ones(4), size=3)],
                         lambda x, p: F.kl_div(F.log_softmax(x, 1), p, reduction="batchmean")),
    "kl_div_log_target": ([u(3, 4), u(3, 4)],
                          lambda x, t: F.kl_div(x, t, reduction="sum", log_target=True)),
    "softplus": ([u(8, lo=-30, hi=30)], lambda x: F.softplus(x, beta=2, threshold=10)),
    "logaddexp": ([u(6), u(6)], lambda a, b: torch.logaddexp(a, b)),
    "linear": ([u(3, 4), u(5, 4), u(5)], lambda x, w, b: F.linear(x, w, b)),
    "mlp": ([u(4, 6), u(8, 6), u(8), u(3, 8), ints(3, 4)],
            lambda x, w1, b1, w2, t: F.cross_entropy(F.linear(F.gelu(F.linear(x, w1, b1)), w2), t)),
    "attention": ([u(2, 5, 4), u(2, 5, 4), u(2, 5, 4)],
                  lambda q, k, v: torch.softmax(q @ k.transpose(-1, -2) * 0.5, -1) @ v),
    "layer_norm": ([u(3, 6), u(6), u(6)], lambda x, w, b: F.layer_norm(x, (6,), w, b)),
    "group_norm": ([u(2, 4, 3, 3), u(4), u(4)], lambda x, w, b: F.group_norm(x, 2, w, b)),
    "batch_norm_training": ([u(4, 3, 2, 2), u(3), u(3)],
                            lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True)),
    "conv2d": ([u(2, 4, 6, 5), u(6, 2, 3, 2), u(6)],
               lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=1, dilation=(1, 2), groups=2)),
    "conv_transpose2d": ([u(1, 2, 3, 4), u(2, 3, 3, 3)],
                         lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1)),
    "max_pool2d": ([u(2, 2, 5, 6)], lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True)),
    "avg_pool2d": ([u(1, 2, 5, 6)], lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False)),
    "adaptive_avg_pool2d": ([u(1, 2, 7, 5)], lambda x: F.adaptive_avg_pool2d(x, (3, 2))),
    "interpolate_bilinear": ([u(1, 2, 3, 4)],
                             lambda x: F.interpolate(x, size=(5, 7), mode="bilinear", align_corners=False)),
    "embedding": ([u(6, 3), ints(6, 2, 4)], lambda w, i: F.embedding(i, w)),
    "embedding_padding_idx": ([u(6, 3), np.array([[0, 2, 2, 5], [2, 1, 3, 2]])],
                              lambda w, i: F.embedding(i, w, padding_idx=2)),
    "scatter_reduce_amax": ([np.array([[1.0, 3, 3, 2], [0.5, 4, 4, 1]]), np.array([[0, 1, 1, 0], [1, 1, 0, 0]]),
                             np.array([[3.0, 3, 1, 2], [4.0, 0.5, 4, 1]])],
                            lambda x, i, s: x.scatter_reduce(1, i, s, "amax")),
    "scatter_reduce_amin_no_self": ([u(2, 4), np.array([[0, 1, 1, 3], [2, 2, 0, 0]]), u(2, 4)],
                                    lambda x, i, s: x.scatter_reduce(1, i, s, "amin", include_self=False)),
    "scatter_reduce_prod_zeros": ([np.array([[2.0, 0, 3, 1], [1.5, 2, 0, 4]]), np.array([[0, 1, 1, 0], [2, 2, 3, 3]]),
                                   np.array([[0.0, 2, 0, 5], [3.0, 0, 2, 0]])],
                                  lambda x, i, s: x.scatter_reduce(1, i, s, "prod")),
    "scatter_reduce_prod_no_self": ([u(2, 4), np.array([[0, 1, 1, 3], [2, 2, 0, 0]]), np.array([[0.0, 2, -1, 5], [3.0, 0, 2, 0.5]])],
                                    lambda x, i, s: x.scatter_reduce(1, i, s, "prod", include_self=False)),
    "amax_ties": ([np.array([[1.0, 3, 3, 2], [5, 5, 5, 0]])], lambda x: torch.amax(x, 1)),
    "prod_zeros": ([np.array([[0.0, 2, 3], [1, 0, 0], [2, 0.5, 4]])], lambda x: torch.prod(x, 1)),
    "cumprod_zeros": ([np.array([2.0, 0, 3, 0, 1.5])], lambda x: torch.cumprod(x, 0)),
    "pow_zero_base": ([np.array([0.0, 0, 2, 1.5]), np.array([2.0, 0, 0, 3])], lambda a, b: torch.pow(a, b)),
    "relu_kink": ([np.array([-1.0, 0, 1])], lambda x: F.relu(x)),
    "maximum_ties": ([np.array([1.0, 2, 3]), np.array([1.0, 3, 2])], lambda a, b: torch.maximum(a, b)),
    "gelu_tanh": ([u(7)], lambda x: F.gelu(x, approximate="tanh")),
    # Not at -3 or 3: PyTorch 1.13 gives the kinks the inner slopes (-0.5, 1.5), 2.x (and LazyFuse) the outer (0, 1).
    "hardswish": ([np.array([-4.0, -2.5, -1, 0, 2, 2.9, 4])], lambda x: F.hardswish(x)),
    "var_std_norm": ([u(3, 5)], lambda x: x.var(1) + x.std(0).sum() + torch.linalg.vector_norm(x, 2, 1)),
    "logsumexp_softmax": ([u(3, 5)], lambda x: torch.logsumexp(x, 1, keepdim=True) * torch.softmax(x, 1)),
    # einsum and the products around it (issue 49).
    "einsum_matmul": ([u(3, 4), u(4, 5)], lambda a, b: torch.einsum("ij,jk->ik", a, b)),
    "einsum_implicit": ([u(2, 3), u(2, 4)], lambda a, b: torch.einsum("bi,bj", a, b)),
    "einsum_ellipsis": ([u(2, 3, 4), u(5, 4)], lambda a, b: torch.einsum("...ij,...kj->...ik", a, b)),
    "einsum_ellipsis_summed": ([u(2, 3, 4), u(2, 4)], lambda a, b: torch.einsum("...ij,...j->i", a, b)),
    "einsum_diagonal": ([u(3, 3, 2), u(2, 4)], lambda a, b: torch.einsum("iij,jk->ki", a, b)),
    "einsum_trace": ([u(4, 4)], lambda a: torch.einsum("ii", a)),
    "einsum_chain": ([u(2, 3), u(3, 4), u(4, 5), u(5, 2)],
                     lambda a, b, c, d: torch.einsum("ij,jk,kl,lm->im", a, b, c, d)),
    "einsum_bilinear": ([u(2, 3), u(4, 3, 5), u(2, 5)], lambda a, w, b: torch.einsum("bi,oij,bj->bo", a, w, b)),
    "einsum_broadcast_one": ([u(2, 1), u(3, 4)], lambda a, b: torch.einsum("ij,jk", a, b)),
    "tensordot": ([u(2, 3, 4), u(4, 3, 5)], lambda a, b: torch.tensordot(a, b, dims=([1, 2], [1, 0]))),
    "tensordot_int": ([u(2, 3, 4), u(3, 4, 2)], lambda a, b: torch.tensordot(a, b, dims=2)),
    "kron": ([u(2, 3), u(3, 2)], lambda a, b: torch.kron(a, b)),
    "cross": ([u(3, 4), u(3, 4)], lambda a, b: torch.linalg.cross(a, b, dim=0)),
    "cdist": ([u(2, 4, 3), u(2, 5, 3)], lambda a, b: torch.cdist(a, b)),
    "cdist_p1": ([u(4, 3), u(5, 3)], lambda a, b: torch.cdist(a, b, p=1)),
    "cdist_p3": ([u(4, 3), u(5, 3)], lambda a, b: torch.cdist(a, b, p=3)),
    "cdist_inf": ([u(4, 3), u(5, 3)], lambda a, b: torch.cdist(a, b, p=float("inf"))),
    "cdist_matmul_form": ([u(30, 3), u(4, 3)], lambda a, b: torch.cdist(a, b)),
    "trapezoid_dx": ([u(4, 3)], lambda y: torch.trapezoid(y, dx=0.5, dim=0)),
    "trapezoid_x": ([u(3, 5), np.sort(u(5))], lambda y, x: torch.trapezoid(y, x)),
    "cumulative_trapezoid_dx": ([u(3, 5)], lambda y: torch.cumulative_trapezoid(y, dx=0.25)),
    "cumulative_trapezoid_x": ([u(3, 5), u(3, 5)], lambda y, x: torch.cumulative_trapezoid(y, x)),
    "diag_embed": ([u(2, 3)], lambda x: torch.diag_embed(x, 1, 0, 2)),
    # torch.linalg (issue 49 item 2), over well-conditioned functions of the random inputs.
    "linalg_cholesky": ([u(2, 3, 3)], lambda x: torch.linalg.cholesky(x @ x.mT + 3 * torch.eye(3))),
    "linalg_cholesky_upper": ([u(3, 3)], lambda x: torch.linalg.cholesky(x @ x.mT + 3 * torch.eye(3), upper=True)),
    "linalg_solve": ([u(2, 3, 3), u(3, 2)], lambda a, b: torch.linalg.solve(a + 4 * torch.eye(3), b)),
    "linalg_solve_right": ([u(2, 3, 3), u(4, 3)], lambda a, b: torch.linalg.solve(a + 4 * torch.eye(3), b, left=False)),
    "linalg_solve_vector": ([u(2, 3, 3), u(2, 3)], lambda a, b: torch.linalg.solve(a + 4 * torch.eye(3), b)),
    "linalg_solve_triangular": ([u(2, 3, 3), u(3, 2)],
                                lambda a, b: torch.linalg.solve_triangular(a + 4 * torch.eye(3), b, upper=True)),
    "linalg_solve_triangular_right_unit": (
        [u(3, 3), u(2, 3)],
        lambda a, b: torch.linalg.solve_triangular(a, b, upper=False, left=False, unitriangular=True)),
    "linalg_cholesky_solve": ([u(3, 3), u(3, 2)],
                              lambda x, b: torch.cholesky_solve(b, torch.linalg.cholesky(x @ x.mT + 3 * torch.eye(3)))),
    "linalg_inv": ([u(2, 3, 3)], lambda a: torch.linalg.inv(a + 4 * torch.eye(3))),
    "linalg_det": ([u(2, 3, 3)], lambda a: torch.linalg.det(a)),
    "linalg_eigh": ([u(2, 3, 3)], lambda x: torch.cat([torch.linalg.eigh(x + x.mT)[0].reshape(-1),
                                                       (torch.linalg.eigh(x + x.mT)[1] ** 2).reshape(-1)])),
    "linalg_eigvalsh_upper": ([u(4, 4)], lambda x: torch.linalg.eigvalsh(x + x.mT, UPLO="U")),
    "linalg_slogdet": ([u(2, 4, 4)], lambda a: torch.linalg.slogdet(a)[0] * torch.linalg.slogdet(a)[1]),
    # Signs of Q's columns and R's rows, and of each singular pair, are free: squares are not.
    "linalg_qr": ([u(2, 4, 3)], lambda x: torch.cat([(torch.linalg.qr(x)[0] ** 2).reshape(-1),
                                                    (torch.linalg.qr(x)[1] ** 2).reshape(-1)])),
    "linalg_qr_complete_wide": ([u(3, 5)], lambda x: torch.cat([(torch.linalg.qr(x, mode="complete")[0] ** 2).reshape(-1),
                                                               (torch.linalg.qr(x, mode="complete")[1] ** 2).reshape(-1)])),
    "linalg_svd": ([u(2, 4, 3)], lambda x: torch.cat([(torch.linalg.svd(x, full_matrices=False)[0] ** 2).reshape(-1),
                                                     torch.linalg.svd(x, full_matrices=False)[1].reshape(-1),
                                                     (torch.linalg.svd(x, full_matrices=False)[2] ** 2).reshape(-1)])),
    "linalg_svdvals": ([u(3, 5)], lambda x: torch.linalg.svdvals(x)),
    "linalg_lstsq": ([u(2, 5, 3), u(2, 5, 2)], lambda a, b: torch.linalg.lstsq(a, b, driver="gelsd").solution),
    "linalg_lstsq_wide": ([u(3, 5), u(3, 2)], lambda a, b: torch.linalg.lstsq(a, b).solution),
    "linalg_pinv": ([u(4, 3)], lambda a: torch.linalg.pinv(a)),
    "linalg_matrix_norm_svd": ([u(2, 3, 4)], lambda a: torch.cat([torch.linalg.matrix_norm(a, "nuc"),
                                                                  torch.linalg.matrix_norm(a, 2),
                                                                  torch.linalg.matrix_norm(a, -2)])),
    # 1.13's cond(p=1) cannot be differentiated (its masked_fill_ modifies inv_ex's saved output).
    "linalg_cond": ([u(2, 3, 3)], lambda a: torch.linalg.cond(a + 4 * torch.eye(3))),
}


# Inputs PyTorch does not differentiate (class weights): no gradient is compared for them.
CONSTANT = {"cross_entropy_weight_ignore": {2}, "cross_entropy_smoothing": {2}, "binary_cross_entropy": {2},
            "bce_with_logits": {2}}


def run_case(name, inputs, fn):
    ts = []
    for i, a in enumerate(inputs):
        a = np.asarray(a)
        t = torch.tensor(a)
        if t.is_floating_point() and i not in CONSTANT.get(name, ()):
            t.requires_grad_(True)
        ts.append(t)
    out = fn(*ts)
    w = torch.tensor(rng.uniform(0.5, 1.5, size=tuple(out.shape)))
    loss = (out * w).sum()
    floats = [t for t in ts if t.requires_grad]
    grads = torch.autograd.grad(loss, floats, allow_unused=True)
    arrays = {"out": out.detach().numpy(), "w": w.numpy()}
    for i, t in enumerate(ts):
        arrays[f"x{i}"] = t.detach().numpy()
    gi = iter(grads)
    for i, t in enumerate(ts):
        if t.requires_grad:
            g = next(gi)
            arrays[f"g{i}"] = (torch.zeros_like(t) if g is None else g).numpy()
    return arrays


def optimizer_case(make):
    """Five steps of an optimizer on sum(p^2 * c) from fixed p and c; the parameters after each."""
    p0 = u(6)
    c = u(6, lo=0.5, hi=2)
    p = torch.tensor(p0, requires_grad=True)
    opt = make([p])
    traj = []
    for step in range(5):
        opt.zero_grad()
        loss = (p * p * torch.tensor(c)).sum()
        loss.backward()
        opt.step()
        traj.append(p.detach().numpy().copy())
    return {"p0": p0, "c": c, "traj": np.stack(traj)}


OPTIMIZERS = {
    "sgd_momentum_nesterov": lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
    "sgd_dampening": lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=0.8, dampening=0.3),
    "adam": lambda ps: torch.optim.Adam(ps, lr=0.1, weight_decay=0.02),
    "adamw_amsgrad": lambda ps: torch.optim.AdamW(ps, lr=0.1, weight_decay=0.1, amsgrad=True),
}


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    torch.set_default_dtype(torch.float64)
    for name, (inputs, fn) in CASES.items():
        np.savez(os.path.join(out_dir, name + ".npz"), **run_case(name, inputs, fn))
    for name, make in OPTIMIZERS.items():
        np.savez(os.path.join(out_dir, "optim_" + name + ".npz"), **optimizer_case(make))
    print(f"torch_parity.py: {len(CASES)} cases, {len(OPTIMIZERS)} optimizers written to {out_dir}")


if __name__ == "__main__":
    main()
