#!/usr/bin/env python3
"""Attributes the code bytes of a firmware ELF to source files or lines.

Reads the DWARF line table (`arm-none-eabi-objdump --dwarf=decodedline`):
each row maps an address to the source line its instruction came from,
inlined code included, so the bytes up to the next row are that line's.
This is how docs/embedded.md found where the flash goes (for example 30 KB
on `core::result`, the `?` operator's moves of the error).

  embedded/attribute.py ELF [files|lines] [N]     # default: files, top 40
"""
import collections
import subprocess
import sys

if len(sys.argv) < 2:
    sys.exit(__doc__)
elf = sys.argv[1]
mode = sys.argv[2] if len(sys.argv) > 2 else "files"
top = int(sys.argv[3]) if len(sys.argv) > 3 else 40
dump = subprocess.run(
    ["arm-none-eabi-objdump", "--dwarf=decodedline", elf], capture_output=True, text=True, check=True
).stdout
rows = []
for line in dump.splitlines():
    f = line.split()
    if len(f) >= 3 and f[2].startswith("0x"):
        try:
            rows.append((int(f[2], 16), f[0], f[1]))
        except ValueError:
            pass
rows.sort()
per_file, per_line = collections.Counter(), collections.Counter()
for (addr, name, ln), (nxt, _, _) in zip(rows, rows[1:]):
    size = nxt - addr
    if 0 < size < 4096:  # larger gaps are between sequences, not code
        per_file[name] += size
        per_line[(name, ln)] += size
if mode == "files":
    for name, size in per_file.most_common(top):
        print(size, name)
else:
    for (name, ln), size in per_line.most_common(top):
        print(size, name, ln)
