"""PyTorch's (and numpy's) time for bench/linalg.cpp's factorizations: the best of 5 calls in ms.

usage: python3 bench/linalg_torch.py [batch m n]...   (default: 100 8 8, 1 256 256, 10 200 50)
"""
import sys
import time

import numpy as np
import torch


def best_ms(f):
    best = 1e30
    for _ in range(5):
        t = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t)
    return best * 1e3


def main():
    args = [int(a) for a in sys.argv[1:]] or [100, 8, 8, 1, 256, 256, 10, 200, 50]
    for b, m, n in zip(args[0::3], args[1::3], args[2::3]):
        a = torch.randn(b, m, n, dtype=torch.float64)
        rhs = torch.randn(b, m, 2, dtype=torch.float64)
        print(f"torch B{b} {m}x{n}  qr {best_ms(lambda: torch.linalg.qr(a)):.2f}"
              f"  svd {best_ms(lambda: torch.linalg.svd(a, full_matrices=False)):.2f}"
              f"  svdvals {best_ms(lambda: torch.linalg.svdvals(a)):.2f}"
              f"  lstsq {best_ms(lambda: torch.linalg.lstsq(a, rhs, driver='gelsd')):.2f} ms")
        an = a.numpy()
        print(f"numpy B{b} {m}x{n}  qr {best_ms(lambda: np.linalg.qr(an)):.2f}"
              f"  svd {best_ms(lambda: np.linalg.svd(an, full_matrices=False)):.2f} ms")


if __name__ == "__main__":
    main()
