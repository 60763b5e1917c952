"""numpy on the points of bench/sweep.cpp (issue 51's sweep), read from its CSV, and the report of
the worst points: the top by ratio to the floor, the fused > 1.05x unfused ones, the ones slower
than numpy, the median ratio, and a heat map per op family (a markdown table of ratios by
(rows, row length) buckets: Debian's python3 has no matplotlib).

  ./build/bench/lazyfuse-bench-sweep --quick --csv bench/results/sweep_cpu.csv
  /usr/bin/python3 bench/sweep_numpy.py --csv bench/results/sweep_cpu.csv \\
      --out bench/results/sweep_cpu_numpy.csv --markdown bench/results/sweep_cpu.md
  /usr/bin/python3 bench/sweep_numpy.py --join bench/results/sweep_cpu_numpy.csv   (report only)

numpy is timed as LazyFuse is: median of --reps runs after a warm-up (3 runs where one takes over
100 ms), the inputs made once (views included: numpy's views are free)."""
import argparse
import csv
import math
import statistics
import sys
import time

import numpy as np

rng = np.random.default_rng(1)
BW_BOUND_MS = 0.01  # floors below this are dispatch-bound: reported apart


def median_ms(fn, reps):
    fn()
    s = time.perf_counter()
    fn()
    if (time.perf_counter() - s) * 1e3 > 100:
        reps = min(reps, 3)
    t = []
    for _ in range(reps):
        s = time.perf_counter()
        fn()
        t.append((time.perf_counter() - s) * 1e3)
    return sorted(t)[len(t) // 2]


def rand(shape):
    return rng.random(shape, dtype=np.float32)


def reduce_input(shape, layout):
    if layout == "transposed":
        return rand(shape[:-2] + (shape[-1], shape[-2])).swapaxes(-1, -2)
    if layout == "sliced":
        return rand(shape[:-1] + (2 * shape[-1],))[..., ::2]
    if layout == "broadcast":
        return np.broadcast_to(rand((1,) + shape[1:]), shape)
    return rand(shape)


def logsumexp(x, axis):
    m = x.max(axis=axis, keepdims=True)
    return np.log(np.exp(x - m).sum(axis=axis)) + np.squeeze(m, axis=axis)


REDUCE = {
    "sum": lambda x, a: x.sum(axis=a),
    "mean": lambda x, a: x.mean(axis=a),
    "max": lambda x, a: x.max(axis=a),
    "argmax": lambda x, a: x.argmax(axis=a[0]),
    "argmin": lambda x, a: x.argmin(axis=a[0]),
    "var": lambda x, a: x.var(axis=a, ddof=1),
    "logsumexp": logsumexp,
}


def masks(layout):  # "b=10;c=11" -> [(True, False), (True, True)]
    return [tuple(ch == "1" for ch in part.split("=")[1]) for part in layout.split(";")]


def masked(shape, mask):
    return tuple(d if full else 1 for d, full in zip(shape, mask))


def softmax(x, d):
    e = np.exp(x - x.max(axis=d, keepdims=True))
    return e / e.sum(axis=d, keepdims=True)


def layer_norm(x, d):
    m = x.mean(axis=d, keepdims=True)
    v = x.var(axis=d, keepdims=True)
    return (x - m) / np.sqrt(v + np.float32(1e-5))


def program(row):
    shape = tuple(int(s) for s in row["shape"].split("x"))
    fam, op, layout = row["family"], row["op"], row["layout"]
    if fam == "reduce":
        x = reduce_input(shape, layout)
        axes = tuple(int(d) for d in row["dims"].split(";"))
        return lambda: REDUCE[op](x, axes)
    if fam == "elementwise":
        ms = masks(layout)
        if op == "exp":
            x = rand(masked(shape, ms[0]))
            return lambda: np.exp(np.broadcast_to(x, shape))
        a, b, c = rand(shape), rand(masked(shape, ms[0])), rand(masked(shape, ms[1]))
        return lambda: a * b + c
    if fam == "matmul":
        m, k, n = shape
        a, b = rand((m, k)), rand((k, n))
        return lambda: a @ b
    x = rand(shape)
    d = int(row["dims"])
    return (lambda: softmax(x, d)) if op == "softmax" else (lambda: layer_norm(x, d))


def read_rows(path):
    with open(path) as f:
        lines = [l for l in f if not l.startswith("#")]
    return list(csv.DictReader(lines))


def time_points(rows, reps):
    for i, r in enumerate(rows):
        r["numpy_ms"] = "%.6f" % median_ms(program(r), reps)
        if i % 100 == 0:
            print("numpy: %d / %d" % (i, len(rows)), file=sys.stderr, flush=True)


def f(r, k):
    try:
        return float(r[k])
    except (KeyError, ValueError):
        return math.nan


def name(r):
    d = (" dims " + r["dims"]) if r["dims"] else ""
    return "%s%s %s %s" % (r["op"], d, r["layout"], r["shape"])


def table(rows, title):
    out = ["%s\n" % title, "| point | fused ms | unfused ms | numpy ms | floor ms | fused/floor | fused/unfused | fused/numpy |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append("| %s | %.4g | %.4g | %.4g | %.3g | %.1f | %.2f | %.2f |" % (
            name(r), f(r, "fused_ms"), f(r, "unfused_ms"), f(r, "numpy_ms"), f(r, "floor_ms"), f(r, "ratio_fused"),
            f(r, "fused_ms") / f(r, "unfused_ms"), f(r, "fused_ms") / f(r, "numpy_ms")))
    return out


