#!/usr/bin/env python3
"""Whether two builds hold the same device code: for each kernels/**/*.cu
object of build A, the cubins and the PTX in its .nv_fatbin section against
those of the same object in build B, every ELF section byte for byte.

Runs HERE (no GPU, no cuobjdump needed; objcopy and zstd):

    scripts/gpu/same-device-code.py /path/to/old/build/dev build/dev

for a change that must leave the kernels alone (comments, host code).
Prints SAME or DIFFERENT (and which sections) per object; exits 1 if any
object differs or is missing from B."""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

FATBIN_MAGIC = 0xBA55ED50
KIND_PTX, KIND_CUBIN = 1, 2
ZSTD_MAGIC = b'\x28\xb5\x2f\xfd'
SHT_NOBITS = 8


def fatbin_of(obj):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, 'fatbin')
        subprocess.run(['objcopy', '-O', 'binary', '--only-section=.nv_fatbin', obj, out],
                       check=True)
        with open(out, 'rb') as f:
            return f.read()


def entries(fatbin):
    """(kind, payload) of every entry of every fatbin in the section."""
    off = 0
    while off + 16 <= len(fatbin):
        magic, _, header, size = struct.unpack_from('<IHHQ', fatbin, off)
        if magic != FATBIN_MAGIC:
            off += 8  # fatbins are 8-byte aligned
            continue
        p, end = off + header, off + header + size
        while p < end:
            kind, _, entry_header, padded = struct.unpack_from('<HHII', fatbin, p)
            payload, = struct.unpack_from('<I', fatbin, p + 0x10)  # compressed size, or 0
            yield kind, fatbin[p + entry_header:p + entry_header + (payload or padded)]
            p += entry_header + padded
        off = end


def normalise(blob):
    # Anonymous namespaces and internal symbols are named with a hash of the
    # source file's path, so one source built in two checkouts differs there;
    # their names also end in a hash of the file's text
    # (`_GLOBAL__N__<path hash>_20_fast_cu_<text hash>`), which a change to
    # host code alone moves. Both are masked, keeping every length.
    blob = re.sub(rb'(_GLOBAL__N__|_INTERNAL_)[0-9a-f]{8}_', rb'\1xxxxxxxx_', blob)
    return re.sub(rb'((?:_GLOBAL__N__|_INTERNAL_)xxxxxxxx_\d+_[A-Za-z0-9_]+?_cu_)[0-9a-f]{8}',
                  rb'\1xxxxxxxx', blob)


def ptx_text(payload):
    if payload[:4] == ZSTD_MAGIC:
        payload = subprocess.run(['zstd', '-dc'], input=payload, capture_output=True,
                                 check=True).stdout
    return normalise(payload.rstrip(b'\0'))


def sections(elf):
    """{name: bytes} of an ELF64 cubin."""
    shoff, = struct.unpack_from('<Q', elf, 0x28)
    entsize, count, names_index = struct.unpack_from('<HHH', elf, 0x3a)
    headers = [struct.unpack_from('<IIQQQQ', elf, shoff + i * entsize) for i in range(count)]
    names_at = headers[names_index][4]
    out = {}
    for name, kind, _, _, off, size in headers:
        text = elf[names_at + name:]
        out[text[:text.index(b'\0')].decode()] = b'' if kind == SHT_NOBITS else elf[off:off + size]
    return out


def compare(a, b):
    """The differences between two objects' device code, as lines."""
    ea, eb = list(entries(fatbin_of(a))), list(entries(fatbin_of(b)))
    cubins_a = [normalise(p) for k, p in ea if k == KIND_CUBIN]
    cubins_b = [normalise(p) for k, p in eb if k == KIND_CUBIN]
    if len(cubins_a) != len(cubins_b):
        return [f'{len(cubins_a)} cubins against {len(cubins_b)}'], 0
    problems, kernels = [], 0
    for ca, cb in zip(cubins_a, cubins_b):
        sa, sb = sections(ca), sections(cb)
        kernels += sum(name.startswith('.text.') for name in sa)
        problems += [f'section {n} only in one' for n in sorted(set(sa) ^ set(sb))]
        problems += [f'section {n} differs' for n in sorted(set(sa) & set(sb)) if sa[n] != sb[n]]
        if ca != cb and not problems:
            problems.append('cubin differs outside its sections')
    if [ptx_text(p) for k, p in ea if k == KIND_PTX] != [ptx_text(p) for k, p in eb if k == KIND_PTX]:
        problems.append('PTX differs')
    return problems, kernels


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    if shutil.which('zstd') is None:
        sys.exit('same-device-code: needs zstd for the compressed PTX (apt-get install zstd)')
    objects = 'CMakeFiles/cudaconv_kernels.dir/kernels'
    dir_a, dir_b = (os.path.join(d, objects) for d in sys.argv[1:])
    # Relative paths: the objects lie in kernels/'s rooms (fast/fast.cu.o).
    names = sorted(os.path.relpath(os.path.join(root, n), dir_a)
                   for root, _, files in os.walk(dir_a) for n in files if n.endswith('.cu.o'))
    if not names:
        sys.exit(f'same-device-code: no kernels/**/*.cu objects under {dir_a}')
    different = 0
    for name in names:
        b = os.path.join(dir_b, name)
        if not os.path.exists(b):
            print(f'MISSING    {name} (not in {dir_b})')
            different += 1
            continue
        problems, kernels = compare(os.path.join(dir_a, name), b)
        print(f'{"DIFFERENT" if problems else "SAME":10} {name} ({kernels} kernels)')
        for p in problems:
            print(f'    {p}')
        different += bool(problems)
    print(f'{len(names) - different} of {len(names)} objects hold the same device code')
    sys.exit(1 if different else 0)


if __name__ == '__main__':
    main()
