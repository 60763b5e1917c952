#!/usr/bin/env python3
"""PyTorch's side of lazyfuse-bench-train (bench/training/step.cpp): the same models, sizes and
AdamW step, timed eager and with torch.compile (the model's forward and backward through
AOTAutograd, and the optimizer step compiled), on CUDA when there is one. bfloat16 is autocast
(float32 parameters and optimizer state), as PyTorch users train. Usage:
  step_torch.py mlp|gpt [--steps N] [--dtype float32|bfloat16] [--modes eager,compile] [key=value ...]
Prints one line per mode: first step, median steady step, last loss, peak memory (CUDA).
"""
import argparse
import math
import time

import torch
import torch.nn.functional as F


def init(shape, fan_in, dev):
    bound = 1 / math.sqrt(fan_in)
    return ((torch.rand(shape, device=dev) * 2 - 1) * bound).requires_grad_()


def mlp(s, dev):
    widths = [s["D"], s["H"], s["H"], s["C"]]
    p = {}
    for l in range(3):
        p[f"w{l}"] = init((widths[l + 1], widths[l]), widths[l], dev)
        p[f"b{l}"] = init((widths[l + 1],), widths[l], dev)
    x = torch.randn(s["B"], s["D"], device=dev)
    y = torch.randint(0, s["C"], (s["B"],), device=dev)

    def loss(p):
        h = x
        for l in range(3):
            h = F.linear(h, p[f"w{l}"], p[f"b{l}"])
            if l < 2:
                h = F.relu(h)
        return F.cross_entropy(h.float(), y)

    return p, loss


def gpt(s, dev):
    B, T, D, H, L, V = (s[k] for k in "BTDHLV")
    p = {"emb": (torch.randn(V, D, device=dev) * 0.02).requires_grad_(),
         "pos": (torch.randn(T, D, device=dev) * 0.02).requires_grad_()}
    for l in range(L):
        b = f"l{l}."
        for n in ("ln1w", "ln2w"):
            p[b + n] = torch.ones(D, device=dev, requires_grad=True)
        for n in ("ln1b", "ln2b"):
            p[b + n] = torch.zeros(D, device=dev, requires_grad=True)
        for n in ("wq", "wk", "wv", "wo"):
            p[b + n] = init((D, D), D, dev)
        p[b + "w1"], p[b + "b1"] = init((4 * D, D), D, dev), init((4 * D,), D, dev)
        p[b + "w2"], p[b + "b2"] = init((D, 4 * D), 4 * D, dev), init((D,), 4 * D, dev)
    p["lnfw"] = torch.ones(D, device=dev, requires_grad=True)
    p["lnfb"] = torch.zeros(D, device=dev, requires_grad=True)
    ids = torch.randint(0, V, (B, T + 1), device=dev)
    xb, yb = ids[:, :T], ids[:, 1:]
    causal = torch.triu(torch.ones(T, T, dtype=torch.bool, device=dev), 1)

    def loss(p):
        h = F.embedding(xb, p["emb"]) + p["pos"]
        for l in range(L):
            w = lambda n: p[f"l{l}.{n}"]
            a = F.layer_norm(h, (D,), w("ln1w"), w("ln1b"))
            heads = lambda n: F.linear(a, w(n)).reshape(B, T, H, D // H).transpose(1, 2)
            sc = heads("wq") @ heads("wk").transpose(-1, -2) * (1 / math.sqrt(D // H))
            sc = sc.masked_fill(causal, float("-inf"))
            o = (torch.softmax(sc, -1) @ heads("wv")).transpose(1, 2).reshape(B, T, D)
            h = h + F.linear(o, w("wo"))
            a = F.layer_norm(h, (D,), w("ln2w"), w("ln2b"))
            h = h + F.linear(F.gelu(F.linear(a, w("w1"), w("b1"))), w("w2"), w("b2"))
        h = F.layer_norm(h, (D,), p["lnfw"], p["lnfb"])
        logits = h @ p["emb"].t()
        return F.cross_entropy(logits.reshape(B * T, V).float(), yb.reshape(B * T))

    return p, loss


def run(name, sizes, steps, dtype, mode, dev):
    torch.manual_seed(0)
    params, loss_of = (mlp if name == "mlp" else gpt)(sizes, dev)
    cuda = dev.type == "cuda"
    opt_kw = {"lr": 1e-3, "weight_decay": 0.01}
    if cuda and mode == "eager":
        opt_kw["fused"] = True
    opt = torch.optim.AdamW(list(params.values()), **opt_kw)
    autocast = dtype == "bfloat16"

    def fwd_bwd():
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=autocast):
            loss = loss_of(params)
        loss.backward()
        return loss

    step_opt = opt.step
    if mode == "compile":
        fwd_bwd = torch.compile(fwd_bwd)
        step_opt = torch.compile(opt.step)
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    times = []
    loss = None
    for _ in range(steps):
        start = time.perf_counter()
        loss = fwd_bwd()
        step_opt()
        opt.zero_grad(set_to_none=True)
        if cuda:
            torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e3)
    steady = sorted(times[3:]) or times
    peak = torch.cuda.max_memory_allocated() / 1e9 if cuda else float("nan")
    config = " ".join(f"{k}={v}" for k, v in sorted(sizes.items()))
    print(f"torch-{mode} {name} {dtype} {config} on {dev}: first step {times[0]:.1f} ms, "
          f"median step {steady[len(steady) // 2]:.3f} ms (of {len(steady)} after 3), "
          f"last loss {loss.item():.5f}, peak {peak:.2f} GB", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model", choices=["mlp", "gpt"])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    ap.add_argument("--modes", default="eager,compile")
    ap.add_argument("sizes", nargs="*")
    a = ap.parse_intermixed_args()
    sizes = ({"B": 256, "D": 512, "H": 512, "C": 64} if a.model == "mlp"
             else {"B": 8, "T": 512, "D": 768, "H": 12, "L": 4, "V": 32000})
    for kv in a.sizes:
        k, v = kv.split("=")
        sizes[k] = int(v)
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    for mode in a.modes.split(","):
        if mode == "compile" and not hasattr(torch, "compile"):
            print(f"torch-compile: not in PyTorch {torch.__version__}")
            continue
        run(a.model, sizes, a.steps, a.dtype, mode, dev)


if __name__ == "__main__":
    main()