def bucket(v):  # log2 buckets of width 4: 2^0-2^3, 2^4-2^7, ...
    e = int(round(math.log2(max(1, v))))
    return e // 4 * 4


def heat_map(rows, fam):
    cells = {}
    for r in rows:
        cells.setdefault((bucket(f(r, "rows")), bucket(f(r, "row_len"))), []).append(f(r, "ratio_fused"))
    rb = sorted({k[0] for k in cells})
    lb = sorted({k[1] for k in cells})
    out = ["%s: fused/floor, median (worst) of the points in each bucket, broadcast inputs left out; rows down, row "
           "length across\n" % fam,
           "| rows \\ row length | " + " | ".join("2^%d-2^%d" % (b, b + 3) for b in lb) + " |",
           "|---" * (len(lb) + 1) + "|"]
    for a in rb:
        line = ["2^%d-2^%d" % (a, a + 3)]
        for b in lb:
            v = cells.get((a, b))
            line.append("%.1f (%.1f)" % (statistics.median(v), max(v)) if v else "")
        out.append("| " + " | ".join(line) + " |")
    return out


def groups(rows, title):  # counts by (op, layout kind), the worst fused/unfused of each
    g = {}
    for r in rows:
        k = (r["op"], r["layout"].split("=")[0] if r["family"] == "elementwise" else r["layout"])
        g.setdefault(k, []).append(f(r, "fused_ms") / f(r, "unfused_ms"))
    out = ["\n%s, by op and layout:\n" % title, "| op | layout | points | worst fused/unfused | median |", "|---|---|---|---|---|"]
    for k, v in sorted(g.items(), key=lambda kv: -len(kv[1])):
        out.append("| %s | %s | %d | %.2f | %.2f |" % (k[0], k[1], len(v), max(v), statistics.median(v)))
    return out


def broadcast(r):  # a broadcast input: a reduction's layout, or an elementwise pattern with a 0
    return r["layout"] == "broadcast" or (r["family"] == "elementwise" and "0" in r["layout"])


