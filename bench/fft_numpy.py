"""numpy.fft's, scipy.fft's and torch.fft's time for bench/fft.cpp's programs: the best of 5 calls in ms.

usage: python3 bench/fft_numpy.py [n side]   (default: 1048576 1024)
"""
import sys
import time

import numpy as np

try:
    import scipy.fft as sfft
except ImportError:
    sfft = None
try:
    import torch
except ImportError:
    torch = None


def best_ms(f):
    best = 1e30
    for _ in range(5):
        t = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t)
    return best * 1e3


def main():
    args = [int(a) for a in sys.argv[1:]]
    n = args[0] if args else 1 << 20
    side = args[1] if len(args) > 1 else 1024
    rng = np.random.default_rng(0)
    z = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    x = rng.standard_normal((side, side))
    H = rng.random((side, side // 2 + 1))
    libs = [("numpy", np.fft)] + ([("scipy", sfft)] if sfft else [])
    for name, m in libs:
        print(f"{name} fft {n} complex128  {best_ms(lambda: m.fft(z)):.2f} ms")
        print(f"{name} rfft2 {side}x{side} float64  {best_ms(lambda: m.rfft2(x)):.2f} ms")
        print(f"{name} irfft2(rfft2(x) * H) * 0.5 {side}x{side}  "
              f"{best_ms(lambda: m.irfft2(m.rfft2(x) * H, s=(side, side)) * 0.5):.2f} ms")
    if torch is not None:
        tz, tx, tH = torch.from_numpy(z), torch.from_numpy(x), torch.from_numpy(H)
        print(f"torch fft {n} complex128  {best_ms(lambda: torch.fft.fft(tz)):.2f} ms")
        print(f"torch rfft2 {side}x{side} float64  {best_ms(lambda: torch.fft.rfft2(tx)):.2f} ms")
        print(f"torch irfft2(rfft2(x) * H) * 0.5 {side}x{side}  "
              f"{best_ms(lambda: torch.fft.irfft2(torch.fft.rfft2(tx) * tH, s=(side, side)) * 0.5):.2f} ms")


if __name__ == "__main__":
    main()
