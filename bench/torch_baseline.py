"""PyTorch eager and torch.compile on the workloads of bench/gpu_bench.cpp (same names, same sizes),
on the same GPU in the same call (bench/run_gpu.sh). Prints a markdown table and the measured copy
bandwidth; --csv FILE writes workload,size,impl,ms,floor_ms lines for bench/plot.py."""
import argparse
import sys
import time

import torch
from triton.testing import do_bench

torch.manual_seed(0)
dev = "cuda"
STEPS = 50  # Jacobi steps, as in gpu_bench.cpp


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


def arc_distance(t0, p0, t1, p1):  # NPBench's definition
    temp = torch.sin((t1 - t0) / 2) ** 2 + torch.cos(t0) * torch.cos(t1) * torch.sin((p1 - p0) / 2) ** 2
    return 2 * torch.atan2(torch.sqrt(temp), torch.sqrt(1 - temp))


def compute(a1, a2):  # NPBench's compute with a, b, c = 4, 3, 9
    return torch.clip(a1, 2, 10) * 4 + a2 * 3 + 9


def jacobi2d(a0):  # the idiomatic in-place form on a copy; LazyFuse builds each step with cat
    a = a0.clone()
    b = a0.clone()
    for _ in range(STEPS):
        b[1:-1, 1:-1] = 0.2 * (a[1:-1, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:] + a[2:, 1:-1] + a[:-2, 1:-1])
        a, b = b, a
    return a


def mlp(x, w1, b1, w2, b2, w3, b3):
    return torch.softmax(torch.relu(torch.relu(x @ w1 + b1) @ w2 + b2) @ w3 + b3, -1)


def workloads():
    """(workload, size, label, bytes, fn) for each row; sizes as in gpu_bench.cpp."""
    ln = torch.nn.functional.layer_norm
    gelu = torch.nn.functional.gelu
    work = []
    for size, n in (("small", 4096), ("large", 1 << 26)):
        x = torch.randn(n, device=dev)
        label = "4096" if size == "small" else "2^26"
        work.append(("chain", size, f"relu(x*2+1)*sigmoid(x)-tanh(x)/3, {label}", 2 * 4 * n, lambda x=x: chain(x)))
    for size, R, C in (("small", 64, 256), ("large", 16384, 4096)):
        x = torch.randn(R, C, device=dev)
        r = torch.randn(R, C, device=dev)
        b = torch.randn(C, device=dev)
        shape = f"{R}x{C}"
        work += [
            ("bias_gelu", size, f"gelu(x + b), {shape}", 4 * (2 * R * C + C), lambda x=x, b=b: gelu(x + b)),
            ("layernorm_residual", size, f"layer_norm(x + r), {shape}", 3 * 4 * R * C,
             lambda x=x, r=r, C=C: ln(x + r, (C,))),
            ("softmax", size, f"softmax(x, -1), {shape}", 2 * 4 * R * C, lambda x=x: torch.softmax(x, -1)),
            ("standardize", size, f"(x - mean) / (std + eps), {shape}", 2 * 4 * R * C,
             lambda x=x: (x - x.mean(1, keepdim=True)) / (x.std(1, keepdim=True) + 1e-5)),
        ]
    for size, n in (("small", 4096), ("large", 1 << 26)):
        x = torch.randn(n, device=dev)
        work.append(("sum_squares", size, f"sum(x*x), {n}", 4 * n, lambda x=x: (x * x).sum()))
    for size, n in (("small", 4096), ("large", 1 << 25)):
        S = torch.rand(n, device=dev) * 90 + 10
        K = torch.rand(n, device=dev) * 90 + 10
        T = torch.rand(n, device=dev) * 2 + 0.1
        work.append(("black_scholes", size, f"Black-Scholes call+put, {n}", 5 * 4 * n,
                     lambda S=S, K=K, T=T: black_scholes(S, K, T)))
    for size, n in (("small", 4096), ("large", 1 << 25)):
        t0, p0, t1, p1 = (torch.rand(n, device=dev, dtype=torch.float64) for _ in range(4))
        work.append(("arc_distance", size, f"arc_distance f64, {n}", 5 * 8 * n,
                     lambda t0=t0, p0=p0, t1=t1, p1=p1: arc_distance(t0, p0, t1, p1)))
    for size, n in (("small", 64), ("large", 8192)):
        a1 = (torch.rand(n, n, device=dev) * 1000).to(torch.int64)
        a2 = (torch.rand(n, n, device=dev) * 1000).to(torch.int64)
        work.append(("compute", size, f"compute i64, {n}x{n}", 3 * 8 * n * n, lambda a1=a1, a2=a2: compute(a1, a2)))
    for size, n in (("small", 64), ("large", 2048)):
        a0 = torch.randn(n, n, device=dev)
        work.append(("jacobi2d", size, f"jacobi2d {STEPS} steps, {n}x{n}", STEPS * 2 * 4 * n * n,
                     lambda a0=a0: jacobi2d(a0)))
    for size, (B, I, H, O) in (("small", (16, 64, 64, 16)), ("large", (256, 512, 512, 64))):
        p = [torch.randn(B, I, device=dev)] + [torch.randn(*s, device=dev) * 0.05
                                                 for s in ((I, H), (H,), (H, H), (H,), (H, O), (O,))]
        nbytes = 4 * sum(t.numel() for t in p) + 4 * B * O
        work.append(("mlp", size, f"MLP fwd, {B}x{I} -> {H} -> {H} -> {O}", nbytes, lambda p=p: mlp(*p)))
    # Matmul rows (issue 7): bytes are the operands and the result, so "floor" is a memory floor
    # only; the TFLOP/s lines printed at the end are what these rows are about.
    for size, n in (("small", 64), ("large", 4096)):
        a, w, b = torch.randn(n, n, device=dev), torch.randn(n, n, device=dev), torch.randn(n, device=dev)
        work.append(("matmul_bias_relu", size, f"relu(x@w+b) f32, {n}^3", 4 * (3 * n * n + n),
                     lambda a=a, w=w, b=b: torch.relu(a @ w + b)))
    for size, n in (("small", 256), ("large", 2048)):
        a, w, b, r = (torch.randn(n, n, device=dev), torch.randn(n, n, device=dev), torch.randn(n, device=dev),
                      torch.randn(n, n, device=dev))
        work.append(("matmul_gelu_residual", size, f"gelu(x@w+b)+r f32, {n}^3", 4 * (4 * n * n + n),
                     lambda a=a, w=w, b=b, r=r: torch.nn.functional.gelu(a @ w + b) + r))
    for size, n in (("small", 256), ("large", 8192)):
        a, w = (torch.randn(n, n, device=dev, dtype=torch.bfloat16) for _ in range(2))
        work.append(("matmul_bf16", size, f"x@w bf16, {n}^3", 2 * 3 * n * n, lambda a=a, w=w: a @ w))
    return work


