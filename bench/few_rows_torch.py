"""PyTorch's time for bench/few_rows.cpp's programs (eager and torch.compile), in ms.

usage: python3 bench/few_rows_torch.py [log2 size (24)]
"""
import sys
import time

import torch


def median_ms(step, dev):
    for _ in range(3):
        step()
    sync = torch.cuda.synchronize if dev == 'cuda' else (lambda: None)
    sync()
    ms = []
    for _ in range(15):
        t0 = time.perf_counter()
        step()
        sync()
        ms.append((time.perf_counter() - t0) * 1e3)
    return sorted(ms)[len(ms) // 2]


def main():
    log2n = int(sys.argv[1]) if len(sys.argv) > 1 else 24
    dev = 'cuda' if torch.cuda.is_available() else 'cpu'
    n = 1 << log2n
    x = torch.randn(n, device=dev)
    ap, p, r, y = (torch.randn(n, device=dev) for _ in range(4))
    rs = (r * r).sum()

    def normalize(x):
        return (x - x.mean()) / x.std()

    def softmax(x):
        return torch.softmax(x, 0)

    def cg(y, p, r, ap, rs):
        alpha = rs / (p * ap).sum()
        y = y + alpha * p
        r2 = r - alpha * ap
        rs2 = (r2 * r2).sum()
        return y, r2 + rs2 / rs * p

    for mode in ['eager', 'compile']:
        f_n, f_s, f_c = (normalize, softmax, cg) if mode == 'eager' else (
            torch.compile(normalize), torch.compile(softmax), torch.compile(cg))
        a = median_ms(lambda: f_n(x), dev)
        b = median_ms(lambda: f_s(x), dev)
        c = median_ms(lambda: f_c(y, p, r, ap, rs), dev)
        print(f'few_rows n=2^{log2n} torch {mode} {dev}: normalize {a:.3f} ms, softmax {b:.3f} ms, cg_vectors {c:.3f} ms')


if __name__ == '__main__':
    main()
