#!/usr/bin/env python3
"""numpy peer of bench/cg_poisson.cpp: the same conjugate-gradient loop (2-D Poisson, 5-point
Laplacian with zero boundaries, float64), timed the same way.  usage: cg_poisson_numpy.py [N] [iters]"""
import sys
import time

import numpy as np


def laplacian(p):
    q = np.pad(p, 1)
    return 4 * p - q[:-2, 1:-1] - q[2:, 1:-1] - q[1:-1, :-2] - q[1:-1, 2:]


def solve(n, iters):
    i = np.arange(n)[:, None]
    j = np.arange(n)[None, :]
    b = np.sin(0.05 * i) * np.cos(0.03 * j)
    x = np.zeros((n, n))
    r = b - laplacian(x)
    p = r.copy()
    rs = np.sum(r * r)
    start = time.perf_counter()
    residual = 0.0
    for k in range(1, iters + 1):
        ap = laplacian(p)
        alpha = rs / np.sum(p * ap)
        x = x + alpha * p
        r = r - alpha * ap
        rs_new = np.sum(r * r)
        beta = rs_new / rs
        p = r + beta * p
        rs = rs_new
        if k % 10 == 0 or k == iters:
            residual = float(np.sqrt(rs))
    return time.perf_counter() - start, residual


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 256
    iters = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    solve(n, 20)
    runs = sorted(solve(n, iters) for _ in range(3))
    print(f"cg {n}x{n} float64, {iters} iterations, numpy: {runs[1][0]:.3f} s (median of 3; best {runs[0][0]:.3f}), "
          f"residual {runs[1][1]:.6e}")


if __name__ == "__main__":
    main()
