#!/usr/bin/env python3
"""Minimax polynomial coefficients of the CPU backend's inline float32 math (codegen/cpu/llvm/math.cpp).

Each fit minimizes the largest weighted error max |w(x) (g(x) - p(x))| over an interval by Remez
exchange on a dense grid, in 40-digit arithmetic (mpmath: Debian's python3-mpmath). The weight
makes the error the one the final result sees (relative for exp and log, absolute for erfc, which
is subtracted from 1). Prints the coefficients highest degree first, as llvm_math.cpp lists them,
and the fit's error before rounding to float32; tests/codegen/cpu/math_test.cpp measures the result.

    python3 tools/fit_math.py
"""
import mpmath as mp

mp.mp.dps = 40
TINY = mp.mpf("1e-30")  # keeps weights that vanish at 0 usable as Remez reference points


def remez(g, w, a, b, deg, grid=4000, iters=30):
    """Coefficients c[0..deg] (lowest first) minimizing max |w(x) (g(x) - sum c_k x^k)| on [a, b]."""
    n = deg + 1
    xs = [a + (b - a) * (1 - mp.cos(mp.pi * (i + 0.5) / (n + 1))) / 2 for i in range(n + 1)]
    grid_x = [a + (b - a) * (1 - mp.cos(mp.pi * i / grid)) / 2 for i in range(grid + 1)]
    gv = [g(x) for x in grid_x]
    wv = [w(x) for x in grid_x]
    best = None
    for _ in range(iters):
        A = mp.matrix(n + 1, n + 1)
        rhs = mp.matrix(n + 1, 1)
        for i, x in enumerate(xs):
            for k in range(n):
                A[i, k] = x**k
            A[i, n] = (-1) ** i / w(x)
            rhs[i] = g(x)
        sol = mp.lu_solve(A, rhs)
        c = [sol[k] for k in range(n)]
        level = abs(sol[n])
        err = [wv[i] * (gv[i] - sum(c[k] * grid_x[i] ** k for k in range(n))) for i in range(len(grid_x))]
        # The extremum of each run of equal sign, then the n + 1 largest alternating ones.
        runs, cur = [], [0]
        for i in range(1, len(err)):
            if (err[i] >= 0) == (err[cur[0]] >= 0):
                cur.append(i)
            else:
                runs.append(cur)
                cur = [i]
        runs.append(cur)
        ext = [max(r, key=lambda i: abs(err[i])) for r in runs]
        while len(ext) > n + 1:
            ext = ext[1:] if abs(err[ext[0]]) < abs(err[ext[-1]]) else ext[:-1]
        best = (c, max(abs(e) for e in err))
        if len(ext) < n + 1 or best[1] <= level * (1 + mp.mpf("1e-6")):
            break
        xs = [grid_x[i] for i in ext]
    return best


def near0(fn, series):
    """fn, with its series where fn is 0/0."""
    return lambda x: series(x) if abs(x) < mp.mpf("1e-12") else fn(x)


def show(name, fit):
    c, e = fit
    print("%s: max weighted error %.3e" % (name, float(e)))
    print("  {" + ", ".join("%.17g" % float(v) for v in reversed(c)) + "}")


def main():
    half_ln2 = mp.log(2) / 2 * mp.mpf("1.0002")  # the reduced argument's range, with a margin
    show("kExpP: e^r = 1 + r P(r), |r| <= ln2/2",
         remez(near0(lambda r: (mp.exp(r) - 1) / r, lambda r: 1 + r / 2),
               lambda r: (abs(r) + TINY) / mp.exp(r), -half_ln2, half_ln2, 5))
    show("kExpm1Q: e^r - 1 = r + r^2 Q(r), |r| <= ln2/2",
         remez(near0(lambda r: (mp.exp(r) - 1 - r) / r**2, lambda r: mp.mpf(1) / 2 + r / 6),
               lambda r: (r**2 + TINY) / mp.exp(r), -half_ln2, half_ln2, 4))
    show("kExp2Q: 2^r = 1 + r Q(r), |r| <= 1/2",
         remez(near0(lambda r: (mp.mpf(2) ** r - 1) / r, lambda r: mp.log(2) + r * mp.log(2) ** 2 / 2),
               lambda r: (abs(r) + TINY) / mp.mpf(2) ** r, mp.mpf(-0.5), mp.mpf(0.5), 5))
    lo, hi = mp.sqrt(0.5) - 1 - mp.mpf("1e-4"), mp.sqrt(2) - 1 + mp.mpf("1e-4")
    show("kLogQ: log(1 + f) = f + f^2 Q(f), f in [sqrt(1/2) - 1, sqrt(2) - 1]",
         remez(near0(lambda f: (mp.log1p(f) - f) / f**2, lambda f: -mp.mpf(1) / 2 + f / 3),
               lambda f: (f**2 + TINY) / abs(mp.log1p(f) if f != 0 else TINY), lo, hi, 7))
    l2e = 1 / mp.log(2)
    show("kLog2P: log2(1 + f) = f P(f), same interval",
         remez(near0(lambda f: mp.log1p(f) / f * l2e, lambda f: l2e * (1 - f / 2)),
               lambda f: 1 / (l2e * (1 - f / 2 + f * f / 3)), lo, hi, 9))
    cut = mp.mpf("0.921875")
    show("kErfP: erf(x) = x + x P(x^2), |x| < 0.921875",
         remez(near0(lambda y: mp.erf(mp.sqrt(y)) / mp.sqrt(y) - 1,
                     lambda y: 2 / mp.sqrt(mp.pi) - 1 - 2 / mp.sqrt(mp.pi) * y / 3),
               near0(lambda y: mp.sqrt(y) / mp.erf(mp.sqrt(y)), lambda y: mp.sqrt(mp.pi) / 2), mp.mpf(0), cut * cut, 6))
    mid = mp.mpf("2.4609375")
    show("kErfcR: erfc(t) = e^(-t^2) R(t - 2.4609375), t in [0.921875, 4] (absolute error of erfc)",
         remez(lambda u: mp.erfc(u + mid) * mp.exp((u + mid) ** 2), lambda u: mp.exp(-(u + mid) ** 2), cut - mid,
               mp.mpf(4) - mid, 8, grid=3000))


if __name__ == "__main__":
    main()
