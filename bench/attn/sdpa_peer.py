# PyTorch's F.scaled_dot_product_attention on the sizes of bench/programs.cpp's attention rows
# (B8 H16 T512 at head dims 32, 64, 128 and B1 H8 T2048 d64, causal), timed with CUDA events: the peer of the tensor-core attention kernel,
# run in the same device call as lazyfuse-programs (bench/attn/go.sh). With --backends, each of
# SDPA's kernels that takes the problem (FlashAttention-2, cuDNN's, the memory-efficient one) is
# timed by itself too.
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

torch.backends.cuda.matmul.allow_tf32 = False


def bench(fn, iters=200):
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(5):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(iters):
            fn()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e) / iters)
    return sorted(times)[2]


backends = [("default", None)]
if "--backends" in sys.argv:
    backends += [("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION),
                 ("efficient", SDPBackend.EFFICIENT_ATTENTION)]
print(torch.__version__, torch.cuda.get_device_name())
for dt in (torch.float32, torch.bfloat16, torch.float16):
    for b, h, t, d in ((8, 16, 512, 32), (8, 16, 512, 64), (8, 16, 512, 128), (1, 8, 2048, 64)):
        q, k, v = (torch.randn(b, h, t, d, device="cuda", dtype=dt) for _ in range(3))
        cells = []
        for name, backend in backends:
            try:
                if backend is None:
                    ms = bench(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))
                else:
                    with sdpa_kernel(backend):
                        ms = bench(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))
                cells.append(f"{name} {ms:.4f}")
            except RuntimeError:
                cells.append(f"{name} -")
        print(f"SDPA B{b}_H{h}_T{t}_d{d}_causal {str(dt).split('.')[-1]} ms: " + ", ".join(cells))
