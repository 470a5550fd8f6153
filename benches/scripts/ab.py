#!/usr/bin/env python3
"""Before/after of two `mediaslice` builds, whole process, alternating.

    benches/scripts/ab.py ROUNDS OLD_BIN NEW_BIN FILE...

Runs `BIN packets --summary FILE` for OLD and NEW in alternating order,
ROUNDS rounds after one warm-up round, and prints per file the median and
min-max wall time of each and their ratio, and whether both printed the same
summary (packets, bytes, CRC-32). Used for the before/after table of
docs/bench/README.md; build OLD from the earlier commit in a worktree of its
own (`git worktree add --detach ../old COMMIT`).
"""
import statistics
import subprocess
import sys
import time


def main():
    rounds, old, new = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    for f in sys.argv[4:]:
        times = {old: [], new: []}
        outs = set()
        for r in range(rounds + 1):
            order = (old, new) if r % 2 == 0 else (new, old)
            for exe in order:
                t = time.perf_counter()
                out = subprocess.run([exe, "packets", "--summary", f], capture_output=True, text=True).stdout
                dt = time.perf_counter() - t
                outs.add(out.strip())
                if r > 0:
                    times[exe].append(dt)
        a, b = times[old], times[new]
        ma, mb = statistics.median(a), statistics.median(b)
        print(
            f"{f.split('/')[-1]}\told {ma * 1000:.0f} ms [{min(a) * 1000:.0f}-{max(a) * 1000:.0f}]"
            f"\tnew {mb * 1000:.0f} ms [{min(b) * 1000:.0f}-{max(b) * 1000:.0f}]"
            f"\told/new {ma / mb:.2f}\tsame_output={len(outs) == 1}",
            flush=True,
        )


if __name__ == "__main__":
    main()
