# Where PyTorch's eager ResNet-18 (batch 32, 224x224, inference, NCHW) spends its GPU time, kernel by
# kernel (torch.profiler), in float32 (TF32 convolutions, PyTorch's default) and bfloat16: the peer
# of lazyfuse-programs' resnet18 rows, run in the same device call (bench/conv/resnet_profile.sh).
import math
import sys

import numpy as np
import torch

sys.path.insert(0, "bench")
from programs_peers import resnet18_inputs, resnet18_torch  # noqa: E402

torch.backends.cudnn.allow_tf32 = True
rng = np.random.default_rng(1)
inputs = resnet18_inputs(rng)
for dtype in (torch.float32, torch.bfloat16):
    p = {k: torch.from_numpy(np.asarray(v)).to("cuda", dtype) for k, v in inputs.items()}
    for _ in range(5):
        resnet18_torch(**p)
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(10):
            resnet18_torch(**p)
        torch.cuda.synchronize()
    print(f"== PyTorch eager resnet18 {dtype}: GPU time a forward, top kernels")
    rows = sorted(prof.key_averages(), key=lambda e: -e.device_time_total)
    total = sum(e.device_time_total for e in rows) / 10 / 1000
    print(f"total {total:.3f} ms")
    for e in rows[:14]:
        print(f"{e.device_time_total / 10 / 1000:8.3f} ms {e.count // 10:4d}x  {e.key[:110]}")
