#!/usr/bin/env python3
# The batch benchmarks' inputs (batch-bench.sh, batch-ab.sh): COUNT distinct
# 4000x3000 JPEGs made from one photo (shifted, brightened, and cropped and
# scaled back differently each, so that no two decode or compress alike),
# and a dense 31x31 filter file (seeded, positive, sum 1).
#   make-batch-inputs.py WORK COUNT PROCESSES SOURCE_JPEG
# writes WORK/in/img000.jpg ... and WORK/dense31.txt.
import os
import sys
from multiprocessing import Pool

import cv2
import numpy as np

work, count, processes, source = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
os.makedirs(f"{work}/in", exist_ok=True)
base = cv2.imread(source, cv2.IMREAD_COLOR)
assert base is not None and base.shape[:2] == (3000, 4000), base.shape


def make(i):
    img = np.roll(base, (i * 7) % 3000, axis=0)  # shift
    img = np.roll(img, (i * 13) % 4000, axis=1)
    img = cv2.convertScaleAbs(img, alpha=1.0, beta=(i % 21) - 10)  # brightness
    k = i % 5  # crop a margin, scale back
    if k:
        img = cv2.resize(img[k * 8:3000 - k * 8, k * 10:4000 - k * 10], (4000, 3000),
                         interpolation=cv2.INTER_LINEAR)
    cv2.imwrite(f"{work}/in/img{i:03d}.jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 92])


with Pool(processes) as p:
    p.map(make, range(count))
rng = np.random.default_rng(31)
taps = rng.random((31, 31))
taps /= taps.sum()
with open(f"{work}/dense31.txt", "w") as f:
    f.write("# 31x31 dense, seeded, positive, sum 1 (make-batch-inputs.py)\n")
    for row in taps:
        f.write(" ".join(f"{v:.9g}" for v in row) + "\n")
