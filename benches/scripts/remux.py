#!/usr/bin/env python3
"""Remux benchmark: `mediaslice remux` against `ffmpeg -i IN -map 0 -c copy OUT`.

For every input file found in the bench folder (benches/make_files.sh) and
every target (Matroska, MP4, MP4 with moov first), both tools run in
alternation ROUNDS times, one fresh process each; the table gives the
median wall time, the ratio ffmpeg / mediaslice, the peak resident memory
(ru_maxrss of the child) and the output size. Outputs go to OUTDIR (same
file system for both tools) and are deleted after each run.

    benches/scripts/remux.py [--files DIR] [--rounds N] [--out docs/bench/remux.md]

Needs a release build (cargo build --release -p mediaslice-std) and ffmpeg.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INPUTS = ["hd1080.mp4", "hd1080.ts", "hd1080.mkv", "loop130k.mp4", "loop130k.mkv", "loop130k.ts", "loop130k.avi"]
TARGETS = [("mkv", "mkv", []), ("mp4", "mp4", []), ("mp4 faststart", "mp4", ["faststart"])]


def run(cmd):
    """Wall seconds and peak RSS (KiB) of one process; raises on failure.

    The peak comes from GNU time (`/usr/bin/time -f %M`), not from this
    process's wait4: a child forked from Python starts with Python's resident
    set, which its high-water mark keeps across exec."""
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        t0 = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss.name] + cmd,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wall = time.perf_counter() - t0
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)}: {p.stderr.decode(errors='replace').strip()[-300:]}")
        return wall, int(rss.read().split()[-1])


def commands(binary, src, out, flags):
    ours = [binary, "remux", src, out] + ["--" + f for f in flags]
    theirs = ["ffmpeg", "-v", "error", "-y", "-i", src, "-map", "0", "-c", "copy"]
    if "faststart" in flags:
        theirs += ["-movflags", "+faststart"]
    return ours, theirs + [out]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", default=os.environ.get("MEDIASLICE_BENCH_FILES", "/tmp/mediaslice-bench"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--note", default="", help="conditions of the run, printed under the header")
    ap.add_argument("--out", default=os.path.join(REPO, "docs/bench/remux.md"))
    ap.add_argument("--bin", default=os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(REPO, "target")), "release/mediaslice"))
    a = ap.parse_args()
    rows = []
    work = tempfile.mkdtemp(prefix="mediaslice-remux-", dir=os.environ.get("REMUX_BENCH_TMP", "/tmp"))
    for name in INPUTS:
        src = os.path.join(a.files, name)
        if not os.path.exists(src):
            print(f"remux.py: {src} missing (benches/make_files.sh), skipped", file=sys.stderr)
            continue
        for label, ext, flags in TARGETS:
            out = os.path.join(work, "out." + ext)
            ours_cmd, theirs_cmd = commands(a.bin, src, out, flags)
            samples = {"ours": [], "theirs": []}
            failed = None
            for _ in range(a.rounds):
                for who, cmd in (("ours", ours_cmd), ("theirs", theirs_cmd)):
                    try:
                        wall, rss = run(cmd)
                        size = os.path.getsize(out)
                        samples[who].append((wall, rss, size))
                    except RuntimeError as e:
                        failed = f"{who}: {e}"
                    finally:
                        if os.path.exists(out):
                            os.remove(out)
            if not samples["ours"]:
                rows.append((name, label, None, failed))
                print(f"{name} -> {label}: FAILED {failed}", file=sys.stderr)
                continue
            o = statistics.median(s[0] for s in samples["ours"])
            orss = max(s[1] for s in samples["ours"])
            osz = samples["ours"][0][2]
            if samples["theirs"]:
                t = statistics.median(s[0] for s in samples["theirs"])
                trss = max(s[1] for s in samples["theirs"])
                tsz = samples["theirs"][0][2]
            else:
                t = trss = tsz = None
            rows.append((name, label, (o, t, orss, trss, osz, tsz, os.path.getsize(src)), failed))
            print(f"{name} -> {label}: ours {o:.3f} s {orss} KiB, ffmpeg {t} s {trss} KiB {failed or ''}", file=sys.stderr)
    os.rmdir(work)
    commit = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    ff = subprocess.run(["ffmpeg", "-version"], capture_output=True, text=True).stdout.split("\n")[0]
    with open(a.out, "w") as f:
        f.write("# Remux: `mediaslice remux` against `ffmpeg -c copy`\n\n")
        f.write(f"Made by `benches/scripts/remux.py --rounds {a.rounds}` at commit `{commit}` on {os.cpu_count()} cores; {ff}.\n")
        f.write("Inputs from `benches/make_files.sh`; both tools write to the same file system; one fresh process a run, the two tools in alternation, ")
        f.write("wall time the median, peak resident memory (GNU time's `%M`) the largest of the runs.\n")
        if a.note:
            f.write(f"\n{a.note}\n")
        f.write("\n")
        f.write("| input | size | target | mediaslice | ffmpeg | ffmpeg / mediaslice | RSS mediaslice | RSS ffmpeg | output mediaslice / ffmpeg |\n")
        f.write("|---|---:|---|---:|---:|---:|---:|---:|---:|\n")
        notes = []
        for name, label, r, failed in rows:
            if r is None:
                f.write(f"| {name} | | {label} | failed | | | | | |\n")
                notes.append(f"{name} to {label}: mediaslice failed: {failed}")
                continue
            o, t, orss, trss, osz, tsz, isz = r
            if t is None:
                f.write(f"| {name} | {isz / 1e6:.0f} MB | {label} | {o:.3f} s | fails | | {orss / 1024:.1f} MiB | | {osz / 1e6:.1f} MB / - |\n")
                notes.append(f"{name} to {label}: ffmpeg fails: {failed.splitlines()[0] if failed else ''}")
                continue
            f.write(f"| {name} | {isz / 1e6:.0f} MB | {label} | {o:.3f} s | {t:.3f} s | {t / o:.2f}x | {orss / 1024:.1f} MiB | {trss / 1024:.1f} MiB | {osz / 1e6:.1f} / {tsz / 1e6:.1f} MB |\n")
        for n in notes:
            f.write(f"\n- {n}")
        f.write("\n")
    print(f"wrote {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
