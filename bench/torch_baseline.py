"""PyTorch eager and torch.compile on the workloads of bench/gpu_bench.cpp, on the same GPU in the
same call (bench/run_gpu.sh). Prints a markdown table, CSV lines, and the measured copy bandwidth."""
import math
import sys

import torch
from triton.testing import do_bench

torch.manual_seed(0)
dev = "cuda"
R, C, N26 = 16384, 4096, 1 << 26


def copy_gbps():
    a = torch.empty(1 << 28, dtype=torch.float32, device=dev).normal_()
    b = torch.empty_like(a)
    ms = do_bench(lambda: b.copy_(a), warmup=50, rep=500, return_mode="median")
    return 2 * a.numel() * 4 / (ms * 1e6)


def chain(x):
    return torch.relu(x * 2 + 1) * torch.sigmoid(x) - torch.tanh(x) / 3


def black_scholes(S, K, T, r=0.02, v=0.3):
    sqrt_t = torch.sqrt(T)
    d1 = (torch.log(S / K) + (r + 0.5 * v * v) * T) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t
    cdf = lambda z: 0.5 * (1 + torch.erf(z * 0.70710678118654752))
    disc = K * torch.exp(-r * T)
    return S * cdf(d1) - disc * cdf(d2), disc * cdf(-d2) - S * cdf(-d1)


def main():
    bw = copy_gbps()
    x26 = torch.randn(N26, device=dev)
    x = torch.randn(R, C, device=dev)
    res = torch.randn(R, C, device=dev)
    b = torch.randn(C, device=dev)
    n25 = 1 << 25
    S = torch.rand(n25, device=dev) * 90 + 10
    K = torch.rand(n25, device=dev) * 90 + 10
    T = torch.rand(n25, device=dev) * 2 + 0.1
    small = torch.randn(4096, device=dev)
    ln = torch.nn.functional.layer_norm
    work = [
        ("relu(x*2+1)*sigmoid(x)-tanh(x)/3, 2^26", 2 * 4 * N26, lambda: chain(x26)),
        ("gelu(x + b), 16384x4096", 2 * 4 * R * C, lambda: torch.nn.functional.gelu(x + b)),
        ("layer_norm(x + r), 16384x4096", 3 * 4 * R * C, lambda: ln(x + res, (C,))),
        ("softmax(x, -1), 16384x4096", 2 * 4 * R * C, lambda: torch.softmax(x, -1)),
        ("(x - mean) / (std + eps), 16384x4096", 2 * 4 * R * C,
         lambda: (x - x.mean(1, keepdim=True)) / (x.std(1, keepdim=True) + 1e-5)),
        ("sum(x*x), 2^26", 4 * N26, lambda: (x26 * x26).sum()),
        ("Black-Scholes call+put, 2^25", 5 * 4 * n25, lambda: black_scholes(S, K, T)),
        ("chain on 4096 (launch-bound), per call", 2 * 4 * 4096, lambda: chain(small)),
    ]
    print(f"copy bandwidth {bw:.1f} GB/s (read + write)")
    print("| workload (float32) | floor ms | eager ms | torch.compile ms | compile first call s |")
    print("|---|---|---|---|---|")
    rows = []
    for name, nbytes, fn in work:
        eager = do_bench(fn, warmup=25, rep=200, return_mode="median")
        compiled = torch.compile(fn)
        import time
        t0 = time.time()
        compiled()
        torch.cuda.synchronize()
        first = time.time() - t0
        comp = do_bench(compiled, warmup=25, rep=200, return_mode="median")
        floor_ms = nbytes / (bw * 1e6)
        rows.append((name, floor_ms, eager, comp, first))
        print(f"| {name} | {floor_ms:.4f} | {eager:.4f} | {comp:.4f} | {first:.2f} |")
        sys.stdout.flush()
    for r in rows:
        print("csv_torch," + ",".join(str(v) for v in r))
    print(f"COPY_GBPS={bw:.1f}")


if __name__ == "__main__":
    main()
