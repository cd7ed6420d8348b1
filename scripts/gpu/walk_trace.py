#!/usr/bin/env python3
"""Where the u8 walk's time goes, from one launch's trace.

Reads the file that a build with -DCUDACONV_WALK_TRACE=1 writes
(kernels/fast_registers_u8.cu: "band sm start first end" a band, times in
ns from the GPU's globaltimer) and prints: the launch's span; how long
warps live and when their first block's outputs are stored; the side
columns' warps (which patch their rows) against the others, and the first
wave against the later ones; how many warps are alive and how many end in
each half microsecond; and how unevenly the SMs finish. See
docs/GPU-TESTING.md for the build and the run.

    python3 scripts/gpu/walk_trace.py trace.txt
"""
import collections
import statistics
import sys


def quantile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main(path):
    down = None
    bands = []  # (band, sm, start, first, end), times in us from the first start
    with open(path) as lines:
        for line in lines:
            if line.startswith("#"):
                words = line.split()
                down = int(words[words.index("down") + 1])
                continue
            band, sm, start, first, end = map(int, line.split())
            bands.append((band, sm, start, first, end))
    if not bands or down is None:
        sys.exit(f"walk_trace: {path}: no trace (a header and a line a band)")
    t0 = min(b[2] for b in bands)
    bands = [(b, sm, (s - t0) / 1000, (f - t0) / 1000, (e - t0) / 1000) for b, sm, s, f, e in bands]
    span = max(b[4] for b in bands)
    lives = [e - s for _, _, s, _, e in bands]
    print(f"{len(bands)} warps; span (first start to last end) {span:.2f} us")
    print(f"life us: p10 {quantile(lives, .1):.2f}  median {statistics.median(lives):.2f}  "
          f"p90 {quantile(lives, .9):.2f}  max {max(lives):.2f}")
    ends = [b[4] for b in bands]
    print(f"last start {max(b[2] for b in bands):.2f} us; ends: median {statistics.median(ends):.2f}  "
          f"p90 {quantile(ends, .9):.2f}  p99 {quantile(ends, .99):.2f}")

    # The side columns' bands come first (2 down of them, fewer on images
    # one column wide); the first wave is every warp that started within
    # the first 2 us.
    groups = collections.defaultdict(list)
    for band, _, start, first, end in bands:
        side = band < 2 * down
        wave = "first wave" if start < 2 else "later"
        groups[("side column" if side else "inner") + ", " + wave].append((start, first, end))
    for name in sorted(groups):
        rows = groups[name]
        print(f"  {name:<24} {len(rows):6} warps: life {statistics.median(e - s for s, _, e in rows):5.2f}"
              f"  first block stored at {statistics.median(f - s for s, f, _ in rows):5.2f}"
              f"  second block {statistics.median(e - f for _, f, e in rows):5.2f} us (medians)")

    alive = collections.Counter()
    ended = collections.Counter()
    for _, _, start, _, end in bands:
        for k in range(int(start * 2), int(end * 2) + 1):
            alive[k] += 1
        ended[int(end * 2)] += 1
    print("alive/ended a half microsecond:")
    print(" ".join(f"{k / 2:.1f}:{alive[k]}/{ended[k]}" for k in range(int(span * 2) + 1)))

    per_sm = collections.defaultdict(list)
    for _, sm, _, _, end in bands:
        per_sm[sm].append(end)
    counts = [len(v) for v in per_sm.values()]
    last = [max(v) for v in per_sm.values()]
    print(f"{len(per_sm)} SMs: {min(counts)} to {max(counts)} bands each; "
          f"last end min {min(last):.2f}  median {statistics.median(last):.2f}  max {max(last):.2f} us")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
