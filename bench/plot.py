"""Draws bench/results.png from the benchmark CSVs (workload,size,impl,ms,floor_ms): time relative to
the bandwidth floor per workload and size (log scale), LazyFuse fused against each peer; one panel
for the CPU, one for the GPU (a panel with no CSV says "not measured yet").

  python3 bench/plot.py [--cpu CSV ...] [--gpu CSV ...] [--out PNG]

Defaults: bench/results/cpu.csv and bench/results/cpu_numpy.csv for the CPU (cpu_bench --csv,
numpy_baseline.py --csv); bench/results/gpu_lazyfuse.csv and bench/results/gpu_torch.csv for the
GPU (bench/run_gpu.sh writes them under $OUT). Missing files are skipped.

Two more panels for the whole programs (issue 20): bench/results/programs_cpu.csv
(bench/run_programs_cpu.sh) and bench/results/programs_gpu.csv (bench/run_gpu.sh DIR programs), time
relative to the best peer of each program (log scale): LazyFuse fused and unfused against Eigen, numpy,
PyTorch eager, eager with SDPA, torch.compile and its reduce-overhead mode; a program LazyFuse cannot
write yet is marked "waiting" (its peers are still drawn)."""
import argparse
import csv
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ORDER = ["chain", "bias_gelu", "layernorm_residual", "softmax", "standardize", "sum_squares", "black_scholes",
         "arc_distance", "compute", "jacobi2d", "mlp"]
# Implementations drawn, in order, with their colors; first-call rows are not drawn.
IMPLS = [
    ("lazyfuse_fused", "LazyFuse fused", "#d62728"),
    ("lazyfuse_unfused", "LazyFuse unfused", "#ff9896"),
    ("eigen", "Eigen 3", "#1f77b4"),
    ("numpy", "numpy", "#9edae5"),
    ("torch_eager", "PyTorch eager", "#2ca02c"),
    ("torch_compile", "torch.compile", "#98df8a"),
]
# Whole programs: implementations drawn, in order (lazyfuse_* against the peers).
PROGRAM_IMPLS = IMPLS + [
    ("torch_sdpa", "eager + SDPA", "#bcbd22"),
    ("torch_compile_ro", "torch.compile reduce-overhead", "#17becf"),
]
PEERS = ("eigen", "numpy", "torch_eager", "torch_sdpa", "torch_compile", "torch_compile_ro")


def read_programs(path):
    """-> (ordered keys, {key: {impl: ms}}, {key: needs}) from a programs CSV (bench/programs_peers.py)."""
    keys, ms, waiting = [], {}, {}
    if not os.path.exists(path):
        return keys, ms, waiting
    with open(path) as f:
        for r in csv.DictReader(f):
            k = (r["program"], r["config"], r["dtype"])
            if k not in ms:
                keys.append(k)
                ms[k] = {}
            if r["status"] == "waiting":
                waiting[k] = r["needs"]
            elif r["status"] == "ok" and r["ms"] and float(r["ms"]) > 0:
                ms[k][r["impl"]] = float(r["ms"])
    return keys, ms, waiting


def programs_panel(ax, path, title):
    keys, ms, waiting = read_programs(path)
    keys = [k for k in keys if any(p in ms[k] for p in PEERS)]
    impls = [i for i in PROGRAM_IMPLS if any(i[0] in ms[k] for k in keys)]
    if not keys:
        ax.text(0.5, 0.5, f"{title}: not measured yet", ha="center", va="center", fontsize=14, transform=ax.transAxes)
        ax.set_xticks([])
        ax.set_yticks([])
        return
    width = 0.8 / max(1, len(impls))
    for j, (impl, label, color) in enumerate(impls):
        xs, ys = [], []
        for g, k in enumerate(keys):
            best = min(v for p, v in ms[k].items() if p in PEERS)
            if impl in ms[k]:
                xs.append(g - 0.4 + width * (j + 0.5))
                ys.append(ms[k][impl] / best)
        ax.bar(xs, ys, width, label=label, color=color, edgecolor="black", linewidth=0.3)
    for g, k in enumerate(keys):
        if k in waiting:
            ax.text(g, 1.0, "LazyFuse waits for\n" + waiting[k].replace(";", "\n"), ha="center", va="bottom",
                    fontsize=6, rotation=90, color="#d62728")
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    ax.text(len(keys) - 0.5, 1.0, " best peer", va="bottom", ha="right", fontsize=8)
    ax.set_yscale("log")
    ax.set_xticks(range(len(keys)))
    ax.set_xticklabels([f"{p}\n{c}" + ("" if d == "float32" else f"\n{d}") for p, c, d in keys], fontsize=6,
                       rotation=45, ha="right")
    ax.set_xlim(-0.6, len(keys) - 0.4)
    ax.set_ylabel("time / best peer's time (log)")
    ax.set_title(title)
    ax.grid(axis="y", which="major", alpha=0.3)
    ax.legend(fontsize=7, ncol=len(impls), loc="upper left")


