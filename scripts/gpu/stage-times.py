#!/usr/bin/env python3
"""Where a batch's time went, from its --json lines: the median and mean of
each stage's milliseconds over the images (timings_ms: decode, upload,
filter, download, png_rows, gpu_jpeg, encode, run = the GPU thread's time
on the image, total), which decoder and encoder took them, and the batch's
own images/s (its summary line, start-up left out); when the first, the
16th and the last image were done, from the batch's start; then the GPU
thread's time on all images but the first (which waits for start-up) and
its stalls: the images on which it took more than twice its median.

usage: stage-times.py BATCH.jsonl [LABEL]
"""
import collections
import json
import statistics
import sys

lines = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
label = sys.argv[2] if len(sys.argv) > 2 else sys.argv[1]
images = [line for line in lines if "timings_ms" in line]
summary = next((line for line in lines if line.get("summary")), {})
stages = collections.defaultdict(list)
for image in images:
    for stage, ms in image["timings_ms"].items():
        stages[stage].append(ms)
codecs = collections.Counter(f"{i.get('decoder')}/{i.get('encoder')}" for i in images)
print(f"{label}: {len(images)} images, {summary.get('images_per_s', 0):.1f} images/s inside the "
      f"batch; decoder/encoder {dict(codecs)}")
print("  " + "  ".join(f"{stage} {statistics.median(ms):.2f}/{statistics.mean(ms):.2f}"
                       for stage, ms in stages.items() if max(ms) > 0)
      + "  (ms, median/mean)")
in_order = sorted(images, key=lambda i: i["batch_ms"]["end"])
if in_order:
    ends = [i["batch_ms"]["end"] for i in in_order]
    print(f"  done, ms from the batch's start: the first image {ends[0]:.0f}, the "
          f"{min(16, len(ends))}th {ends[min(16, len(ends)) - 1]:.0f}, the last {ends[-1]:.0f}")
done = in_order[1:]
runs = [i["timings_ms"]["run"] for i in done]
if runs:
    median = statistics.median(runs)
    stalls = [ms for ms in runs if ms > 2 * median]
    print(f"  GPU thread: {sum(runs):.0f} ms on images 2..{len(images)}; {len(stalls)} stalls "
          f"(over twice its median {median:.2f} ms) took {sum(stalls):.0f} ms")
