#!/usr/bin/env python3
"""VGG16's 13 convolution layers with random weights, as cudaconv and
PyTorch each take them, for scripts/gpu/vgg16-bench.sh.

    vgg16_layers.py make FOLDER     w{i}.npy (HWIO), b{i}.npy, in{i}.npy (each
                                    layer's own random input) and stack-in.npy
    vgg16_layers.py torch FOLDER    (the torch environment's python) each
                                    layer's median time by CUDA events and the
                                    whole stack's output, torch-stack.npy

Layers are (side, C_in, C_out, pool after): batch 1, float32, padding 1,
bias, ReLU, and a 2x2 max pool closing each of the five blocks.
"""
import json
import sys

import numpy as np

LAYERS = [(224, 3, 64, False), (224, 64, 64, True), (112, 64, 128, False),
          (112, 128, 128, True), (56, 128, 256, False), (56, 256, 256, False),
          (56, 256, 256, True), (28, 256, 512, False), (28, 512, 512, False),
          (28, 512, 512, True), (14, 512, 512, False), (14, 512, 512, False),
          (14, 512, 512, True)]


def make(folder):
    rng = np.random.default_rng(16)
    for i, (side, cin, cout, _) in enumerate(LAYERS, 1):
        # He initialisation keeps the activations' scale through the stack.
        w = rng.standard_normal((3, 3, cin, cout)) * np.sqrt(2.0 / (9 * cin))
        np.save(f"{folder}/w{i}.npy", w.astype(np.float32))
        np.save(f"{folder}/b{i}.npy", (0.01 * rng.standard_normal(cout)).astype(np.float32))
        np.save(f"{folder}/in{i}.npy", rng.random((side, side, cin), dtype=np.float32))
    np.save(f"{folder}/stack-in.npy", rng.random((224, 224, 3), dtype=np.float32))


def timed(fn, rounds=10, calls=20, warmup=5):
    """The device's time a call: the median over `rounds` of `calls` calls
    queued back to back between two events, so that the queue never runs
    dry waiting for Python (cudaconv's own times are the device's alone)."""
    import torch
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(rounds):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / calls)
    return float(np.median(times))


def torch_run(folder):
    import torch
    import torch.nn.functional as F
    torch.backends.cudnn.benchmark = True  # the fastest algorithm, as cudaconv times its own
    dev = torch.device("cuda")
    weights, biases, inputs = [], [], []
    for i in range(1, len(LAYERS) + 1):
        w = np.load(f"{folder}/w{i}.npy")  # HWIO -> OIHW
        weights.append(torch.from_numpy(w.transpose(3, 2, 0, 1).copy()).to(dev))
        biases.append(torch.from_numpy(np.load(f"{folder}/b{i}.npy")).to(dev))
        x = np.load(f"{folder}/in{i}.npy")  # HWC -> NCHW
        inputs.append(torch.from_numpy(x.transpose(2, 0, 1)[None].copy()).to(dev))
    result = {}
    for mode, tf32 in (("fp32", False), ("tf32", True)):
        torch.backends.cudnn.allow_tf32 = tf32
        layers = []
        for (side, cin, cout, pool), w, b, x in zip(LAYERS, weights, biases, inputs):
            def layer(x=x, w=w, b=b, pool=pool):
                y = F.relu(F.conv2d(x, w, b, padding=1))
                return F.max_pool2d(y, 2) if pool else y
            conv = timed(lambda x=x, w=w, b=b: F.conv2d(x, w, b, padding=1))
            layers.append({"conv_ms": conv, "layer_ms": timed(layer)})
        result[mode] = layers
    torch.backends.cudnn.allow_tf32 = False
    with torch.no_grad():
        x = np.load(f"{folder}/stack-in.npy")
        y = torch.from_numpy(x.transpose(2, 0, 1)[None].copy()).to(dev)
        for (_, _, _, pool), w, b in zip(LAYERS, weights, biases):
            y = F.relu(F.conv2d(y, w, b, padding=1))
            if pool:
                y = F.max_pool2d(y, 2)
        np.save(f"{folder}/torch-stack.npy", y[0].permute(1, 2, 0).contiguous().cpu().numpy())
    result["device"] = torch.cuda.get_device_name()
    result["torch"] = torch.__version__
    result["cudnn"] = torch.backends.cudnn.version()
    print(json.dumps(result))


if __name__ == "__main__":
    {"make": make, "torch": torch_run}[sys.argv[1]](sys.argv[2])
