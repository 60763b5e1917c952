"""The whole programs of bench/programs.cpp (lazyfuse-programs) in numpy and PyTorch, and the check of
LazyFuse's outputs against a float64 PyTorch reference computed here, on the inputs LazyFuse dumped.

  python3 bench/programs_peers.py --device cpu|cuda --lazyfuse-csv LF.csv --dump DIR --csv OUT.csv [--only S]

Reads LF.csv (lazyfuse-programs --csv), fills its check and err columns from DIR (lazyfuse-programs
--dump), measures the peers, writes every row to OUT.csv (one set of columns for all implementations,
bench/plot.py reads it) and prints the table. Peers: CPU: numpy, PyTorch eager. CUDA: PyTorch eager,
torch.compile, torch.compile(mode="reduce-overhead") and, for the transformer, eager with
F.scaled_dot_product_attention. A program LazyFuse cannot write yet is still measured in its peers.

Measured as lazyfuse-programs measures: steady state per iteration (CPU: median over iterations for
about half a second, at least 3 after the first call, or 1 where the first took over a second; CUDA: calls back to back, 5 trials, median), the first call, peak memory (CPU:
the process's peak resident set above the one before the first call, reset through
/proc/self/clear_refs; CUDA: torch.cuda.max_memory_reserved above before), host time per call on
CUDA (queueing the calls). A torch.compile first call compiles into a fresh TORCHINDUCTOR_CACHE_DIR
(other programs compiled earlier in this process); with --warm-process a second process then times
its first call on the same directory.

The check: each output against the float64 reference, within the README's tolerances for the
program's dtype (float32: 1e-4 relative + 1e-5 absolute; bfloat16: 2e-2 + 1e-2), both scaled by
sqrt(n) for n the longest reduction in the program, the absolute part also by the program's value
scale (Black-Scholes prices are O(100)). err = the largest |out - ref| / allowed; pass when <= 1, or
when no larger than PyTorch eager's own err on the same inputs in the same dtype (its row's err
column; the LazyFuse row's note says so): the roundings of a deep bfloat16 network can carry
PyTorch's own result past the tolerance, and LazyFuse is then held to PyTorch's accuracy."""
import argparse
import atexit
import csv
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

if "TORCHINDUCTOR_CACHE_DIR" not in os.environ:  # before torch is imported: a cold cache for this run
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="programs-inductor-")
    atexit.register(shutil.rmtree, os.environ["TORCHINDUCTOR_CACHE_DIR"], True)  # children of --warm-process set it

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

try:
    from scipy.special import erf as np_erf  # what a numpy user takes for erf
except ImportError:  # pragma: no cover
    def np_erf(x):
        return np.vectorize(math.erf, otypes=[x.dtype])(x)

HERE = os.path.dirname(os.path.abspath(__file__))
COLUMNS = ["program", "config", "dtype", "device", "impl", "status", "ms", "first_ms", "warm_first_ms", "kernels",
           "host_ms", "peak_mb", "compiled", "check", "err", "needs", "note"]
STEPS = 50


# ---------------------------------------------------------------------------------------------
# The programs, as a PyTorch user and a numpy user write them. Keyword arguments are the input
# names of bench/programs.cpp; outputs come in its order.

def transformer_torch(x, ln1_w, ln1_b, w_qkv, b_qkv, w_o, b_o, ln2_w, ln2_b, w_1, b_1, w_2, b_2, H, sdpa=False):
    B, T, D = x.shape
    Dh = D // H
    h = F.layer_norm(x, (D,), ln1_w, ln1_b, 1e-5)
    q, k, v = F.linear(h, w_qkv, b_qkv).split(D, -1)
    q, k, v = (t.reshape(B, T, H, Dh).transpose(1, 2) for t in (q, k, v))
    if sdpa:
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    else:
        s = (q @ k.transpose(-2, -1)) * (1 / math.sqrt(Dh))
        causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        o = s.masked_fill(~causal, float("-inf")).softmax(-1) @ v
    x = x + F.linear(o.transpose(1, 2).reshape(B, T, D), w_o, b_o)
    m = F.gelu(F.linear(F.layer_norm(x, (D,), ln2_w, ln2_b, 1e-5), w_1, b_1))
    return (x + F.linear(m, w_2, b_2),)


def np_layer_norm(x, w, b, eps=1e-5):
    mean = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + np.float32(eps)) * w + b


def np_softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def np_gelu(x):
    return np.float32(0.5) * x * (1 + np_erf(x * np.float32(1 / math.sqrt(2))))


def transformer_numpy(x, ln1_w, ln1_b, w_qkv, b_qkv, w_o, b_o, ln2_w, ln2_b, w_1, b_1, w_2, b_2, H):
    B, T, D = x.shape
    Dh = D // H
    h = np_layer_norm(x, ln1_w, ln1_b)
    q, k, v = np.split(h @ w_qkv.T + b_qkv, 3, -1)
    q, k, v = (t.reshape(B, T, H, Dh).transpose(0, 2, 1, 3) for t in (q, k, v))
    s = (q @ k.transpose(0, 1, 3, 2)) * np.float32(1 / math.sqrt(Dh))
    s = np.where(np.tril(np.ones((T, T), dtype=bool)), s, np.float32(-np.inf))
    o = (np_softmax(s) @ v).transpose(0, 2, 1, 3).reshape(B, T, D)
    x = x + (o @ w_o.T + b_o)
    m = np_gelu(np_layer_norm(x, ln2_w, ln2_b) @ w_1.T + b_1)
    return (x + (m @ w_2.T + b_2),)


def transformer_matmuls_torch(x, w_qkv, w_o, w_1, w_2, q, k, v, p, m):
    return (x @ w_qkv.T, q @ k.transpose(-2, -1), p @ v, x @ w_o.T, x @ w_1.T, m @ w_2.T)


def transformer_matmuls_numpy(x, w_qkv, w_o, w_1, w_2, q, k, v, p, m):
    return (x @ w_qkv.T, q @ k.transpose(0, 1, 3, 2), p @ v, x @ w_o.T, x @ w_1.T, m @ w_2.T)


