"""numpy on the CPU workloads of bench/cpu_bench.cpp (same names, same sizes, written the idiomatic
numpy way; NPBench's own code for arc_distance, compute and jacobi_2d). Medians after a warm-up.

  python3 bench/numpy_baseline.py --floor-csv bench/results/cpu.csv --csv bench/results/cpu_numpy.csv

The floor of each row is taken from cpu_bench's CSV of the same machine (--floor-csv), so both
measure against one copy bandwidth; without it, this script's own single-threaded copy is used."""
import argparse
import csv
import math
import sys
import time

import numpy as np

STEPS = 50  # Jacobi steps, as in cpu_bench.cpp
rng = np.random.default_rng(1)


def median_ms(fn, reps):
    fn()
    t = []
    for _ in range(reps):
        s = time.perf_counter()
        fn()
        t.append((time.perf_counter() - s) * 1e3)
    return sorted(t)[len(t) // 2]


try:  # numpy has no erf; a numpy user takes scipy's ufunc, or math.erf vectorized without scipy
    from scipy.special import erf
    ERF = "scipy.special.erf"
except ImportError:
    def erf(x):
        return np.vectorize(math.erf, otypes=[x.dtype])(x)
    ERF = "np.vectorize(math.erf) (no scipy)"


def gelu(x):
    return 0.5 * x * (1 + erf(x * np.float32(1 / math.sqrt(2))))


def black_scholes(S, K, T, r=np.float32(0.02), v=np.float32(0.3)):
    sqrt_t = np.sqrt(T)
    d1 = (np.log(S / K) + (r + np.float32(0.5) * v * v) * T) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t
    k = np.float32(1 / math.sqrt(2))
    cdf = lambda z: np.float32(0.5) * (1 + erf(z * k))
    disc = K * np.exp(-r * T)
    return S * cdf(d1) - disc * cdf(d2), disc * cdf(-d2) - S * cdf(-d1)


def arc_distance(theta_1, phi_1, theta_2, phi_2):  # NPBench
    temp = np.sin((theta_2 - theta_1) / 2) ** 2 + np.cos(theta_1) * np.cos(theta_2) * np.sin((phi_2 - phi_1) / 2) ** 2
    return 2 * np.arctan2(np.sqrt(temp), np.sqrt(1 - temp))


def compute(array_1, array_2, a=4, b=3, c=9):  # NPBench
    return np.clip(array_1, 2, 10) * a + array_2 * b + c


def jacobi2d(A, B):  # NPBench's in-place form, one half-step per step
    for _ in range(STEPS):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A, B = B, A


def layer_norm(y, eps=1e-5):
    mean = y.mean(1, keepdims=True)
    var = y.var(1, keepdims=True)
    return (y - mean) / np.sqrt(var + np.float32(eps))


def softmax(x):
    e = np.exp(x - x.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def randn(*shape):
    return rng.standard_normal(shape, dtype=np.float32)


def workloads():
    work = []
    for size, n in (("small", 4096), ("large", 1 << 24)):
        x = randn(n)
        work.append(("chain", size, lambda x=x: np.maximum(x * 2 + 1, 0) * (1 / (1 + np.exp(-x))) - np.tanh(x) / 3))
    for size, R, C in (("small", 64, 256), ("large", 4096, 4096)):
        x, r, b = randn(R, C), randn(R, C), randn(C)
        work += [
            ("bias_gelu", size, lambda x=x, b=b: gelu(x + b)),
            ("layernorm_residual", size, lambda x=x, r=r: layer_norm(x + r)),
            ("softmax", size, lambda x=x: softmax(x)),
            ("standardize", size,
             lambda x=x: (x - x.mean(1, keepdims=True)) / (x.std(1, ddof=1, keepdims=True) + np.float32(1e-5))),
        ]
    for size, n in (("small", 4096), ("large", 1 << 24)):
        x = randn(n)
        work.append(("sum_squares", size, lambda x=x: np.sum(x * x)))
    for size, n in (("small", 4096), ("large", 1 << 22)):
        S = rng.random(n, dtype=np.float32) * 90 + 10
        K = rng.random(n, dtype=np.float32) * 90 + 10
        T = rng.random(n, dtype=np.float32) * 2 + np.float32(0.1)
        work.append(("black_scholes", size, lambda S=S, K=K, T=T: black_scholes(S, K, T)))
    for size, n in (("small", 4096), ("large", 1 << 22)):
        t0, p0, t1, p1 = (rng.random(n) for _ in range(4))
        work.append(("arc_distance", size, lambda t0=t0, p0=p0, t1=t1, p1=p1: arc_distance(t0, p0, t1, p1)))
    for size, n in (("small", 64), ("large", 2048)):
        a1 = (rng.random((n, n)) * 1000).astype(np.int64)
        a2 = (rng.random((n, n)) * 1000).astype(np.int64)
        work.append(("compute", size, lambda a1=a1, a2=a2: compute(a1, a2)))
    for size, n in (("small", 64), ("large", 2048)):
        A = randn(n, n)
        B = A.copy()
        work.append(("jacobi2d", size, lambda A=A, B=B: jacobi2d(A, B)))
    for size, (Bt, I, H, O) in (("small", (16, 64, 64, 16)), ("large", (256, 512, 512, 64))):
        x = randn(Bt, I)
        w1, b1, w2, b2 = randn(I, H) * 0.05, randn(H) * 0.05, randn(H, H) * 0.05, randn(H) * 0.05
        w3, b3 = randn(H, O) * 0.05, randn(O) * 0.05
        work.append(("mlp", size, lambda x=x, w1=w1, b1=b1, w2=w2, b2=b2, w3=w3, b3=b3:
                     softmax(np.maximum(np.maximum(x @ w1 + b1, 0) @ w2 + b2, 0) @ w3 + b3)))
    return work


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--floor-csv", help="cpu_bench --csv output: floors per (workload, size)")
    ap.add_argument("--csv", help="write workload,size,impl,ms,floor_ms lines here")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    floors = {}
    if args.floor_csv:
        with open(args.floor_csv) as f:
            for r in csv.DictReader(f):
                floors[(r["workload"], r["size"])] = float(r["floor_ms"])
    out = open(args.csv, "w") if args.csv else None
    if out:
        out.write("workload,size,impl,ms,floor_ms\n")
    print(f"numpy {np.__version__}, erf: {ERF}")
    print("| workload | size | numpy ms | floor ms |")
    print("|---|---|---|---|")
    for workload, size, fn in workloads():
        slow = workload in ("jacobi2d", "mlp", "black_scholes", "bias_gelu") and size == "large"
        reps = 3 if args.quick or slow else (101 if size == "small" else 15)
        ms = median_ms(fn, reps)
        floor_ms = floors.get((workload, size), 0.0)
        print(f"| {workload} | {size} | {ms:.4f} | {floor_ms:.4f} |")
        sys.stdout.flush()
        if out:
            out.write(f"{workload},{size},numpy,{ms:.6f},{floor_ms:.6f}\n")
    if out:
        out.close()


if __name__ == "__main__":
    main()
