#!/usr/bin/env python3
"""numpy reads what lf::save / lf::savez write and LazyFuse reads what numpy writes.

Usage: numpy_interop.py NPY_ROUNDTRIP_BINARY. Writes arrays with numpy (every dtype LazyFuse has,
C and Fortran order, big-endian, 0-d and empty, savez and savez_compressed), has the binary load
them, double the numbers (negate bools) and save them again, and checks the results with numpy.
Exits 77 (ctest: skipped) when numpy is missing.
"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("numpy is not installed: skipped")
    sys.exit(77)


def expected(a):
    return np.logical_not(a) if a.dtype == np.bool_ else a * a.dtype.type(2)


def main():
    binary = sys.argv[1]
    rng = np.random.default_rng(7)
    arrays = {
        "f32": rng.standard_normal((3, 5)).astype(np.float32),
        "f64_big_endian": rng.standard_normal((4, 2)).astype(">f8"),
        "f16": rng.standard_normal(7).astype(np.float16),
        "i32": np.arange(-6, 6, dtype=np.int32).reshape(2, 2, 3),
        "i64_fortran": np.asfortranarray(np.arange(12, dtype=np.int64).reshape(3, 4) * (1 << 33)),
        "bool": rng.standard_normal((2, 3)) > 0,
        "scalar": np.array(2.5, dtype=np.float64),
        "empty": np.zeros((0, 3), dtype=np.float32),
    }
    with tempfile.TemporaryDirectory() as tmp:
        inputs, out = [], os.path.join(tmp, "out")
        os.mkdir(out)
        for name, a in arrays.items():
            path = os.path.join(tmp, name + ".npy")
            np.save(path, a)
            inputs.append(path)
        np.savez(os.path.join(tmp, "plain.npz"), x=arrays["f32"], y=arrays["i32"], flags=arrays["bool"])
        np.savez_compressed(os.path.join(tmp, "compressed.npz"), x=arrays["f32"], z=arrays["i64_fortran"])
        inputs += [os.path.join(tmp, "plain.npz"), os.path.join(tmp, "compressed.npz")]
        subprocess.run([binary, out] + inputs, check=True)
        failures = 0

        def check(label, got, want):
            nonlocal failures
            want = want.astype(want.dtype.newbyteorder("=")) if want.dtype.byteorder == ">" else want
            if got.dtype != want.dtype or got.shape != want.shape or not np.array_equal(got, want):
                print(f"FAIL {label}: got {got.dtype}{got.shape} {got!r}, want {want.dtype}{want.shape} {want!r}")
                failures += 1
            else:
                print(f"ok   {label}: {got.dtype}{list(got.shape)}")

        for name, a in arrays.items():
            check(name, np.load(os.path.join(out, name + ".npy")), expected(a))
        with np.load(os.path.join(out, "plain.npz")) as z:
            assert sorted(z.files) == ["flags", "x", "y"], z.files
            for key, src in (("x", "f32"), ("y", "i32"), ("flags", "bool")):
                check("plain.npz:" + key, z[key], expected(arrays[src]))
        with np.load(os.path.join(out, "compressed.npz")) as z:
            for key, src in (("x", "f32"), ("z", "i64_fortran")):
                check("compressed.npz:" + key, z[key], expected(arrays[src]))
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
