"""Training parity with PyTorch (the autograd issue's end-to-end check): four small models trained
from the same initial weights on the same data, float32, in PyTorch here and in LazyFuse by
lazyfuse-train-parity, which compares the loss curves step by step.

Usage: parity.py <dir>   writes <dir>/<model>.npz: the data, the initial weights (w.<name>), the
per-step losses PyTorch got (torch_loss) and its final training accuracy (torch_acc).
"""
import contextlib
import io
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

STEPS = 300


def save(path, data, params, losses, acc):
    arrays = dict(data)
    for k, v in params.items():
        arrays["w." + k] = v.detach().numpy().astype(np.float32)
    arrays["torch_loss"] = np.array(losses, dtype=np.float64)
    arrays["torch_acc"] = np.array([acc], dtype=np.float64)
    np.savez(path, **arrays)


def init(shapes, gen, scale=None):
    out = {}
    for k, s in shapes.items():
        fan_in = s[-1] if len(s) > 1 else s[0]
        if len(s) == 4:
            fan_in = s[1] * s[2] * s[3]
        sc = scale if scale is not None else 1 / np.sqrt(fan_in)
        out[k] = torch.tensor(gen.uniform(-sc, sc, size=s).astype(np.float32), requires_grad=True)
    return out


def snapshot(params):
    return {k: v.detach().clone() for k, v in params.items()}


def train(params, loss_fn, opt, steps):
    losses = []
    start = time.perf_counter()
    for t in range(steps):
        opt.zero_grad()
        loss = loss_fn(t)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    train.ms_per_step = (time.perf_counter() - start) * 1e3 / steps
    return losses


def logreg(gen):
    x = gen.normal(size=(512, 20)).astype(np.float32)
    y = (x @ gen.normal(size=20) + 0.3 * gen.normal(size=512) > 0).astype(np.float32)
    p = init({"w": (1, 20), "b": (1,)}, gen)
    X, Y = torch.tensor(x), torch.tensor(y)
    logits = lambda: (X @ p["w"].T + p["b"]).squeeze(1)  # noqa: E731
    p0 = snapshot(p)
    losses = train(p, lambda t: F.binary_cross_entropy_with_logits(logits(), Y), torch.optim.SGD(p.values(), lr=0.5), 200)
    acc = ((logits() > 0).float() == Y).float().mean().item()
    return {"x": x, "y": y}, p0, losses, acc


def mlp(gen):
    x = gen.normal(size=(512, 20)).astype(np.float32)
    y = np.argmax(np.tanh(x @ gen.normal(size=(20, 4))), 1).astype(np.int64)
    p = init({"w1": (64, 20), "b1": (64,), "w2": (64, 64), "b2": (64,), "w3": (4, 64), "b3": (4,)}, gen)
    X, Y = torch.tensor(x), torch.tensor(y)

    def fwd():
        h = F.relu(F.linear(X, p["w1"], p["b1"]))
        h = F.relu(F.linear(h, p["w2"], p["b2"]))
        return F.linear(h, p["w3"], p["b3"])

    p0 = snapshot(p)
    losses = train(p, lambda t: F.cross_entropy(fwd(), Y), torch.optim.Adam(p.values(), lr=3e-3), STEPS)
    acc = (fwd().argmax(1) == Y).float().mean().item()
    return {"x": x, "y": y}, p0, losses, acc


