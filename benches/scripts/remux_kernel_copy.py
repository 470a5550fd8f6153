#!/usr/bin/env python3
"""Kernel copy benchmark (issue 18): `mediaslice remux` with the payload
handed to the kernel (`--kernel-copy`: `copy_file_range`), without it
(the default), with a 4 KiB least length
(`--kernel-copy` and `MEDIASLICE_KERNEL_COPY_MIN=4096`), and the first two with `fsync` made a
no-op by `eatmydata` (to separate the cost of the durability steps, which
ffmpeg does not take), against `ffmpeg -i IN -map 0 -c copy OUT`.

Every variant runs once per round, in alternation, ROUNDS rounds; one fresh
process a run under GNU time (`%e %U %S %M`); the table gives the median
wall, user and system times and the largest peak RSS. Outputs go to one
folder on the inputs' file system and are removed after each run.

    benches/scripts/remux_kernel_copy.py [--files DIR] [--rounds 5] [--bin PATH]

Needs a release build, ffmpeg, eatmydata (apt-get install eatmydata) and
the inputs of benches/make_files.sh. Prints a Markdown table on stdout.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CASES = [
    ("hd1080.mp4", "mkv", []),
    ("hd1080.mkv", "mp4", []),
    ("hd1080.ts", "mkv", []),
    ("hd1080.mp4", "mp4", ["--faststart"]),
    ("loop130k.mp4", "mkv", []),
]
# (label, prefix, extra flags, extra environment); None flags: ffmpeg.
VARIANTS = [
    ("ffmpeg", [], None, {}),
    ("kernel copy", [], ["--kernel-copy"], {}),
    ("no kernel copy", [], [], {}),
    ("kernel copy from 4 KiB", [], ["--kernel-copy"], {"MEDIASLICE_KERNEL_COPY_MIN": "4096"}),
    ("kernel copy, no fsync", ["eatmydata"], ["--kernel-copy"], {}),
    ("no kernel copy, no fsync", ["eatmydata"], [], {}),
]


def run(cmd, env):
    """(wall, user, sys, peak RSS KiB) of one process from GNU time."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as t:
        p = subprocess.run(["/usr/bin/time", "-f", "%e %U %S %M", "-o", t.name] + cmd,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)}: {p.stderr.decode(errors='replace').strip()[-300:]}")
        wall, user, sys_, rss = t.read().split()[-4:]
        return float(wall), float(user), float(sys_), int(rss)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", default=os.environ.get("MEDIASLICE_BENCH_FILES", "/tmp/mediaslice-bench"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--bin", default=os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(REPO, "target")), "release/mediaslice"))
    a = ap.parse_args()
    if not shutil.which("eatmydata"):
        sys.exit("remux_kernel_copy.py: eatmydata missing (apt-get install eatmydata)")
    work = tempfile.mkdtemp(prefix="mediaslice-kcopy-", dir=a.files)
    print("| input → target | variant | wall | user | sys | peak RSS | ffmpeg wall / this |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for name, ext, flags in CASES:
        src = os.path.join(a.files, name)
        if not os.path.exists(src):
            print(f"remux_kernel_copy.py: {src} missing (benches/make_files.sh), skipped", file=sys.stderr)
            continue
        out = os.path.join(work, "out." + ext)
        samples = {v[0]: [] for v in VARIANTS}
        for _ in range(a.rounds):
            for label, prefix, extra, env in VARIANTS:
                if extra is None:
                    cmd = ["ffmpeg", "-v", "error", "-y", "-i", src, "-map", "0", "-c", "copy"]
                    if "--faststart" in flags:
                        cmd += ["-movflags", "+faststart"]
                    cmd += [out]
                else:
                    cmd = prefix + [a.bin, "remux", src, out] + flags + extra
                try:
                    samples[label].append(run(cmd, {**os.environ, **env}))
                finally:
                    if os.path.exists(out):
                        os.remove(out)
        ff = statistics.median(s[0] for s in samples["ffmpeg"])
        target = ext + (" faststart" if flags else "")
        for label, *_ in VARIANTS:
            s = samples[label]
            wall = statistics.median(x[0] for x in s)
            user = statistics.median(x[1] for x in s)
            sys_ = statistics.median(x[2] for x in s)
            rss = max(x[3] for x in s)
            print(f"| {name} → {target} | {label} | {wall:.2f} s | {user:.2f} s | {sys_:.2f} s | {rss / 1024:.1f} MiB | {ff / wall:.2f}x |", flush=True)
    os.rmdir(work)


if __name__ == "__main__":
    main()