def read(paths):
    rows = {}
    for path in paths:
        if not os.path.exists(path):
            continue
        with open(path) as f:
            for r in csv.DictReader(f):
                if r["workload"].startswith("matmul_"):
                    continue  # compute-bound: a bandwidth floor says nothing; RESULTS.md gives TFLOP/s
                ms, floor_ms = float(r["ms"]), float(r["floor_ms"])
                if ms > 0 and floor_ms > 0:
                    rows[(r["workload"], r["size"], r["impl"])] = ms / floor_ms
    return rows


def panel(ax, rows, title):
    groups = [(w, s) for w in ORDER for s in ("small", "large") if any(k[:2] == (w, s) for k in rows)]
    groups += sorted({k[:2] for k in rows} - set(groups))
    impls = [i for i in IMPLS if any(k[2] == i[0] for k in rows)]
    if not groups:
        ax.text(0.5, 0.5, f"{title}: not measured yet", ha="center", va="center", fontsize=14, transform=ax.transAxes)
        ax.set_xticks([])
        ax.set_yticks([])
        return
    width = 0.8 / len(impls)
    for j, (key, label, color) in enumerate(impls):
        xs, ys = [], []
        for g, (w, s) in enumerate(groups):
            v = rows.get((w, s, key))
            if v is not None:
                xs.append(g - 0.4 + width * (j + 0.5))
                ys.append(v)
        ax.bar(xs, ys, width, label=label, color=color, edgecolor="black", linewidth=0.3)
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    ax.text(len(groups) - 0.5, 1.0, " floor", va="bottom", ha="right", fontsize=8)
    ax.set_yscale("log")
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([f"{w}\n{s}" for w, s in groups], fontsize=7, rotation=45, ha="right")
    ax.set_xlim(-0.6, len(groups) - 0.4)
    ax.set_ylabel("time / bandwidth floor (log)")
    ax.set_title(title)
    ax.grid(axis="y", which="major", alpha=0.3)
    ax.legend(fontsize=8, ncol=len(impls), loc="upper left")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cpu", nargs="*", default=[os.path.join(HERE, "results", f) for f in ("cpu.csv", "cpu_numpy.csv")])
    ap.add_argument("--gpu", nargs="*",
                    default=[os.path.join(HERE, "results", f) for f in ("gpu_lazyfuse.csv", "gpu_torch.csv")])
    ap.add_argument("--programs-cpu", default=os.path.join(HERE, "results", "programs_cpu.csv"))
    ap.add_argument("--programs-gpu", default=os.path.join(HERE, "results", "programs_gpu.csv"))
    ap.add_argument("--out", default=os.path.join(HERE, "results.png"))
    ap.add_argument("--cpu-title", default="CPU (2 cores)")
    ap.add_argument("--gpu-title", default="GPU")
    args = ap.parse_args()
    fig, axes = plt.subplots(4, 1, figsize=(15, 21))
    panel(axes[0], read(args.cpu), args.cpu_title + ": time relative to the bandwidth floor")
    panel(axes[1], read(args.gpu), args.gpu_title + ": time relative to the bandwidth floor")
    programs_panel(axes[2], args.programs_cpu, "Whole programs, " + args.cpu_title + ": time relative to the best peer")
    programs_panel(axes[3], args.programs_gpu, "Whole programs, " + args.gpu_title + ": time relative to the best peer")
    fig.suptitle("LazyFuse vs peers (lower is better; log scale)")
    fig.tight_layout(rect=(0, 0, 1, 0.985))
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