def attention_torch(q, k, v):
    T = q.shape[-2]
    s = (q @ k.transpose(-2, -1)) * (1 / math.sqrt(q.shape[-1]))
    causal = torch.ones(T, T, dtype=torch.bool, device=q.device).tril()
    return (s.masked_fill(~causal, float("-inf")).softmax(-1) @ v,)


def attention_sdpa(q, k, v):
    return (F.scaled_dot_product_attention(q, k, v, is_causal=True),)


def attention_numpy(q, k, v):
    T = q.shape[-2]
    s = (q @ k.transpose(0, 1, 3, 2)) * np.float32(1 / math.sqrt(q.shape[-1]))
    s = np.where(np.tril(np.ones((T, T), dtype=bool)), s, np.float32(-np.inf))
    return (np_softmax(s) @ v,)


def attention_spec(B, H, T, d, dtype, gpu_only):
    return Spec("attention", f"B{B}_H{H}_T{T}_d{d}_causal",
                lambda rng: dict(q=f32(rng, B, H, T, d), k=f32(rng, B, H, T, d), v=f32(rng, B, H, T, d)),
                attention_torch, attention_numpy if dtype == "float32" else None, dtype=dtype, gpu_only=gpu_only,
                tol_n=max(T, d), sdpa_fn=attention_sdpa)


def mlp_torch(x, w1, b1, w2, b2, w3, b3):
    h = torch.relu(x @ w1 + b1)
    h = torch.relu(h @ w2 + b2)
    return (torch.softmax(h @ w3 + b3, -1),)


def mlp_numpy(x, w1, b1, w2, b2, w3, b3):
    h = np.maximum(x @ w1 + b1, 0)
    h = np.maximum(h @ w2 + b2, 0)
    return (np_softmax(h @ w3 + b3),)


def cross_entropy_torch(logits, labels):
    return (F.cross_entropy(logits, labels),)


def cross_entropy_numpy(logits, labels):
    m = logits.max(1, keepdims=True)
    lse = np.log(np.exp(logits - m).sum(1)) + m[:, 0]
    return ((lse - logits[np.arange(len(labels)), labels]).mean(),)


def embedding_layernorm_torch(ids, table, w, b):
    return (F.layer_norm(F.embedding(ids, table), (table.shape[1],), w, b, 1e-5),)


def embedding_layernorm_numpy(ids, table, w, b):
    return (np_layer_norm(table[ids], w, b),)


def resnet_block_torch(x, w1, g1, be1, m1, v1, w2, g2, be2, m2, v2):
    h = F.relu(F.batch_norm(F.conv2d(x, w1, padding=1), m1, v1, g1, be1, False, 0.0, 1e-5))
    h = F.batch_norm(F.conv2d(h, w2, padding=1), m2, v2, g2, be2, False, 0.0, 1e-5)
    return (F.relu(h + x),)


def resnet18_torch(x, fc_w, fc_b, **p):
    """torchvision's resnet18 forward in inference, parameters named as bench/programs.cpp's resnet18."""
    def conv_bn(h, pre, stride, pad):
        return F.batch_norm(F.conv2d(h, p[pre + "_w"], stride=stride, padding=pad), p[pre + "_m"], p[pre + "_v"],
                            p[pre + "_g"], p[pre + "_be"], False, 0.0, 1e-5)
    h = F.max_pool2d(F.relu(conv_bn(x, "conv1", 2, 3)), 3, 2, 1)
    for stage in range(1, 5):
        for b in range(2):
            pre = f"l{stage}_{b}"
            stride = 2 if b == 0 and stage > 1 else 1
            y = conv_bn(F.relu(conv_bn(h, pre + "_c1", stride, 1)), pre + "_c2", 1, 1)
            h = F.relu(y + (conv_bn(h, pre + "_ds", 2, 0) if stride == 2 else h))
    return (F.linear(torch.flatten(F.adaptive_avg_pool2d(h, 1), 1), fc_w, fc_b),)


def resnet18_inputs(rng):
    """The same shapes as bench/programs.cpp's resnet18 (values from this generator, for timing)."""
    d = dict(x=f32(rng, 32, 3, 224, 224))

    def conv(pre, o, c, k):
        d[pre + "_w"] = f32(rng, o, c, k, k, scale=math.sqrt(2 / (c * k * k)))
        d[pre + "_g"], d[pre + "_be"] = unif(rng, 0.5, 1.5, o), f32(rng, o, scale=0.1)
        d[pre + "_m"], d[pre + "_v"] = f32(rng, o, scale=0.1), unif(rng, 0.5, 1.5, o)
    conv("conv1", 64, 3, 7)
    c = 64
    for stage in range(1, 5):
        o = 64 << (stage - 1)
        for b in range(2):
            pre = f"l{stage}_{b}"
            conv(pre + "_c1", o, c if b == 0 else o, 3)
            conv(pre + "_c2", o, o, 3)
            if b == 0 and stage > 1:
                conv(pre + "_ds", o, c, 1)
        c = o
    d["fc_w"], d["fc_b"] = f32(rng, 1000, 512, scale=1 / math.sqrt(512)), f32(rng, 1000, scale=0.01)
    return d


def np_conv3x3(x, w):  # padding 1, stride 1: windows as a view, one tensordot (im2col)
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(2, 3))  # N, C, H, W, 3, 3
    return np.tensordot(win, w, axes=([1, 4, 5], [1, 2, 3])).transpose(0, 3, 1, 2)


def np_bn(x, g, b, m, v):
    s = g / np.sqrt(v + np.float32(1e-5))
    return x * s[:, None, None] + (b - m * s)[:, None, None]


def resnet_block_numpy(x, w1, g1, be1, m1, v1, w2, g2, be2, m2, v2):
    h = np.maximum(np_bn(np_conv3x3(x, w1), g1, be1, m1, v1), 0)
    h = np_bn(np_conv3x3(h, w2), g2, be2, m2, v2)
    return (np.maximum(h + x, 0),)


def conv_relu_maxpool_torch(x, w, b):
    return (F.max_pool2d(F.relu(F.conv2d(x, w, b, padding=1)), 2),)