MATMUL_N = {("matmul_bias_relu", "small"): 64, ("matmul_bias_relu", "large"): 4096,
            ("matmul_bf16", "small"): 256, ("matmul_bf16", "large"): 8192,
            ("matmul_gelu_residual", "small"): 256, ("matmul_gelu_residual", "large"): 2048}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", help="write workload,size,impl,ms,floor_ms lines here")
    args = ap.parse_args()
    bw = copy_gbps()
    print(f"copy bandwidth {bw:.1f} GB/s (read + write)")
    print("| workload | size | floor ms | eager ms | torch.compile ms | compile first call s |")
    print("|---|---|---|---|---|---|")
    csv = open(args.csv, "w") if args.csv else None
    if csv:
        csv.write("workload,size,impl,ms,floor_ms\n")
    rates = []
    for workload, size, label, nbytes, fn in workloads():
        eager = do_bench(fn, warmup=25, rep=200, return_mode="median")
        compiled = torch.compile(fn, dynamic=False)  # a small and a large size share code: keep both static
        t0 = time.time()
        compiled()
        torch.cuda.synchronize()
        first = time.time() - t0
        comp = do_bench(compiled, warmup=25, rep=200, return_mode="median")
        floor_ms = nbytes / (bw * 1e6)
        print(f"| {label} | {size} | {floor_ms:.4f} | {eager:.4f} | {comp:.4f} | {first:.2f} |")
        if (workload, size) in MATMUL_N:
            flop = 2 * MATMUL_N[(workload, size)] ** 3
            rates.append(f"{label}: eager {flop / eager / 1e9:.1f} TFLOP/s, torch.compile {flop / comp / 1e9:.1f} TFLOP/s")
        sys.stdout.flush()
        if csv:
            csv.write(f"{workload},{size},torch_eager,{eager:.6f},{floor_ms:.6f}\n")
            csv.write(f"{workload},{size},torch_compile,{comp:.6f},{floor_ms:.6f}\n")
            csv.write(f"{workload},{size},torch_compile_first_call,{first * 1e3:.3f},{floor_ms:.6f}\n")
            csv.flush()
    if csv:
        csv.close()
    for line in rates:
        print(line)
    print(f"COPY_GBPS={bw:.1f}")


if __name__ == "__main__":
    main()
