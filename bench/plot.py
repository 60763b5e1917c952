"""Draws bench/results.png from the benchmark CSVs (workload,size,impl,ms,floor_ms): time relative to
the bandwidth floor per workload and size (log scale), LazyFuse fused against each peer; one panel
for the CPU, one for the GPU (a panel with no CSV says "not measured yet").

  python3 bench/plot.py [--cpu CSV ...] [--gpu CSV ...] [--out PNG]

Defaults: bench/results/cpu.csv and bench/results/cpu_numpy.csv for the CPU (cpu_bench --csv,
numpy_baseline.py --csv); bench/results/gpu_lazyfuse.csv and bench/results/gpu_torch.csv for the
GPU (bench/run_gpu.sh writes them under $OUT). Missing files are skipped."""
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
    ap.add_argument("--out", default=os.path.join(HERE, "results.png"))
    ap.add_argument("--cpu-title", default="CPU (2 cores)")
    ap.add_argument("--gpu-title", default="GPU")
    args = ap.parse_args()
    fig, axes = plt.subplots(2, 1, figsize=(15, 10))
    panel(axes[0], read(args.cpu), args.cpu_title)
    panel(axes[1], read(args.gpu), args.gpu_title)
    fig.suptitle("LazyFuse vs peers: time relative to the bandwidth floor (lower is better; 1 = floor)")
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