def conv_relu_maxpool_numpy(x, w, b):
    y = np.maximum(np_conv3x3(x, w) + b[:, None, None], 0)
    N, C, H, W = y.shape
    return (y.reshape(N, C, H // 2, 2, W // 2, 2).max((3, 5)),)


def kmeans_torch(X, C):
    d = ((X[:, None, :] - C[None, :, :]) ** 2).sum(-1)
    a = d.argmin(1)
    sums = torch.zeros_like(C).index_add_(0, a, X)
    counts = torch.bincount(a, minlength=C.shape[0])
    return (sums / counts.clamp(min=1)[:, None].to(X.dtype), counts)


def kmeans_numpy(X, C):
    d = ((X[:, None, :] - C[None, :, :]) ** 2).sum(-1)
    a = d.argmin(1)
    K = C.shape[0]
    counts = np.bincount(a, minlength=K)
    sums = np.stack([np.bincount(a, X[:, j], K) for j in range(X.shape[1])], 1)
    return ((sums / np.maximum(counts, 1)[:, None]).astype(X.dtype), counts)


def jacobi_torch(a):
    A, B = a.clone(), a.clone()
    for _ in range(STEPS):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A, B = B, A
    return (A,)


def jacobi_numpy(a):
    A, B = a.copy(), a.copy()
    for _ in range(STEPS):
        B[1:-1, 1:-1] = np.float32(0.2) * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A, B = B, A
    return (A,)


# The same step written with cat (fixed edges around the new interior), as without slice assignment.
def jacobi_cat_torch(a):
    A = a.clone()
    for _ in range(STEPS):
        inner = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        mid = torch.cat([A[1:-1, :1], inner, A[1:-1, -1:]], 1)
        A = torch.cat([A[:1], mid, A[-1:]], 0)
    return (A,)


def jacobi_cat_numpy(a):
    A = a.copy()
    for _ in range(STEPS):
        inner = np.float32(0.2) * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        mid = np.concatenate([A[1:-1, :1], inner, A[1:-1, -1:]], 1)
        A = np.concatenate([A[:1], mid, A[-1:]], 0)
    return (A,)


# Insulated (Neumann) boundary: the grid padded by replicating its edges, as LazyFuse's lf::pad.
def heat_torch(a):
    A = a.clone()
    for _ in range(STEPS):
        P = F.pad(A[None, None], (1, 1, 1, 1), mode="replicate")[0, 0]
        A = A + 0.1 * (P[1:-1, :-2] + P[1:-1, 2:] + P[2:, 1:-1] + P[:-2, 1:-1] - 4 * A)
    return (A,)


def heat_numpy(a):
    A = a.copy()
    for _ in range(STEPS):
        P = np.pad(A, 1, mode="edge")
        A = A + np.float32(0.1) * (P[1:-1, :-2] + P[1:-1, 2:] + P[2:, 1:-1] + P[:-2, 1:-1] - 4 * A)
    return (A,)


MC_N = 1 << 22


def mc_pi_torch(device):
    xy = torch.rand(MC_N, 2, device=device)
    count = (xy.square().sum(1) < 1).sum()
    return (count, count * (4.0 / MC_N), xy)


_np_rng = np.random.default_rng(42)


def mc_pi_numpy():
    xy = _np_rng.random((MC_N, 2), dtype=np.float32)
    count = ((xy * xy).sum(1) < 1).sum()
    return (count, count * (4.0 / MC_N), xy)


def black_scholes_torch(S, K, T, r=0.02, v=0.3):
    sqrt_t = torch.sqrt(T)
    d1 = (torch.log(S / K) + (r + 0.5 * v * v) * T) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t
    cdf = lambda z: 0.5 * (1 + torch.erf(z * (1 / math.sqrt(2))))  # noqa: E731
    disc = K * torch.exp(-r * T)
    return (S * cdf(d1) - disc * cdf(d2), disc * cdf(-d2) - S * cdf(-d1))


def black_scholes_numpy(S, K, T, r=np.float32(0.02), v=np.float32(0.3)):
    sqrt_t = np.sqrt(T)
    d1 = (np.log(S / K) + (r + np.float32(0.5) * v * v) * T) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t
    k = np.float32(1 / math.sqrt(2))
    cdf = lambda z: np.float32(0.5) * (1 + np_erf(z * k))  # noqa: E731
    disc = K * np.exp(-r * T)
    return (S * cdf(d1) - disc * cdf(d2), disc * cdf(-d2) - S * cdf(-d1))


def topk_numpy(x, k=50):
    idx = np.argpartition(x, -k, axis=1)[:, -k:]
    vals = np.take_along_axis(x, idx, 1)
    order = np.argsort(-vals, 1)
    return (np.take_along_axis(vals, order, 1), np.take_along_axis(idx, order, 1))


# ---------------------------------------------------------------------------------------------
# The registry: key (name, config, dtype) as in bench/programs.cpp.

class Spec:
    def __init__(self, name, config, inputs, torch_fn, numpy_fn=None, dtype="float32", gpu_only=False, tol_n=1,
                 scale=1.0, sdpa_fn=None, reference=None, needs="", conv=False):
        self.name, self.config, self.dtype = name, config, dtype
        self.conv = conv  # convolutions: float32 on a GPU may run in TF32 (CONV_TF32)
        self.inputs = inputs  # rng -> {name: np.ndarray}
        self.torch_fn, self.numpy_fn, self.sdpa_fn = torch_fn, numpy_fn, sdpa_fn
        self.gpu_only, self.tol_n, self.scale = gpu_only, tol_n, scale
        self.reference = reference  # (inputs64, outputs) -> [np.ndarray] or None; default torch_fn in float64
        self.needs = needs

    @property
    def key(self):
        return (self.name, self.config, self.dtype)


def f32(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape, dtype=np.float32) * np.float32(scale)).astype(np.float32)


def unif(rng, lo, hi, *shape):
    return rng.uniform(lo, hi, shape).astype(np.float32)


def transformer_spec(B, T, D, H, dtype, gpu_only):
    def inputs(rng):
        s = 1 / math.sqrt(D)
        return dict(x=f32(rng, B, T, D), ln1_w=unif(rng, 0.5, 1.5, D), ln1_b=f32(rng, D, scale=0.1),
                    w_qkv=f32(rng, 3 * D, D, scale=s), b_qkv=f32(rng, 3 * D, scale=0.1), w_o=f32(rng, D, D, scale=s),
                    b_o=f32(rng, D, scale=0.1), ln2_w=unif(rng, 0.5, 1.5, D), ln2_b=f32(rng, D, scale=0.1),
                    w_1=f32(rng, 4 * D, D, scale=s), b_1=f32(rng, 4 * D, scale=0.1),
                    w_2=f32(rng, D, 4 * D, scale=0.5 * s), b_2=f32(rng, D, scale=0.1))
    return Spec("transformer_block", f"B{B}_T{T}_D{D}_H{H}", inputs,
                lambda **kw: transformer_torch(H=H, **kw),
                (lambda **kw: transformer_numpy(H=H, **kw)) if dtype == "float32" else None,
                dtype=dtype, gpu_only=gpu_only, tol_n=4 * D,
                sdpa_fn=lambda **kw: transformer_torch(H=H, sdpa=True, **kw))


def mc_pi_reference(inp, out):
    xy = out["xy"].astype(np.float64)
    s = (xy * xy).sum(1)
    count = int((s < 1).sum())
    # Points within float32 rounding of the circle may fall either way: the count may differ by those.
    ambiguous = int((np.abs(s - 1) < 4 * np.finfo(np.float32).eps).sum())
    inrange = bool(((xy >= 0) & (xy < 1)).all())
    return {"count": (count, ambiguous), "pi": (4.0 * count / MC_N, 4.0 * ambiguous / MC_N + 1e-6),
            "xy": inrange}


def specs():
    r = []
    for dt in ("float32", "bfloat16"):
        r.append(transformer_spec(1, 128, 512, 8, dt, False))
        r.append(transformer_spec(4, 128, 256, 8, dt, False))
        r.append(transformer_spec(8, 512, 1024, 16, dt, True))
    B, T, D, H = 4, 128, 256, 8  # the block's GEMMs alone, at the CPU target's size
    r.append(Spec("transformer_matmuls", f"B{B}_T{T}_D{D}_H{H}",
                  lambda rng: dict(x=f32(rng, B, T, D), w_qkv=f32(rng, 3 * D, D, scale=D ** -0.5),
                                   w_o=f32(rng, D, D, scale=D ** -0.5), w_1=f32(rng, 4 * D, D, scale=D ** -0.5),
                                   w_2=f32(rng, D, 4 * D, scale=0.5 * D ** -0.5), q=f32(rng, B, H, T, D // H),
                                   k=f32(rng, B, H, T, D // H), v=f32(rng, B, H, T, D // H),
                                   p=unif(rng, 0, 1 / T, B, H, T, T), m=f32(rng, B, T, 4 * D)),
                  transformer_matmuls_torch, transformer_matmuls_numpy, tol_n=4 * D))
    for dt in ("float32", "bfloat16"):
        r.append(attention_spec(4, 8, 128, 32, dt, False))
        r.append(attention_spec(8, 16, 512, 64, dt, True))
        # Issue 21's other sizes: a long sequence, and the tensor-core kernels' other head dims.
        r.append(attention_spec(1, 8, 2048, 64, dt, True))
        r.append(attention_spec(8, 16, 512, 32, dt, True))
        r.append(attention_spec(8, 16, 512, 128, dt, True))
    r.append(Spec("mlp", "B256_512-512-512-64",
                  lambda rng: dict(x=f32(rng, 256, 512), w1=f32(rng, 512, 512, scale=0.05), b1=f32(rng, 512, scale=0.05),
                                   w2=f32(rng, 512, 512, scale=0.05), b2=f32(rng, 512, scale=0.05),
                                   w3=f32(rng, 512, 64, scale=0.05), b3=f32(rng, 64, scale=0.05)),
                  mlp_torch, mlp_numpy, tol_n=512))
    r.append(Spec("cross_entropy", "N4096_C1000",
                  lambda rng: dict(logits=f32(rng, 4096, 1000, scale=2.0), labels=rng.integers(0, 1000, 4096)),
                  cross_entropy_torch, cross_entropy_numpy, tol_n=1000))
    for B, T, V, D in ((32, 512, 32000, 512), (16, 512, 50000, 1024)):
        r.append(Spec("embedding_layernorm", f"B{B}_T{T}_V{V}_D{D}",
                      lambda rng, B=B, T=T, V=V, D=D: dict(ids=rng.integers(0, V, (B, T)), table=f32(rng, V, D),
                                                           w=unif(rng, 0.5, 1.5, D), b=f32(rng, D, scale=0.1)),
                      embedding_layernorm_torch, embedding_layernorm_numpy, tol_n=D))

    def resnet_inputs(rng):
        s = 1 / math.sqrt(64 * 9)
        bn = lambda: (unif(rng, 0.5, 1.5, 64), f32(rng, 64, scale=0.1), f32(rng, 64, scale=0.1),  # noqa: E731
                      unif(rng, 0.5, 1.5, 64))
        g1, be1, m1, v1 = bn()
        g2, be2, m2, v2 = bn()
        return dict(x=f32(rng, 32, 64, 56, 56), w1=f32(rng, 64, 64, 3, 3, scale=s), g1=g1, be1=be1, m1=m1, v1=v1,
                    w2=f32(rng, 64, 64, 3, 3, scale=s), g2=g2, be2=be2, m2=m2, v2=v2)
    for dt in ("float32", "bfloat16"):
        r.append(Spec("resnet_basic_block", "32x64x56x56", resnet_inputs, resnet_block_torch,
                      resnet_block_numpy if dt == "float32" else None, dtype=dt, conv=True, tol_n=576))
    for dt in ("float32", "bfloat16"):
        # tol_n: 18 layers' roundings compound; as one reduction of the longest's length (512 * 9).
        r.append(Spec("resnet18", "B32_224x224", resnet18_inputs, resnet18_torch, dtype=dt, gpu_only=True, conv=True,
                      tol_n=4608))
    r.append(Spec("conv_relu_maxpool", "8x32x56x56_to_64",
                  lambda rng: dict(x=f32(rng, 8, 32, 56, 56), w=f32(rng, 64, 32, 3, 3, scale=1 / math.sqrt(288)),
                                   b=f32(rng, 64, scale=0.1)),
                  conv_relu_maxpool_torch, conv_relu_maxpool_numpy, conv=True, tol_n=288))
    for n in (65536, 1 << 20):
        r.append(Spec("kmeans_step", f"N{n}_D16_K64",
                      lambda rng, n=n: dict(X=f32(rng, n, 16), C=f32(rng, 64, 16)), kmeans_torch, kmeans_numpy))
    for n in (64, 2048):
        r.append(Spec("jacobi2d", f"{n}x{n}_50steps", lambda rng, n=n: dict(a=f32(rng, n, n)), jacobi_torch,
                      jacobi_numpy, tol_n=5 * STEPS))
        r.append(Spec("heat2d", f"{n}x{n}_50steps", lambda rng, n=n: dict(a=f32(rng, n, n)), heat_torch, heat_numpy,
                      tol_n=5 * STEPS))
    for n in (64, 2048):
        r.append(Spec("jacobi2d_cat", f"{n}x{n}_50steps", lambda rng, n=n: dict(a=f32(rng, n, n)), jacobi_cat_torch,
                      jacobi_cat_numpy, tol_n=5 * STEPS))
    r.append(Spec("monte_carlo_pi", "2^22", lambda rng: {}, None, lambda: mc_pi_numpy(), reference=mc_pi_reference))
    r.append(Spec("black_scholes", "2^22",
                  lambda rng: dict(S=unif(rng, 10, 100, 1 << 22), K=unif(rng, 10, 100, 1 << 22),
                                   T=unif(rng, 0.1, 2.1, 1 << 22)),
                  black_scholes_torch, black_scholes_numpy, scale=100.0))
    # tol_n: a running sum of 4096 terms accumulates rounding like a sum of that many.
    r.append(Spec("cumsum", "4096x4096_dim1", lambda rng: dict(x=f32(rng, 4096, 4096)),
                  lambda x: (torch.cumsum(x, 1),), lambda x: (np.cumsum(x, 1),), tol_n=4096))
    # A running mean: a scan with its producer and consumer, along the last dim and a middle one.
    for cfg, shape, view in (("32768x256_dim1", (32768, 256), (1, 256)), ("64x256x512_dim1", (64, 256, 512), (1, 256, 1))):
        r.append(Spec("running_mean", cfg, lambda rng, shape=shape: dict(x=f32(rng, *shape)),
                      lambda x, view=view: (torch.cumsum(torch.relu(x) * 0.5, 1)
                                            / torch.arange(1, 257, device=x.device, dtype=x.dtype).reshape(view),),
                      lambda x, view=view: (np.cumsum(np.maximum(x, 0) * np.float32(0.5), 1)
                                            / np.arange(1, 257, dtype=np.float32).reshape(view),), tol_n=256))
    # One long running sum (float32 accumulation: rounding like a sum of 2^24 terms).
    for lg in (24, 26):
        r.append(Spec("cumsum_1d", f"2^{lg}", lambda rng, lg=lg: dict(x=unif(rng, 0, 1, 1 << lg)),
                      lambda x: (torch.cumsum(x, 0),), lambda x: (np.cumsum(x),), tol_n=1 << lg))
    # A histogram: 2^24 weights into 2^16 bins (about 256 adds a bin).
    r.append(Spec("scatter_add", "2^24_into_2^16",
                  lambda rng: dict(index=rng.integers(0, 1 << 16, 1 << 24), src=unif(rng, 0, 1, 1 << 24)),
                  lambda index, src: (torch.zeros(1 << 16, dtype=src.dtype, device=src.device).scatter_add_(0, index, src),),
                  lambda index, src: (np.bincount(index, src, 1 << 16).astype(np.float32),), tol_n=256))
    for rows, n in ((1024, 4096), (16384, 256), (128, 65536)):
        r.append(Spec("sort", f"{rows}x{n}_dim1", lambda rng, rows=rows, n=n: dict(x=f32(rng, rows, n)),
                      # stable: equal values keep their order, as LazyFuse's sort (and the indices are compared)
                      lambda x: tuple(torch.sort(x, dim=1, stable=True)), lambda x: (np.sort(x, 1, kind="stable"),)))
    r.append(Spec("sort_1d", "2^24", lambda rng: dict(x=f32(rng, 1 << 24)),
                  lambda x: tuple(torch.sort(x, dim=0, stable=True)), lambda x: (np.sort(x, kind="stable"),)))
    r.append(Spec("topk", "256x32000_k50", lambda rng: dict(x=f32(rng, 256, 32000)),
                  lambda x: tuple(torch.topk(x, 50, 1)), topk_numpy))
    r.append(Spec("topk", "4096x4096_k16", lambda rng: dict(x=f32(rng, 4096, 4096)),
                  lambda x: tuple(torch.topk(x, 16, 1)), lambda x: topk_numpy(x, 16)))
    return r


# ---------------------------------------------------------------------------------------------
# The check.

TOL = {"float32": (1e-4, 1e-5), "bfloat16": (2e-2, 1e-2), "float16": (1e-2, 1e-3), "float64": (1e-9, 1e-12),
       "tf32": (1e-2, 1e-3)}  # TF32 operands keep 10 mantissa bits, as float16's

# Float32 convolutions on a GPU in TF32 (cuDNN's tensor cores) or full float32, the same on both
# sides: LAZYFUSE_CONV_TF32 (LazyFuse's variable, default 1 = PyTorch's default
# torch.backends.cudnn.allow_tf32 = True) sets the peers' allow_tf32. Float32 matmuls likewise
# follow LAZYFUSE_MATMUL_TF32 (default 0 = PyTorch's default torch.backends.cuda.matmul.allow_tf32
# = False): full float32 on both sides unless it is 1; then the float32 programs with matmuls or
# attention (MATMUL_PROGRAMS) are checked at TF32's tolerance on the GPU. LazyFuse's float32
# attention takes one TF32 product then; PyTorch's SDPA keeps float32's accuracy either way.
CONV_TF32 = os.environ.get("LAZYFUSE_CONV_TF32", "1") not in ("0",)
MATMUL_TF32 = os.environ.get("LAZYFUSE_MATMUL_TF32", "0") not in ("0", "")
MATMUL_PROGRAMS = {"transformer_block", "transformer_matmuls", "attention", "mlp"}
# LAZYFUSE_CONV_BENCHMARK=1 (timed cuDNN algorithm choice) sets the peers' torch.backends.cudnn.benchmark.
CONV_BENCHMARK = os.environ.get("LAZYFUSE_CONV_BENCHMARK", "0") == "1"
IS_CUDA = [False]  # set by main() for --device cuda: the TF32 tolerance applies there only


def read_dump(path):
    inputs, outputs = {}, {"fused": {}, "unfused": {}}
    with open(os.path.join(path, "manifest.txt")) as f:
        for line in f:
            role, name, dtype, stored, file, *shape = line.split()
            np_dtype = {"float32": np.float32, "float64": np.float64, "int64": np.int64, "bool": np.uint8}[stored]
            a = np.fromfile(os.path.join(path, file), dtype=np_dtype).reshape([int(s) for s in shape])
            if stored == "bool":
                a = a.astype(bool)
            (inputs if role == "input" else outputs[role])[name] = a
    return inputs, outputs


def reference(spec, inputs):
    t = {k: (torch.from_numpy(v).double() if v.dtype.kind == "f" else torch.from_numpy(v)) for k, v in inputs.items()}
    with torch.no_grad():
        outs = spec.torch_fn(**t)
    return [o.double().numpy() if torch.is_tensor(o) else np.asarray(o, dtype=np.float64) for o in outs]


def check(spec, inputs, outputs, refs=None):
    """-> (pass, err, note) for one set of outputs (fused, unfused or eager's); refs: the float64
    reference of these inputs when the caller has it (reference())."""
    if spec.reference is not None:  # Monte Carlo pi: the reference reads LazyFuse's own random points
        ref = spec.reference(inputs, outputs)
        worst, notes = 0.0, []
        for name, want in ref.items():
            got = outputs[name]
            if name == "xy":
                e = 0.0 if want else math.inf
                notes.append("xy in [0,1)" if want else "xy out of [0,1)")
            else:
                value, allowed = want
                e = abs(float(got.reshape(-1)[0]) - value) / max(allowed, 1e-12) if abs(float(got.reshape(-1)[0]) - value) else 0.0
            worst = max(worst, e)
        return worst <= 1, worst, "; ".join(notes)
    if refs is None:
        refs = reference(spec, inputs)
    tf32 = spec.dtype == "float32" and IS_CUDA[0] and (
        (spec.conv and CONV_TF32) or (MATMUL_TF32 and spec.name in MATMUL_PROGRAMS))
    rtol, atol = TOL["tf32" if tf32 else spec.dtype]
    root = math.sqrt(spec.tol_n)
    worst = 0.0
    for (name, got), want in zip(outputs.items(), refs):
        got = got.astype(np.float64)
        if got.shape != want.shape:
            return False, math.inf, f"{name}: shape {got.shape} vs reference {want.shape}"
        if not np.array_equal(np.isnan(got), np.isnan(want)) or not np.array_equal(np.isinf(got), np.isinf(want)):
            return False, math.inf, f"{name}: NaN or inf where the reference has none"
        fin = np.isfinite(want)
        allowed = atol * root * spec.scale + rtol * root * np.abs(want[fin])
        e = float((np.abs(got[fin] - want[fin]) / allowed).max()) if fin.any() else 0.0
        worst = max(worst, e)
    return worst <= 1, worst, ""


# ---------------------------------------------------------------------------------------------
# Measuring.

def rss_mb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1]) / 1024
    return -1


def reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def measure(fn, device, budget_s):
    """-> dict(first_ms, ms, host_ms, peak_mb) for fn() (a call returning outputs)."""
    cuda = device == "cuda"
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    if cuda:
        sync()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_reserved()
    else:
        base = rss_mb("VmRSS:")
        can_peak = reset_peak()
    s = time.perf_counter()
    fn()
    sync()
    first = (time.perf_counter() - s) * 1e3
    res = {"first_ms": first}
    if not cuda:
        times = []
        start = time.perf_counter()
        least = 3 if first < 1000 else 1  # a call of seconds (numpy's convolutions): one more call
        while len(times) < least or (time.perf_counter() - start < budget_s and len(times) < 2000):
            s = time.perf_counter()
            fn()
            times.append((time.perf_counter() - s) * 1e3)
        times.sort()
        res["ms"] = times[len(times) // 2]
        if can_peak:
            res["peak_mb"] = rss_mb("VmHWM:") - base
        return res
    for _ in range(3):
        fn()
    sync()
    s = time.perf_counter()
    n = 0
    while time.perf_counter() - s < 0.025:
        fn()
        n += 1
    sync()
    one = (time.perf_counter() - s) / n
    reps = max(2, min(2000, int(budget_s / 5 / max(one, 1e-6))))
    total, host = [], []
    for _ in range(5):
        s = time.perf_counter()
        for _ in range(reps):
            fn()
        host.append((time.perf_counter() - s) * 1e3 / reps)
        sync()
        total.append((time.perf_counter() - s) * 1e3 / reps)
    res["ms"] = sorted(total)[2]
    res["host_ms"] = sorted(host)[2]
    res["peak_mb"] = (torch.cuda.max_memory_reserved() - base) / 2**20
    return res


def torch_inputs(spec, arrays, device):
    dt = {"float32": torch.float32, "bfloat16": torch.bfloat16}[spec.dtype]
    return {k: torch.from_numpy(v).to(device=device, dtype=dt if v.dtype.kind == "f" else None)
            for k, v in arrays.items()}


def eager_check(spec, inputs, device, refs):
    """-> check() of PyTorch eager's outputs in the program's dtype on LazyFuse's inputs, or None
    (a program checked by its own reference, or one whose eager run fails)."""
    if spec.reference is not None:
        return None
    try:
        with torch.no_grad():
            outs = spec.torch_fn(**torch_inputs(spec, inputs, device))
        got = {f"out{i}": (o.float() if o.is_floating_point() else o).cpu().numpy() if torch.is_tensor(o)
               else np.asarray(o) for i, o in enumerate(outs)}
        return check(spec, inputs, got, refs)
    except Exception:  # noqa: BLE001: the eager row's own measurement reports its failure
        return None


def peer_calls(spec, device, arrays, compile_ok):
    """-> [(impl, callable or None, why not)]."""
    calls = []
    if device == "cpu":
        if spec.numpy_fn is None:
            calls.append(("numpy", None, "numpy has no bfloat16"))
        else:
            calls.append(("numpy", lambda: spec.numpy_fn(**arrays), ""))
    if spec.name == "monte_carlo_pi":
        fn = lambda: mc_pi_torch(device)  # noqa: E731
        tin = None
    else:
        tin = torch_inputs(spec, arrays, device)
        fn = lambda: spec.torch_fn(**tin)  # noqa: E731
    calls.append(("torch_eager", fn, ""))
    if device == "cuda":
        if spec.sdpa_fn is not None:  # transformer_block, attention
            calls.append(("torch_sdpa", lambda: spec.sdpa_fn(**tin), ""))
        # Every program's target is this lambda's code object: past dynamo's recompile limit (8)
        # a later program would run eagerly under the torch.compile name (seen on the H100,
        # 2026-11-24: k-means and the stencils timed as eager). Raise the limits.
        for knob in ("recompile_limit", "cache_size_limit", "accumulated_recompile_limit", "accumulated_cache_size_limit"):
            if hasattr(torch._dynamo.config, knob):
                setattr(torch._dynamo.config, knob, 4096)
        for impl, mode in (("torch_compile", "default"), ("torch_compile_ro", "reduce-overhead")):
            target = (lambda: mc_pi_torch(device)) if tin is None else (lambda: spec.torch_fn(**tin))
            compiled = torch.compile(target, mode=mode, dynamic=False)
            calls.append((impl, compiled, ""))
    return calls


def fmt(v, f="%.3f"):
    try:
        return f % float(v)
    except (TypeError, ValueError):
        return "-"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--lazyfuse-csv", help="lazyfuse-programs --csv output to join")
    ap.add_argument("--dump", help="lazyfuse-programs --dump directory, for the check")
    ap.add_argument("--csv", required=True, help="the joined CSV to write")
    ap.add_argument("--only", default="", help="programs whose 'name config dtype' contains this (or one of a comma-separated list)")
    ap.add_argument("--budget", type=float, default=0.5, help="seconds of steady-state iterations per peer")
    ap.add_argument("--compile-budget", type=float, default=300, help="seconds of torch.compile first calls in all")
    ap.add_argument("--warm-process", action="store_true", help="time torch.compile's first call in a second process too")
    ap.add_argument("--first-call-only", help=argparse.SUPPRESS)  # "name|config|dtype|impl": child of --warm-process
    args = ap.parse_args()
    device = args.device
    if device == "cuda":
        torch.backends.cudnn.allow_tf32 = CONV_TF32  # as LazyFuse's LAZYFUSE_CONV_TF32 (CONV_TF32 above)
        torch.backends.cuda.matmul.allow_tf32 = MATMUL_TF32  # as LazyFuse's LAZYFUSE_MATMUL_TF32 (default: full float32)
        torch.backends.cudnn.benchmark = CONV_BENCHMARK  # as LazyFuse's LAZYFUSE_CONV_BENCHMARK
        IS_CUDA[0] = True
        print(f"float32 convolutions: {'TF32 tensor cores' if CONV_TF32 else 'full float32'} on both sides "
              f"(LAZYFUSE_CONV_TF32={int(CONV_TF32)}, torch.backends.cudnn.allow_tf32={CONV_TF32}); "
              f"cuDNN algorithms {'timed' if CONV_BENCHMARK else 'by heuristic'} on both sides "
              f"(LAZYFUSE_CONV_BENCHMARK={int(CONV_BENCHMARK)}, torch.backends.cudnn.benchmark={CONV_BENCHMARK}); "
              f"float32 matmuls {'on TF32 tensor cores' if MATMUL_TF32 else 'in full float32'} on both sides "
              f"(LAZYFUSE_MATMUL_TF32={int(MATMUL_TF32)}, torch.backends.cuda.matmul.allow_tf32={MATMUL_TF32})", flush=True)
    else:
        torch.set_num_threads(len(os.sched_getaffinity(0)))  # Debian's build starts with 1 thread here
    all_specs = [s for s in specs() if not (s.gpu_only and device == "cpu")]

    if args.first_call_only:
        name, config, dtype, impl = args.first_call_only.split("|")
        spec = next(s for s in all_specs if s.key == (name, config, dtype))
        arrays = spec.inputs(np.random.default_rng(1))
        fn = dict((i, f) for i, f, _ in peer_calls(spec, device, arrays, lambda: True))[impl]
        s = time.perf_counter()
        fn()
        if device == "cuda":
            torch.cuda.synchronize()
        print(f"FIRST_MS={(time.perf_counter() - s) * 1e3:.3f}")
        return

    rows = []
    if args.lazyfuse_csv and os.path.exists(args.lazyfuse_csv):
        with open(args.lazyfuse_csv) as f:
            rows = list(csv.DictReader(f))
    checks = {}  # (name, config, dtype, impl) -> (pass, err, note)
    for spec in all_specs:
        key = "__".join(spec.key)
        if args.dump and os.path.isdir(os.path.join(args.dump, key)):
            inputs, outputs = read_dump(os.path.join(args.dump, key))
            try:  # the float64 reference, once for eager's outputs and LazyFuse's
                refs = reference(spec, inputs) if spec.reference is None else None
            except Exception:  # noqa: BLE001: check() below raises it again, and reports it
                refs = None
            eager = eager_check(spec, inputs, device, refs)
            if eager:
                checks[spec.key + ("torch_eager",)] = eager
            for role in ("fused", "unfused"):
                if outputs[role]:
                    try:
                        c = check(spec, inputs, outputs[role], refs)
                    except Exception as e:  # a reference that cannot run is reported, not hidden
                        c = (False, math.inf, f"check failed: {e}")
                    if not c[0] and eager and math.isfinite(c[1]) and math.isfinite(eager[1]) and c[1] <= eager[1]:
                        c = (True, c[1], f"err above 1 but within PyTorch eager's own ({eager[1]:.3g}) on these inputs")
                    checks[spec.key + ("lazyfuse_" + role,)] = c
    for r in rows:
        c = checks.get((r["program"], r["config"], r["dtype"], r["impl"]))
        if c:
            r["check"] = "pass" if c[0] else "FAIL"
            r["err"] = f"{c[1]:.3g}"
            if c[2]:
                r["note"] = (r["note"] + "; " if r["note"] else "") + c[2]
        elif r["impl"].startswith("lazyfuse") and r["status"] == "ok":
            r["check"] = "not checked"

    compile_spent = [0.0]
    compile_ok = lambda: compile_spent[0] < args.compile_budget  # noqa: E731
    lf_needs = {(r["program"], r["config"], r["dtype"]): r["needs"] for r in rows}
    for spec in all_specs:
        if args.only and not any(o in " ".join(spec.key) for o in args.only.split(",")):
            continue
        print(f"== {' '.join(spec.key)}", file=sys.stderr, flush=True)
        arrays = spec.inputs(np.random.default_rng(1))
        for impl, fn, why in peer_calls(spec, device, arrays, compile_ok):
            row = {c: "" for c in COLUMNS}
            row.update(program=spec.name, config=spec.config, dtype=spec.dtype, device=device, impl=impl)
            row["needs"] = lf_needs.get(spec.key, "")
            if fn is None or (impl.startswith("torch_compile") and not compile_ok()):
                row.update(status="n/a" if fn is None else "skipped",
                           note=why or "the run's torch.compile time budget (--compile-budget) is spent")
                rows.append(row)
                continue
            try:
                with torch.no_grad():
                    t0 = time.perf_counter()
                    m = measure(fn, device, args.budget)
                    if impl.startswith("torch_compile"):
                        compile_spent[0] += m["first_ms"] / 1e3
                row.update(status="ok", ms=f"{m['ms']:.6g}", first_ms=f"{m['first_ms']:.6g}")
                if "peak_mb" in m:
                    row["peak_mb"] = f"{m['peak_mb']:.4g}"
                if "host_ms" in m:
                    row["host_ms"] = f"{m['host_ms']:.6g}"
                if impl.startswith("torch_compile") and args.warm_process and compile_ok():
                    out = subprocess.run([sys.executable, __file__, "--device", device, "--csv", os.devnull,
                                          "--first-call-only", "|".join(spec.key + (impl,))],
                                         capture_output=True, text=True, timeout=600)
                    for line in out.stdout.splitlines():
                        if line.startswith("FIRST_MS="):
                            row["warm_first_ms"] = line.split("=")[1]
                print(f"   {impl}: {m['ms']:.3f} ms ({time.perf_counter() - t0:.1f} s)", file=sys.stderr, flush=True)
            except Exception as e:  # noqa: BLE001: a peer that fails is a row that says so
                row.update(status="failed", note=str(e).splitlines()[0][:200] if str(e) else type(e).__name__)
            c = checks.get(spec.key + (impl,))
            if c and row["status"] == "ok":
                row["check"], row["err"] = "pass" if c[0] else "FAIL", f"{c[1]:.3g}"
            rows.append(row)
            if device == "cuda":
                torch.cuda.empty_cache()

    with open(args.csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({c: r.get(c, "") for c in COLUMNS})
    print_table(rows, device)


PEERS_CPU = ["eigen", "numpy", "torch_eager"]
PEERS_GPU = ["torch_eager", "torch_sdpa", "torch_compile", "torch_compile_ro"]
LABEL = {"eigen": "Eigen", "numpy": "numpy", "torch_eager": "torch eager", "torch_sdpa": "eager + SDPA",
         "torch_compile": "torch.compile", "torch_compile_ro": "compile reduce-overhead"}


def print_table(rows, device):
    peers = PEERS_GPU if device == "cuda" else PEERS_CPU
    by = {}
    order = []
    for r in rows:
        k = (r["program"], r["config"], r["dtype"])
        if k not in by:
            order.append(k)
        by.setdefault(k, {})[r["impl"]] = r
    head = ["program", "config", "dtype", "LazyFuse fused ms", "unfused ms", "fused/unfused", "kernels/iter",
            "host ms/iter", "first call cold ms", "warm ms", "peak MB", "check (err)"]
    head += [LABEL[p] + " ms" for p in peers] + ["best peer", "fused/best"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for k in order:
        d = by[k]
        fu, un = d.get("lazyfuse_fused", {}), d.get("lazyfuse_unfused", {})
        cells = list(k)
        if fu.get("status") == "waiting":
            cells += [f"waiting for {fu['needs'].replace(';', ', ')}"] + [""] * 8
        elif fu and fu.get("status") != "ok":
            cells += [f"FAILED: {fu.get('note', '')}"] + [""] * 8
        elif fu:
            ratio = fmt(float(fu["ms"]) / float(un["ms"]), "%.2f") if un.get("ms") and fu.get("ms") else "-"
            chk = f"{fu.get('check', '-')} ({fu.get('err', '-')}); unfused {un.get('check', '-')}"
            cells += [fmt(fu.get("ms")), fmt(un.get("ms")), ratio, fmt(fu.get("kernels"), "%.0f"),
                      fmt(fu.get("host_ms")), fmt(fu.get("first_ms"), "%.1f"), fmt(fu.get("warm_first_ms"), "%.1f"),
                      fmt(fu.get("peak_mb"), "%.1f"), chk]
        else:
            cells += ["not run"] + [""] * 8
        best = None
        for p in peers:
            r = d.get(p)
            if r and r.get("status") == "ok" and r.get("ms"):
                cells.append(fmt(r["ms"]))
                if best is None or float(r["ms"]) < best[1]:
                    best = (LABEL[p], float(r["ms"]))
            else:
                cells.append("-" if not r else r.get("status", "-"))
        cells.append(best[0] if best else "-")
        cells.append(fmt(float(fu["ms"]) / best[1], "%.2f") if best and fu.get("status") == "ok" and fu.get("ms") else "-")
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
