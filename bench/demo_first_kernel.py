#!/usr/bin/env python3
"""How soon the demo starts its first kernel: a first run (empty persistent cache: the kernel is
compiled) against a second run (the kernel is loaded from the disk cache).

Runs the demo in pairs, each pair with a fresh LAZYFUSE_CACHE_DIR, with LAZYFUSE_LOG=1, and
timestamps two lines of its stderr as they arrive: the first "flush:" line (the first sync point
is reached: process start, library load and recording are behind it) and the first "group" line
(printed once the group's kernel is compiled or loaded, just before it is launched). Every run
must end with "demo: all checks passed". Prints medians and the ratio, and, for scale, how long
a program that links the library and does nothing (`lazyfuse-cache --help`) takes to print.

  python3 bench/demo_first_kernel.py [--demo build/lazyfuse-demo] [--tool build/lazyfuse-cache] [--pairs 5]
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

GROUP = re.compile(r"^\[lazyfuse\]\s+group \d+: .*\((compiled in [0-9.]+ ms[^)]*|loaded from the disk cache)\)")


def run_demo(demo, cache_dir):
    """Seconds from start to the first flush line and to the first kernel's group line, and how
    that kernel was had ("compiled in ... ms" or "loaded from the disk cache")."""
    env = dict(os.environ, LAZYFUSE_CACHE_DIR=cache_dir, LAZYFUSE_LOG="1")
    start = time.monotonic()
    proc = subprocess.Popen([demo], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    flush_s = kernel_s = None
    how = None
    for line in proc.stderr:
        now = time.monotonic() - start
        if flush_s is None and line.startswith("[lazyfuse] flush:"):
            flush_s = now
        m = GROUP.match(line)
        if kernel_s is None and m:
            kernel_s, how = now, m.group(1)
    out = proc.stdout.read()
    if proc.wait() != 0 or "demo: all checks passed" not in out:
        sys.exit(f"demo failed (exit {proc.returncode}):\n{out}")
    if flush_s is None or kernel_s is None:
        sys.exit("no flush or group line in the demo's LAZYFUSE_LOG=1 output")
    return flush_s, kernel_s, how


def time_to_output(argv):
    """Seconds from start to the program's first line of output."""
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    proc.stdout.readline()
    took = time.monotonic() - start
    proc.stdout.read()
    proc.wait()
    return took


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--demo", default="build/lazyfuse-demo")
    ap.add_argument("--tool", default="build/lazyfuse-cache")
    ap.add_argument("--pairs", type=int, default=5)
    args = ap.parse_args()
    first, second, idle = [], [], []
    for i in range(args.pairs):
        cache = tempfile.mkdtemp(prefix="lf-demo-first-kernel-")
        try:
            first.append(run_demo(args.demo, cache))
            second.append(run_demo(args.demo, cache))
            idle.append(time_to_output([args.tool, "--help"]))
        finally:
            shutil.rmtree(cache)
        print(f"pair {i}: first run {first[-1][1] * 1e3:.1f} ms ({first[-1][2]}), "
              f"second run {second[-1][1] * 1e3:.1f} ms ({second[-1][2]})")
    med = lambda runs, k: statistics.median(r[k] for r in runs) * 1e3
    med_gap = lambda runs: statistics.median(r[1] - r[0] for r in runs) * 1e3  # per run, then the median
    f_flush, f_kernel, f_gap = med(first, 0), med(first, 1), med_gap(first)
    s_flush, s_kernel, s_gap = med(second, 0), med(second, 1), med_gap(second)
    print(f"medians of {args.pairs} pairs, ms from process start:")
    print(f"  a program that links the library prints its help: {statistics.median(idle) * 1e3:.1f}")
    print(f"  first sync point reached:  first run {f_flush:7.1f}   second run {s_flush:7.1f}")
    print(f"  first kernel starts:       first run {f_kernel:7.1f}   second run {s_kernel:7.1f}"
          f"   ({f_kernel / s_kernel:.1f}x sooner)")
    print(f"  from the first sync point: first run {f_gap:7.1f}   second run {s_gap:7.1f}"
          f"   ({f_gap / s_gap:.1f}x sooner)")


if __name__ == "__main__":
    main()
