#!/usr/bin/env python3
"""Whole-process comparisons for issue 9, with an alternating harness.

    compare.py packets MEDIASLICE OUT.json FILE...   # packets vs ffmpeg -c copy, ffprobe -show_packets
    compare.py probe   MEDIASLICE OUT.json FILE...   # probe vs ffprobe -show_format -show_streams, mediainfo

Each round runs every command once, in a rotated order (so a burst of load
from another process on this shared machine hits each command alike), with
stdout to /dev/null. Per run it records the wall time (perf_counter around
fork+exec+wait) and the peak resident set (GNU time's %M; see run_once). Reports
the median, min and max of each, and writes every sample to OUT.json for
benches/report.py.

Options (environment): ROUNDS (default 5), WARMUP (default 1).
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import time


TIME = "/usr/bin/time" if os.path.exists("/usr/bin/time") else None
RSS_FILE = "/tmp/mediaslice-compare-rss.txt"


def run_once(argv):
    """Wall time and peak RSS of one run of argv.

    The peak resident set comes from GNU time (`-f %M`), not from this
    process's wait4: Python starts children with vfork, and Linux carries the
    parent's high-water mark into the child's ru_maxrss across exec, so every
    child would report at least Python's own ~15 MiB. GNU time's own image
    (about 1 MiB) is the floor instead; the wall time includes its fork and
    exec, the same for every command.
    """
    if TIME:
        argv = [TIME, "-f", "%M", "-o", RSS_FILE] + argv
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    t1 = time.perf_counter()
    err = p.stderr.read().decode(errors="replace") if p.stderr else ""
    p.stderr.close()
    p.returncode = os.waitstatus_to_exitcode(status)
    rss = ru.ru_maxrss
    if TIME:
        try:
            rss = int(open(RSS_FILE).read().split()[-1])
        except (OSError, ValueError, IndexError):
            pass
    return t1 - t0, rss, p.returncode, err


def commands(kind, ms, path):
    if kind == "packets":
        cmds = [
            ("mediaslice", [ms, "packets", "--summary", path]),
            ("mediaslice-pread", [ms, "--source", "pread", "packets", "--summary", path]),
        ]
        walk = os.environ.get("WALK_BIN")
        if walk:
            # The same demux in a process without the CLI (benches/src/bin/walk.rs):
            # headers only, and with the CRC the CLI's --summary computes.
            cmds += [("walk-headers", [walk, "headers", path]), ("walk-crc", [walk, "crc", path])]
        bare = os.environ.get("MMAPCRC_BIN")
        if bare:
            # The physical limit (benches/src/bin/mmapcrc.rs): the CLI's map,
            # page release and CRC over every byte, no demuxing.
            cmds.append(("bare-mmap-crc", [bare, path]))
        cmds += [
            ("ffmpeg-copy", ["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-map", "0", "-c", "copy", "-f", "null", "-"]),
            ("ffprobe-packets", ["ffprobe", "-v", "error", "-show_packets", path]),
        ]
    else:
        cmds = [
            ("mediaslice", [ms, "probe", path]),
            ("ffprobe", ["ffprobe", "-v", "error", "-show_format", "-show_streams", path]),
        ]
        if shutil.which("mediainfo"):
            cmds.append(("mediainfo", ["mediainfo", path]))
    return cmds


def summary(ms, path):
    out = subprocess.run([ms, "packets", "--summary", path], capture_output=True, text=True)
    try:
        return json.loads(out.stdout)
    except ValueError:
        return None


def main():
    if len(sys.argv) < 5 or sys.argv[1] not in ("packets", "probe"):
        sys.exit(__doc__)
    kind, ms, out_path, files = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    rounds = int(os.environ.get("ROUNDS", "5"))
    warmup = int(os.environ.get("WARMUP", "1"))
    results = []
    for path in files:
        cmds = commands(kind, ms, path)
        samples = {name: {"wall": [], "rss_kib": [], "failed": 0, "err": ""} for name, _ in cmds}
        for r in range(warmup + rounds):
            k = r % len(cmds)
            for name, argv in cmds[k:] + cmds[:k]:
                wall, rss, rc, err = run_once(argv)
                if r < warmup:
                    continue
                s = samples[name]
                s["wall"].append(wall)
                s["rss_kib"].append(rss)
                if rc != 0:
                    s["failed"] += 1
                    s["err"] = err.strip()[:200]
        entry = {
            "file": path,
            "bytes": os.path.getsize(path),
            "summary": summary(ms, path) if kind == "packets" else None,
            "commands": samples,
        }
        results.append(entry)
        line = [os.path.basename(path)]
        for name, s in samples.items():
            line.append(f"{name} {statistics.median(s['wall']) * 1e3:.1f} ms {statistics.median(s['rss_kib']) / 1024:.1f} MiB"
                        + (f" ({s['failed']} failed: {s['err']})" if s["failed"] else ""))
        print(" | ".join(line), flush=True)
    with open(out_path, "w") as f:
        json.dump({"kind": kind, "rounds": rounds, "warmup": warmup, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
