"""numpy on the programs of bench/cliffs_cpu.cpp (issue 51's CPU cliffs), same sizes, medians of
21 runs after a warm-up.   /usr/bin/python3 bench/cliffs_cpu.py"""
import time

import numpy as np

from numpy_baseline import median_ms  # bench/: the folder of this script

rng = np.random.default_rng(1)




x = rng.random((4096, 1000), dtype=np.float32)
g = rng.random((4096, 1), dtype=np.float32)
a = rng.random((32768, 64), dtype=np.float32)
v = rng.random((64, 1), dtype=np.float32)
xs = rng.random(1 << 20, dtype=np.float32)
idx = np.arange(1 << 20)
wide = rng.random((1024, 4096), dtype=np.float32)
tall = rng.random((4096, 1024), dtype=np.float32)
sq = rng.random((1024, 1024), dtype=np.float32)


def logsumexp(a, axis):
    m = a.max(axis=axis, keepdims=True)
    return np.log(np.exp(a - m).sum(axis=axis)) + m.squeeze(axis)


def softmax(a, axis):
    e = np.exp(a - a.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def topk_round():
    m = xs.max()
    at = xs.argmax()
    return m, at, np.where(idx == at, -np.inf, xs)


rows = [
    ("argmax({1}) of 4096x1000", lambda: x.argmax(1)),
    ("  peer: max({1}) of 4096x1000", lambda: x.max(1)),
    ("matmul(a 32768x64, v 64x1)", lambda: a @ v),
    ("  peer: sum(a * v^T, {1})", lambda: (a * v.T).sum(1)),
    ("sum(x * g, {0}), x 4096x1000, g 4096x1", lambda: (x * g).sum(0)),
    ("  peer: sum(x * 2, {1})", lambda: (x * 2).sum(1)),
    ("top-k round on 2^20 (max, argmax, where)", topk_round),
    ("logsumexp(wide.t(), {1}), wide 1024x4096", lambda: logsumexp(wide.T, 1)),
    ("  peer: logsumexp(tall, {0})", lambda: logsumexp(tall, 0)),
    ("softmax(wide.t(), 1)", lambda: softmax(wide.T, 1).sum()),
    ("  peer: softmax(tall, 0)", lambda: softmax(tall, 0).sum()),
    ("var(wide.t(), {1})", lambda: wide.T.var(1, ddof=1)),
    ("  peer: var(tall, {0})", lambda: tall.var(0, ddof=1)),
    ("logsumexp(tall.t(), {0}) (contiguous rows)", lambda: logsumexp(tall.T, 0)),
    ("  peer: logsumexp(wide, {1})", lambda: logsumexp(wide, 1)),
    ("max(sq.t()[None], {0}), sq 1024x1024 (size-1 rows)", lambda: sq.T[None].max(0).sum()),
    ("  peer: max(sq[None], {0})", lambda: sq[None].max(0).sum()),
    ("sum(tall.t()) (full)", lambda: tall.T.sum()),
    ("  peer: sum(tall)", lambda: tall.sum()),
    ("max(tall.t()) (full)", lambda: tall.T.max()),
    ("  peer: max(tall)", lambda: tall.max()),
    ("var(tall.t()) (full)", lambda: tall.T.var(ddof=1)),
    ("  peer: var(tall)", lambda: tall.var(ddof=1)),
]
print("numpy %s, median of 21 runs, ms" % np.__version__)
for name, fn in rows:
    print("%-44s %9.3f" % (name, median_ms(fn, 21)))
