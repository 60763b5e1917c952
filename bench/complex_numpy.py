"""numpy's figures for bench/complex.cpp's programs (complex64), medians of REPS runs."""
import sys
import time

import numpy as np

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 22
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 15
rng = np.random.default_rng(0)
def rc(*shape):
    return (rng.standard_normal(shape, dtype=np.float32) + 1j * rng.standard_normal(shape, dtype=np.float32)).astype(np.complex64)
z, w = rc(n), rc(n)
a, b = rc(256, 256), rc(256, 256)
programs = [
    ("z * w + z", lambda: z * w + z),
    ("exp(z) * conj(w)", lambda: np.exp(z * np.float32(0.1)) * np.conj(w)),
    ("abs(z * w).sum()", lambda: np.abs(z * w).sum()),
    ("(z * w).sum()", lambda: (z * w).sum()),
    ("matmul 256^3", lambda: a @ b),
]
print(f"numpy {np.__version__} complex64, n = {n}, medians of {reps}")
for name, f in programs:
    f()
    t = []
    for _ in range(reps):
        s = time.perf_counter()
        f()
        t.append((time.perf_counter() - s) * 1e3)
    t.sort()
    print(f"{name:20s} {t[len(t) // 2]:10.3f} ms")
