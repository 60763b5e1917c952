#!/usr/bin/env python3
"""PyTorch CUDA tensors into LazyFuse and back through DLPack, with no copy (issue 24).

Loads liblazyfuse-dlpack-demo.so (bench/interop/dlpack_torch.cpp) with ctypes, hands it two CUDA
tensors made by PyTorch (a strided view among them), computes gelu(x * 2 + b) - x with LazyFuse,
takes the result back into PyTorch, and checks it against PyTorch's own computation; then the same
on PyTorch's current (non-default) stream through lf::set_stream, and on CPU tensors.
  python3 dlpack_torch.py PATH/liblazyfuse-dlpack-demo.so
"""
import ctypes
import sys

import torch
import torch.utils.dlpack

lib = ctypes.CDLL(sys.argv[1])
lib.lf_demo_chain.restype = ctypes.c_void_p
lib.lf_demo_chain.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
lib.lf_demo_error.restype = ctypes.c_char_p
lib.lf_demo_set_stream.argtypes = [ctypes.c_int, ctypes.c_void_p]

api = ctypes.pythonapi
api.PyCapsule_GetPointer.restype = ctypes.c_void_p
api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
api.PyCapsule_New.restype = ctypes.py_object
api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


def give(t):
    """A tensor's DLManagedTensor*, with ownership passed to the consumer (the capsule is marked used)."""
    cap = torch.utils.dlpack.to_dlpack(t)
    ptr = api.PyCapsule_GetPointer(cap, b"dltensor")
    api.PyCapsule_SetName(cap, b"used_dltensor")
    return ptr


def take(ptr):
    if not ptr:
        raise RuntimeError(lib.lf_demo_error().decode())
    return torch.utils.dlpack.from_dlpack(api.PyCapsule_New(ptr, b"dltensor", None))


def check(device, label):
    torch.manual_seed(0)
    base = torch.randn(512, 2048, device=device)
    x = base[:, ::2]  # a strided view: LazyFuse reads it as it is
    b = torch.randn(1024, device=device)
    want = torch.nn.functional.gelu(x * 2 + b) - x
    x_ptr = x.data_ptr()
    y = take(lib.lf_demo_chain(give(x), give(b)))
    if device == "cuda":
        torch.cuda.synchronize()
    err = (y - want).abs().max().item()
    ok = y.shape == want.shape and y.device == want.device and err < 1e-4
    print(f"{label}: shape {tuple(y.shape)} on {y.device}, max |diff| {err:.3g}, "
          f"input pointer kept {x.data_ptr() == x_ptr}: {'ok' if ok else 'MISMATCH'}")
    return ok


ok = check("cpu", "cpu")
if torch.cuda.is_available():
    ok &= check("cuda", "cuda, LazyFuse's stream")
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        if lib.lf_demo_set_stream(0, ctypes.c_void_p(s.cuda_stream)) != 0:
            print("set_stream:", lib.lf_demo_error().decode())
            ok = False
        else:
            ok &= check("cuda", "cuda, PyTorch's current stream via lf::set_stream")
            lib.lf_demo_set_stream(0, None)
print("dlpack_torch:", "PASSED" if ok else "FAILED")
sys.exit(0 if ok else 1)
