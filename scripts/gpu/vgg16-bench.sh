#!/usr/bin/env bash
# Runs ON THE GPU MACHINE, from the repository root, with carry [".carry"]
# (scripts/gpu/build.sh): VGG16's 13 convolution layers (batch 1, float32,
# random weights; scripts/gpu/vgg16_layers.py) on cudaconv's cudnn variant,
# or each of KERNELS (e.g. KERNELS=cudnn,mma), against PyTorch's conv2d
# (cuDNN) in the same call. Per layer, the median
# of 50 timed runs after 5 of the whole layer (convolution, bias, ReLU and
# the block's pool), cudaconv's from --json, torch's by CUDA events; torch's
# conv2d alone beside it; FP32 (TF32 off on both sides), then TF32 allowed
# (--allow-tf32, and torch's default for convolutions). Then the whole
# stack as a shell loop over the layers, its output against torch's.
set -uo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar xzf .carry/binaries.tgz -C "$work" cudaconv
# CUDACONV: another binary in place of the one build.sh packed (an A/B).
[[ -n ${CUDACONV:-} ]] && cp "$CUDACONV" "$work/cudaconv"
for d in /opt/torch/.venv/lib/python3*/site-packages/nvidia/cudnn/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=$d:${LD_LIBRARY_PATH:-}
done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
c=$work/cudaconv
torch_python=${TORCH_PYTHON:-/opt/torch/.venv/bin/python}
python3 scripts/gpu/vgg16_layers.py make "$work"
"$torch_python" scripts/gpu/vgg16_layers.py torch "$work" >"$work/torch.json"
pools=(0 1 0 1 0 0 1 0 0 1 0 0 1)
# KERNELS: the variants to time, comma-separated, each against the same
# torch timing (KERNEL, one variant, is read too).
kernels=${KERNELS:-${KERNEL:-cudnn}}
for k in ${kernels//,/ }; do
  for mode in fp32 tf32; do
    extra=()
    [[ $mode == tf32 ]] && extra=(--allow-tf32)
    for i in $(seq 1 13); do
      pool=()
      [[ ${pools[$((i - 1))]} == 1 ]] && pool=(--pool max2)
      "$c" "$work/in$i.npy" --weights "$work/w$i.npy" --bias "$work/b$i.npy" --activation relu \
        "${pool[@]}" "${extra[@]}" -k "$k" --warmup 5 --repeat 50 -q --overwrite \
        -o "$work/out-$k-$mode$i.npy" --json "$work/$k-$mode-$i.json" || echo "$k: layer $i failed"
    done
  done
done
python3 - "$work" "$kernels" <<'PY'
import json, sys
import numpy as np
work, kernels = sys.argv[1], sys.argv[2].split(",")
torch = json.load(open(f"{work}/torch.json"))
pools = [0, 1, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1]

def within_bound(kernel, i, mode):
    """Layer i's output against float64 sums, within docs/SPEC.md's bound."""
    x = np.load(f"{work}/in{i}.npy").astype(np.float64)
    w = np.load(f"{work}/w{i}.npy").astype(np.float64)
    b = np.load(f"{work}/b{i}.npy").astype(np.float64)
    h, wd, cin = x.shape
    p = np.pad(x, ((1, 1), (1, 1), (0, 0)))
    sums, mag = np.zeros((h, wd, w.shape[3])), np.zeros((h, wd, w.shape[3]))
    for ky in range(3):
        for kx in range(3):
            win = p[ky:ky + h, kx:kx + wd]
            sums += win @ w[ky, kx]
            mag += np.abs(win) @ np.abs(w[ky, kx])
    y = np.maximum(sums + b, 0.0)
    if pools[i - 1]:
        y = y.reshape(h // 2, 2, wd // 2, 2, -1).max(axis=(1, 3))
        mag = mag.reshape(h // 2, 2, wd // 2, 2, -1).max(axis=(1, 3))
    # The mma variant's split TF32 products add 12 * 2^-24 (docs/SPEC.md).
    split = 12 if kernel == "mma" and mode == "fp32" else 0
    bound = (9 * cin + 2 + split) * 2.0**-24 * mag + 2.0**-24 * np.abs(y)
    if mode == "tf32":
        bound += 2.0**-10 * mag
    got = np.load(f"{work}/out-{kernel}-{mode}{i}.npy").astype(np.float64)
    err = np.abs(got - y)
    return f"{'ok' if np.all(err <= bound) else 'OVER'} {(err / bound).max():.2f}"

print(f"{torch['device']}, torch {torch['torch']}, cuDNN {torch['cudnn']}")
for kernel, mode in ((k, m) for k in kernels for m in ("fp32", "tf32")):
    print(f"\n{kernel}, {mode}: layer  cudaconv ms  torch layer ms  ratio  torch conv2d ms  "
          "error/bound  cudaconv path")
    ours_total = torch_total = 0.0
    worst = 0.0
    for i in range(1, 14):
        r = json.loads(open(f"{work}/{kernel}-{mode}-{i}.json").readline())
        ours = r["filter_runs"]["median_ms"]
        t = torch[mode][i - 1]
        ratio = ours / t["layer_ms"]
        worst = max(worst, ratio)
        ours_total += ours
        torch_total += t["layer_ms"]
        print(f"  {i:2d} {r['filter']['spec']:>34}  {ours:8.4f}  {t['layer_ms']:8.4f}  "
              f"{ratio:5.2f}  {t['conv_ms']:8.4f}  {within_bound(kernel, i, mode)}  {r['path']}")
    print(f"  total  cudaconv {ours_total:.3f} ms, torch {torch_total:.3f} ms: "
          f"{ours_total / torch_total:.3f}x (worst layer {worst:.2f}x)")
PY
# The whole stack as a user would run it: each layer's output the next's input.
for k in ${kernels//,/ }; do
  x=$work/stack-in.npy
  start=$(date +%s.%N)
  for i in $(seq 1 13); do
    pool=()
    [[ ${pools[$((i - 1))]} == 1 ]] && pool=(--pool max2)
    "$c" "$x" --weights "$work/w$i.npy" --bias "$work/b$i.npy" --activation relu "${pool[@]}" \
      -k "$k" -q --overwrite -o "$work/stack$i.npy" || echo "$k: stack layer $i failed"
    x=$work/stack$i.npy
  done
  echo "$k stack: 13 commands in $(python3 -c "print(f'{$(date +%s.%N) - $start:.2f}')") s"
  python3 - "$work" <<'PY'
import sys
import numpy as np
work = sys.argv[1]
ours, torch = np.load(f"{work}/stack13.npy"), np.load(f"{work}/torch-stack.npy")
err = np.abs(ours.astype(np.float64) - torch)
print(f"stack output {ours.shape}: max |cudaconv - torch| {err.max():.3g}, "
      f"relative to max |torch| {err.max() / np.abs(torch).max():.3g}")
PY
done