def cnn(gen):
    n = 64
    y = gen.integers(0, 4, size=n).astype(np.int64)
    x = (0.3 * gen.normal(size=(n, 1, 8, 8))).astype(np.float32)
    for i in range(n):  # a bright 3x3 blob in the class's quadrant
        r, c = (y[i] // 2) * 4 + gen.integers(0, 2), (y[i] % 2) * 4 + gen.integers(0, 2)
        x[i, 0, r:r + 3, c:c + 3] += 1.0
    p = init({"c1": (8, 1, 3, 3), "cb1": (8,), "c2": (16, 8, 3, 3), "cb2": (16,), "fc": (4, 16), "fb": (4,)}, gen)
    X, Y = torch.tensor(x), torch.tensor(y)

    def fwd():
        h = F.max_pool2d(F.relu(F.conv2d(X, p["c1"], p["cb1"], padding=1)), 2)
        h = F.relu(F.conv2d(h, p["c2"], p["cb2"], padding=1))
        h = F.adaptive_avg_pool2d(h, 1).flatten(1)
        return F.linear(h, p["fc"], p["fb"])

    p0 = snapshot(p)
    losses = train(p, lambda t: F.cross_entropy(fwd(), Y), torch.optim.Adam(p.values(), lr=1e-2), STEPS)
    acc = (fwd().argmax(1) == Y).float().mean().item()
    return {"x": x, "y": y}, p0, losses, acc


def char_lm(gen):
    with contextlib.redirect_stdout(io.StringIO()):
        import this  # the Zen of Python: the text (its import prints it)
    text = "".join(this.d.get(c, c) for c in this.s)
    chars = sorted(set(text))
    ids = np.array([chars.index(c) for c in text], dtype=np.int64)
    V, D, T, B, H = len(chars), 32, 32, 16, 2
    offsets = gen.integers(0, len(ids) - T - 1, size=(STEPS, B))
    shapes = {"emb": (V, D), "pos": (T, D)}
    for l in range(2):
        shapes.update({f"l{l}.ln1w": (D,), f"l{l}.ln1b": (D,), f"l{l}.wq": (D, D), f"l{l}.wk": (D, D),
                       f"l{l}.wv": (D, D), f"l{l}.wo": (D, D), f"l{l}.ln2w": (D,), f"l{l}.ln2b": (D,),
                       f"l{l}.w1": (4 * D, D), f"l{l}.b1": (4 * D,), f"l{l}.w2": (D, 4 * D), f"l{l}.b2": (D,)})
    shapes.update({"lnfw": (D,), "lnfb": (D,)})
    p = init(shapes, gen)
    with torch.no_grad():
        for k in p:
            if k.endswith("w") and "ln" in k:
                p[k].fill_(1.0)
            if k.endswith("b") and "ln" in k:
                p[k].zero_()
    ids_t = torch.tensor(ids)
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)

    def loss_at(t):
        idx = torch.tensor(offsets[t])[:, None] + torch.arange(T)[None, :]
        xb, yb = ids_t[idx], ids_t[idx + 1]
        h = p["emb"][xb] + p["pos"]
        for l in range(2):
            a = F.layer_norm(h, (D,), p[f"l{l}.ln1w"], p[f"l{l}.ln1b"])
            q, k, v = (F.linear(a, p[f"l{l}.w{n}"]).view(B, T, H, D // H).transpose(1, 2) for n in "qkv")
            s = (q @ k.transpose(-1, -2)) * (1 / np.sqrt(D // H))
            s = s.masked_fill(mask, float("-inf"))
            o = (torch.softmax(s, -1) @ v).transpose(1, 2).reshape(B, T, D)
            h = h + F.linear(o, p[f"l{l}.wo"])
            a = F.layer_norm(h, (D,), p[f"l{l}.ln2w"], p[f"l{l}.ln2b"])
            h = h + F.linear(F.gelu(F.linear(a, p[f"l{l}.w1"], p[f"l{l}.b1"])), p[f"l{l}.w2"], p[f"l{l}.b2"])
        h = F.layer_norm(h, (D,), p["lnfw"], p["lnfb"])
        logits = h @ p["emb"].T
        return F.cross_entropy(logits.reshape(B * T, V), yb.reshape(B * T))

    p0 = snapshot(p)
    opt = torch.optim.AdamW(p.values(), lr=3e-3, weight_decay=0.01)
    losses = train(p, loss_at, opt, STEPS)
    return {"ids": ids, "offsets": offsets.astype(np.int64), "dims": np.array([V, D, T, B, H])}, p0, losses, float("nan")


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    for name, fn in [("logreg", logreg), ("mlp", mlp), ("cnn", cnn), ("char_lm", char_lm)]:
        gen = np.random.default_rng(7)
        data, params, losses, acc = fn(gen)
        save(os.path.join(out, name + ".npz"), data, params, losses, acc)
        print(f"{name}: PyTorch {torch.__version__} loss {losses[0]:.4f} -> {losses[-1]:.4f}, accuracy {acc:.4f}, "
              f"{train.ms_per_step:.2f} ms/step ({torch.get_num_threads()} threads)")


if __name__ == "__main__":
    main()