def report(rows, top):
    rows = [r for r in rows if not math.isnan(f(r, "ratio_fused"))]
    bw = [r for r in rows if f(r, "floor_ms") >= BW_BOUND_MS]
    has_np = all(not math.isnan(f(r, "numpy_ms")) for r in rows)
    out = ["%d points (%d with a floor >= %g ms, bandwidth-bound; the rest dispatch-bound)\n" % (len(rows), len(bw), BW_BOUND_MS)]
    med = lambda rs, k: statistics.median(f(r, k) for r in rs) if rs else math.nan
    out.append("median fused/floor: %.2f all, %.2f bandwidth-bound; median unfused/floor: %.2f all, %.2f bandwidth-bound"
               % (med(rows, "ratio_fused"), med(bw, "ratio_fused"), med(rows, "ratio_unfused"), med(bw, "ratio_unfused")))
    if has_np:
        for r in rows:
            r["np_ratio"] = f(r, "numpy_ms") / f(r, "floor_ms")
        out.append("median numpy/floor: %.2f all, %.2f bandwidth-bound\n" % (med(rows, "np_ratio"), med(bw, "np_ratio")))
    key = lambda r: -f(r, "ratio_fused")
    out += table(sorted(bw, key=key)[:top], "\nTop %d by fused/floor, bandwidth-bound points:" % top)
    # A broadcast input of a few elements has a floor of its output alone, while the work (an exp
    # per logical element) is not: these points lead the list above; here they are left out.
    full = [r for r in bw if not broadcast(r)]
    out += table(sorted(full, key=key)[:top], "\nTop %d by fused/floor, bandwidth-bound, no broadcast input:" % top)
    out += table(sorted([r for r in rows if r not in bw], key=key)[:10], "\nTop 10 by fused/floor, dispatch-bound points:")
    slow = [r for r in rows if f(r, "fused_ms") > 1.05 * f(r, "unfused_ms")]
    slow_bw = [r for r in slow if r in bw]
    out += table(sorted(slow_bw, key=lambda r: -f(r, "fused_ms") / f(r, "unfused_ms")),
                 "\nFused > 1.05x unfused, bandwidth-bound: %d points, %d of them > 1.5x, %d > 2x (and %d dispatch-bound):"
                 % (len(slow_bw), sum(f(r, "fused_ms") > 1.5 * f(r, "unfused_ms") for r in slow_bw),
                    sum(f(r, "fused_ms") > 2 * f(r, "unfused_ms") for r in slow_bw), len(slow) - len(slow_bw)))
    out += groups(slow_bw, "Fused > 1.05x unfused, bandwidth-bound")
    if has_np:
        behind = [r for r in rows if f(r, "fused_ms") > f(r, "numpy_ms")]
        behind_bw = [r for r in behind if r in bw]
        out += table(sorted(behind_bw, key=lambda r: -f(r, "fused_ms") / f(r, "numpy_ms"))[:top],
                     "\nSlower than numpy: %d points, %d bandwidth-bound (the worst %d of those by fused/numpy):"
                     % (len(behind), len(behind_bw), top))
    for fam in ("reduce", "elementwise", "matmul", "norm"):
        fr = [r for r in rows if r["family"] == fam and not broadcast(r)]
        if fr:
            out += [""] + heat_map(fr, fam)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", help="lazyfuse-bench-sweep's CSV: time numpy on its points")
    ap.add_argument("--out", help="the CSV with numpy_ms added")
    ap.add_argument("--join", help="a CSV with numpy_ms already (this script's --out): report only")
    ap.add_argument("--markdown", help="write the report here too")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--top", type=int, default=20)
    args = ap.parse_args()
    if args.join:
        rows = read_rows(args.join)
    elif args.csv:
        rows = read_rows(args.csv)
        print("numpy %s on %d points" % (np.__version__, len(rows)), file=sys.stderr)
        s = time.perf_counter()
        time_points(rows, args.reps)
        print("numpy: %.1f s" % (time.perf_counter() - s), file=sys.stderr)
        if args.out:
            with open(args.out, "w", newline="") as fo:
                w = csv.DictWriter(fo, fieldnames=list(rows[0].keys()))
                w.writeheader()
                w.writerows(rows)
    else:
        ap.error("--csv or --join")
    text = "\n".join(report(rows, args.top))
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as fo:
            fo.write(text + "\n")


if __name__ == "__main__":
    main()
