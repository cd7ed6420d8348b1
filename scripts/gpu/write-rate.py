#!/usr/bin/env python3
"""The rate at which a batch's outputs can be written to the disk they went
to: the files of FOLDER read into memory, then written again beside them,
each as cudaconv writes one (a temporary file in the same folder, renamed
over its name, no fsync), on 1 and on THREADS threads. Prints images/s and
MB/s for each, so a batch's rate can be read against what the disk takes.

usage: write-rate.py FOLDER [THREADS=16]
"""
import concurrent.futures
import os
import sys
import tempfile
import time

folder = sys.argv[1]
threads = int(sys.argv[2]) if len(sys.argv) > 2 else 16
names = sorted(n for n in os.listdir(folder) if os.path.isfile(os.path.join(folder, n)))
files = [(name, open(os.path.join(folder, name), "rb").read()) for name in names]
total = sum(len(data) for _, data in files)
target = tempfile.mkdtemp(dir=os.path.dirname(os.path.abspath(folder)))


def clear():
    for name in os.listdir(target):
        os.remove(os.path.join(target, name))


def write(item):
    name, data = item
    fd, temp = tempfile.mkstemp(dir=target, prefix=".tmp-")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.rename(temp, os.path.join(target, name))


for count in (1, threads):
    clear()
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(count) as pool:
        list(pool.map(write, files))
    seconds = time.monotonic() - start
    print(f"  the same {len(files)} files ({total / 1e6:.0f} MB) written again, {count} "
          f"thread{'s' if count > 1 else ''}: {len(files) / seconds:.0f} images/s, "
          f"{total / 1e6 / seconds:.0f} MB/s")
clear()
os.rmdir(target)
