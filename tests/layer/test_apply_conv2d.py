#!/usr/bin/env python3
"""A convolution layer's outputs against applyConv2d written from its
definition in NumPy, with nothing of cudaconv's code: pad the input (zeros
for padding 'same', or NumPy's own border modes), then for every output
pixel and channel sum W * input over k_h x k_w x C_in in float64, add the
bias, apply ReLU, and take the 2x2 max pool.

    test_apply_conv2d.py --cudaconv BUILD/cudaconv --variants cpu-ref,cpu

Exit 0 when every case of every variant is within its bound, 1 otherwise
(each miss printed), 2 when the run itself fails. The bound of a float32
sum of n products, in any order, is (n + 2) * 2^-24 * sum |w * x| (the
classic gamma_n bound), per output element; TF32 (--allow-tf32) rounds
each factor to 11 significant bits first, adding 2^-10 * sum |w * x|.
The mma variant's split TF32 products (3xTF32) add 12 * 2^-24 * sum |w * x|
(docs/SPEC.md).
"""
import argparse
import itertools
import os
import subprocess
import sys
import tempfile

import numpy as np

# Our border names, and NumPy's np.pad mode for each.
NUMPY_PAD = {
    "zero": ("constant", {}),
    "replicate": ("edge", {}),
    "reflect101": ("reflect", {}),
    "reflect": ("symmetric", {}),
    "wrap": ("wrap", {}),
}


def apply_conv2d(x, w, b, border, relu, pool, valid):
    """x: (H, W, C_in); w: (kh, kw, C_in, C_out), Keras's HWIO; b: (C_out,)."""
    kh, kw, cin, cout = w.shape
    h, wd, _ = x.shape
    x = x.astype(np.float64)
    w = w.astype(np.float64)
    if valid:
        padded, oh, ow = x, h - kh + 1, wd - kw + 1
    else:
        # Keras and PyTorch's 'same': the extra row and column of an even
        # kernel go after the image.
        top, left = (kh - 1) // 2, (kw - 1) // 2
        widths = ((top, kh - 1 - top), (left, kw - 1 - left), (0, 0))
        mode, extra = NUMPY_PAD[border]
        padded, oh, ow = np.pad(x, widths, mode=mode, **extra), h, wd
    sums = np.zeros((oh, ow, cout))
    magnitude = np.zeros((oh, ow, cout))
    for ky in range(kh):
        for kx in range(kw):
            window = padded[ky:ky + oh, kx:kx + ow, :]  # (oh, ow, C_in)
            sums += window @ w[ky, kx]  # every pixel's sum over C_in, each output channel
            magnitude += np.abs(window) @ np.abs(w[ky, kx])
    y = sums + b.astype(np.float64)
    if relu:
        y = np.maximum(y, 0.0)
    if pool:
        y = y.reshape(oh // 2, 2, ow // 2, 2, cout).max(axis=(1, 3))
        magnitude = magnitude.reshape(oh // 2, 2, ow // 2, 2, cout).max(axis=(1, 3))
    return y, magnitude


def cases():
    """(name, H, W, kh, kw, C_in, C_out, border, relu, pool, valid[, scales]):
    scales (weights, bias) multiply the random weights and bias."""
    yield "vgg-like 3x3 rgb->64 relu pool", 32, 30, 3, 3, 3, 64, "zero", True, True, False
    yield "1x1 5->7", 9, 11, 1, 1, 5, 7, "zero", False, False, False
    yield "5x5 odd channels 3->5", 17, 13, 5, 5, 3, 5, "zero", True, False, False
    yield "7x7 1->3 gray", 19, 23, 7, 7, 1, 3, "zero", False, False, False
    yield "7x7 larger than a side", 5, 12, 7, 7, 2, 3, "zero", False, False, False
    yield "2x2 even kernel", 12, 10, 2, 2, 3, 4, "zero", True, True, False
    yield "4x3 even and odd", 15, 14, 4, 3, 2, 6, "zero", False, False, False
    yield "3x3 valid", 16, 18, 3, 3, 4, 8, "valid", True, True, True
    yield "3x3 wide channels 67->33", 8, 8, 3, 3, 67, 33, "zero", True, True, False
    # C_in a multiple of 32 and C_out of 4: mma's pipelined kernel.
    yield "3x3 32->36 reflect101", 11, 13, 3, 3, 32, 36, "reflect101", True, False, False
    for border in ("replicate", "reflect101", "reflect", "wrap"):
        yield f"3x3 border {border}", 10, 12, 3, 3, 3, 5, border, False, False, False
    yield "5x5 border reflect101 pool", 12, 16, 5, 5, 2, 3, "reflect101", True, True, False
    # A bias far larger than the sums: added once, after them.
    yield "3x3 64->32 large bias", 9, 10, 3, 3, 64, 32, "zero", False, False, False, (1e-3, 1e4)
    # Sparse weights over a sparse input: outputs that are exactly zero
    # beside large ones, which only a sum of each output's own products
    # keeps zero.
    yield "3x3 sparse", 12, 12, 3, 3, 8, 16, "zero", True, False, False, "sparse"


def run_case(binary, variant, tf32, folder, case, rng):
    name, h, wd, kh, kw, cin, cout, border, relu, pool, valid, *extra = case
    x = rng.standard_normal((h, wd, cin)).astype(np.float32)
    w = rng.standard_normal((kh, kw, cin, cout)).astype(np.float32)
    b = rng.standard_normal(cout).astype(np.float32)
    if extra and extra[0] == "sparse":
        x *= (rng.random(x.shape) < 0.1) * np.float32(1e4)
        w *= rng.random(w.shape) < 0.2
        b[:] = 0
    elif extra:
        w *= np.float32(extra[0][0])
        b *= np.float32(extra[0][1])
    paths = {k: os.path.join(folder, k + ".npy") for k in ("x", "w", "b", "y")}
    np.save(paths["x"], x)
    np.save(paths["w"], w)
    np.save(paths["b"], b)
    command = [binary, paths["x"], "--weights", paths["w"], "--bias", paths["b"], "-k", variant,
               "-o", paths["y"], "--overwrite"]
    if relu:
        command += ["--activation", "relu"]
    if pool:
        command += ["--pool", "max2"]
    if border != "zero":
        command += ["--border", border]
    if tf32:
        command += ["--allow-tf32"]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        print(f"FAIL {variant}: {name}: exit {run.returncode}: {run.stderr.strip()}")
        return False
    got = np.load(paths["y"])
    expected, magnitude = apply_conv2d(x, w, b, border, relu, pool, valid)
    if got.shape != expected.shape or got.dtype != np.float32:
        print(f"FAIL {variant}: {name}: {got.dtype} {got.shape}, expected float32 "
              f"{expected.shape}")
        return False
    n = kh * kw * cin
    bound = (n + 2) * 2.0**-24 * magnitude + 2.0**-24 * np.abs(expected)
    if tf32:
        bound += 2.0**-10 * magnitude
    elif variant == "mma":
        bound += 12 * 2.0**-24 * magnitude
    error = np.abs(got.astype(np.float64) - expected)
    worst = np.unravel_index(np.argmax(error - bound), error.shape)
    if not np.all(error <= bound):
        print(f"FAIL {variant}: {name}: error {error[worst]:.3g} over its bound "
              f"{bound[worst]:.3g} at {tuple(int(i) for i in worst)}")
        return False
    print(f"ok   {variant}: {name}: max error {error.max():.3g} "
          f"({(error / np.maximum(bound, 1e-300)).max():.2f} of the bound)")
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cudaconv", required=True)
    parser.add_argument("--variants", default="cpu-ref,cpu")
    parser.add_argument("--allow-tf32", action="store_true")
    args = parser.parse_args()
    rng = np.random.default_rng(20261127)
    ok = True
    with tempfile.TemporaryDirectory() as folder:
        for variant, case in itertools.product(args.variants.split(","), cases()):
            ok &= run_case(args.cudaconv, variant, args.allow_tf32, folder, case, rng)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
