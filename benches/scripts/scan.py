#!/usr/bin/env python3
"""Scanning a media library: files per second and peak memory of
`mediaslice probe --json-lines` beside ffprobe in a loop, `xargs -P` over
ffprobe, MediaInfo on the directory and `exiftool -r -json`; and over HTTP
(nginx on 127.0.0.1), requests and bytes the server sent per file.

The library is built in a temporary directory from the bundled corpus and,
when present, ../shared/samples (their media files, not expected/ or
fuzz/), hard-linked again and again under copyN/ folders until it holds
--files files, so every tool reads the same bytes. The page cache is warmed
first (every file read once), so the figures are the tools' own cost, not
the disk's. Each tool runs under GNU time (`%M`: the largest resident set of any
one process of the run, in KiB); wall time is measured around it.

Writes docs/bench/scan.md (or --out). Needs ffmpeg, mediainfo,
libimage-exiftool-perl, nginx-light and a release build:

    benches/scripts/scan.sh                  # everything (about ten minutes)
    benches/scripts/scan.py --files 500 --loop-files 100 --urls 50 --out /tmp/scan.md
"""

import argparse
import datetime
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
SAMPLES = os.path.abspath(os.path.join(REPO, "..", "shared", "samples"))
SKIP_SAMPLE_DIRS = {"expected", "fuzz", "other"}
TIME = "/usr/bin/time"


def bench_io():
    """benches/scripts/io.py, for its nginx runner and version lines (its
    name would shadow the standard `io` module if imported as such)."""
    spec = importlib.util.spec_from_file_location("bench_io", os.path.join(HERE, "io.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def media_files():
    """The bundled corpus files and, when present, the samples' media files."""
    out = []
    roots = [os.path.join(REPO, "corpus", "files")]
    if os.path.isdir(SAMPLES):
        roots.append(SAMPLES)
    for root in roots:
        for d, dirs, files in os.walk(root):
            dirs[:] = sorted(x for x in dirs if not (d == SAMPLES and x in SKIP_SAMPLE_DIRS))
            for f in sorted(files):
                if d == SAMPLES:
                    continue  # MANIFEST.tsv, README and the like
                out.append(os.path.join(d, f))
    return out


def build_library(tmp, want):
    src = media_files()
    lib = os.path.join(tmp, "library")
    n = copy = 0
    while n < want:
        for f in src:
            if n >= want:
                break
            rel = os.path.relpath(f, os.path.dirname(os.path.dirname(f)))
            dst = os.path.join(lib, f"copy{copy:03}", rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            try:
                os.link(f, dst)
            except OSError:
                shutil.copyfile(f, dst)
            n += 1
        copy += 1
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(lib) for f in fs)
    return lib, files, src


def warm(files):
    for f in files:
        with open(f, "rb") as h:
            while h.read(1 << 20):
                pass


def timed(cmd, stdin=None, shell=False):
    """Wall seconds (measured here: GNU time's `%e` has 10 ms steps),
    peak RSS (KiB) of the largest process, stdout, rc."""
    r, w = os.pipe()
    full = [TIME, "-f", "%e %M", "-o", f"/dev/fd/{w}"]
    full += ["sh", "-c", cmd] if shell else cmd
    p = subprocess.Popen(full, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, pass_fds=(w,))
    os.close(w)
    t0 = time.monotonic()
    out, _ = p.communicate(stdin)
    wall = time.monotonic() - t0
    with os.fdopen(r) as f:
        rss = f.read().split()[-1]
    return wall, int(rss), out, p.returncode


def ours_errors(out):
    lines = out.decode().splitlines()
    return len(lines), sum(1 for l in lines if '"error"' in l and json.loads(l).get("error"))


def run_files(ours, lib, files, loop_files, jobs):
    res = []
    listing = "".join(f + "\n" for f in files).encode()
    for j in (1, jobs):
        wall, rss, out, _ = timed([ours, "probe", "--json-lines", "-r", "-j", str(j), lib])
        n, err = ours_errors(out)
        res.append({"tool": f"mediaslice probe --json-lines -r -j {j}", "files": n, "wall": wall, "rss": rss,
                    "failed": err})
    sub = files[:loop_files]
    loop = ("while IFS= read -r f; do ffprobe -v error -of json -show_format -show_streams \"$f\" "
            ">/dev/null 2>&1 || echo x; done")
    wall, rss, out, _ = timed(loop, stdin="".join(f + "\n" for f in sub).encode(), shell=True)
    res.append({"tool": "ffprobe in a shell loop", "files": len(sub), "wall": wall, "rss": rss,
                "failed": out.count(b"x\n")})
    xa = (f"xargs -d '\\n' -n 1 -P {jobs} sh -c 'ffprobe -v error -of json -show_format -show_streams \"$0\" "
          ">/dev/null 2>&1 || echo x'")
    wall, rss, out, _ = timed(xa, stdin=listing, shell=True)
    res.append({"tool": f"xargs -P {jobs} ffprobe", "files": len(files), "wall": wall, "rss": rss,
                "failed": out.count(b"x\n")})
    wall, rss, out, _ = timed(["mediainfo", "--Output=JSON", lib])
    try:
        media = json.loads(out)
        n = len(media) if isinstance(media, list) else 1
    except ValueError:
        n = 0
    res.append({"tool": "mediainfo --Output=JSON DIR", "files": len(files), "wall": wall, "rss": rss,
                "failed": len(files) - n})
    wall, rss, out, _ = timed(["exiftool", "-r", "-json", "-q", "-q", lib])
    try:
        n = sum(1 for e in json.loads(out) if not e.get("Error"))
    except ValueError:
        n = 0
    res.append({"tool": "exiftool -r -json DIR", "files": len(files), "wall": wall, "rss": rss,
                "failed": len(files) - n})
    return res


def run_http(ours, bio, tmp, files, jobs):
    ng = bio.Nginx(tmp)
    try:
        res = []
        for tool in ("ours", "ffprobe", "mediainfo"):
            prefix, _ = ng.url(files[0])
            urls = [f"http://127.0.0.1:{ng.port}{prefix}{bio.urllib.parse.quote(os.path.realpath(f))}" for f in files]
            listing = "".join(u + "\n" for u in urls).encode()
            if tool == "ours":
                name = f"mediaslice probe --json-lines - -j {jobs}"
                wall, rss, out, _ = timed([ours, "probe", "--json-lines", "-", "-j", str(jobs)], stdin=listing)
                failed = ours_errors(out)[1]
            else:
                cmd = ("ffprobe -v error -of json -show_format -show_streams" if tool == "ffprobe"
                       else "mediainfo --Output=JSON")
                name = f"xargs -P {jobs} {cmd.split()[0]}"
                xa = f"xargs -d '\\n' -n 1 -P {jobs} sh -c '{cmd} \"$0\" >/dev/null 2>&1 || echo x'"
                wall, rss, out, _ = timed(xa, stdin=listing, shell=True)
                failed = out.count(b"x\n")
            lines = ng.lines(prefix)
            per = {}
            for x in lines:
                path = x[0][len(prefix):]
                req, sent = per.get(path, (0, 0))
                per[path] = (req + 1, sent + (int(x[2]) if len(x) > 2 and x[2].isdigit() else 0))
            reqs = [per.get(bio.urllib.parse.quote(os.path.realpath(f)), (0, 0)) for f in files]
            res.append({
                "tool": name, "files": len(files), "wall": wall, "rss": rss, "failed": failed,
                "requests": sum(r for r, _ in reqs) / len(files),
                "sent_mean": sum(s for _, s in reqs) / len(files),
                "sent_median": statistics.median(s for _, s in reqs),
            })
        return res
    finally:
        ng.stop()


NOTES = """## Reading it

* Each line of `mediaslice probe --json-lines` is what `probe --json` prints
  for the file (the same `streams` and `format` fields as ffprobe's
  `-show_format -show_streams`, `std-adapter/tests/cli_batch.rs` checks
  it), so the comparison with ffprobe is like for like. MediaInfo and
  ExifTool state other facts, fewer for ExifTool.
* *failed*: the files no tool reads are fragment-only segments without a
  `moov` (`.m4s`), an AC-4 stream, MP3 samples whose first frame ffprobe
  also refuses, and non-media files of the samples; the error line of each
  says why (`error.code`). MediaInfo lists every file it is given, read or
  not, so its 0 does not say that it read them.
* Peak RSS: MediaInfo on a directory keeps every file's report until the
  end, so its memory grows with the library; ExifTool's and ours does not
  (ours: at most 8 inputs per job in flight, `docs/cli.md`).
* Over HTTP, ffprobe and MediaInfo ask for open-ended ranges: fewer
  requests, but the server pushes what fits in the socket buffers before
  they close. Our probe asks for the ranges it reads; its mean per file is
  pulled up by the larger files, where the probe reads the first packets of
  each track to state frame rates and start times as ffprobe does (at most
  2,000 packets, `ffprobe::gather::PROBE_PACKET_LIMIT`), payload
  included. On a raw elementary stream (`.264`, `.hevc`) packets are found
  by scanning the bytes, so a short one is read through: a 3.2 MB
  `.264` sample costs 6.4 MB in 85 reads, its packets for the rates and
  then its duration. A probe that skips payloads is not built yet.
"""


def fmt_bytes(b):
    return f"{b / 1024:.1f} KiB" if b < 1 << 20 else f"{b / (1 << 20):.2f} MiB"


def write_doc(out_path, args, lib_files, sources, file_res, http_res, http_files, versions):
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    L = ["# Scanning a library: files per second and memory\n"]
    L.append(f"Measured {now} on {os.cpu_count()} cores, commit {versions['commit']}, with "
             f"`benches/scripts/scan.py --files {args.files} --loop-files {args.loop_files} --urls {args.urls} "
             f"--jobs {args.jobs}` (`benches/scripts/scan.sh` builds first). {versions['ffprobe']}; "
             f"{versions['mediainfo']}; {versions['exiftool']}; {versions['nginx']}.\n")
    total = sum(os.path.getsize(f) for f in lib_files)
    L.append(f"The library: {len(lib_files)} files, {fmt_bytes(total)}, hard links of {len(sources)} media files "
             "(the bundled corpus and the samples' media files) under `copyNNN/` folders; page cache warm. "
             "*files/s* is files over wall seconds; *peak RSS* is GNU time's `%M`, the largest resident set "
             "of any one process of the run (for `xargs -P N` up to N such processes live at once); "
             "*failed* counts files the tool reported an error for (for MediaInfo, files missing from its "
             "output; for ExifTool, entries with `Error`). ffprobe in a loop runs over the first "
             f"{args.loop_files} files only, its rate is per file all the same.\n")
    base = file_res[1]["files"] / file_res[1]["wall"] if file_res[1]["wall"] else 0
    L.append("| tool | files | wall s | files/s | mediaslice -j N is | peak RSS | failed |")
    L.append("|---|---:|---:|---:|---:|---:|---:|")
    for r in file_res:
        rate = r["files"] / r["wall"] if r["wall"] else float("inf")
        ratio = f"{base / rate:.1f}× faster" if rate and r is not file_res[1] else ""
        L.append(f"| {r['tool']} | {r['files']} | {r['wall']:.3f} | {rate:,.0f} | {ratio} | "
                 f"{r['rss'] / 1024:.1f} MiB | {r['failed']} |")
    L.append("")
    if http_res:
        L.append(f"## Over HTTP (nginx on 127.0.0.1)\n")
        L.append(f"{http_files} URLs (the first media file of each family, then the rest of the list, "
                 "the same for each tool); *requests* and *sent* per file come from nginx's access log "
                 "(`$body_bytes_sent`, so bytes the server pushed into a socket that the client then closed "
                 "count too).\n")
        L.append("| tool | files/s | requests / file | sent / file (mean) | sent / file (median) | peak RSS | failed |")
        L.append("|---|---:|---:|---:|---:|---:|---:|")
        for r in http_res:
            rate = r["files"] / r["wall"] if r["wall"] else float("inf")
            L.append(f"| {r['tool']} | {rate:,.0f} | {r['requests']:.1f} | {fmt_bytes(r['sent_mean'])} | "
                     f"{fmt_bytes(r['sent_median'])} | {r['rss'] / 1024:.1f} MiB | {r['failed']} |")
        L.append("")
    L.append(NOTES)
    with open(out_path, "w") as f:
        f.write("\n".join(L))


def pick_urls(sources, n):
    """One file per family folder first, then the rest, up to n."""
    first, rest, seen = [], [], set()
    for f in sources:
        fam = os.path.basename(os.path.dirname(f))
        (rest if fam in seen else first).append(f)
        seen.add(fam)
    return (first + rest)[:n]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=4000)
    ap.add_argument("--loop-files", type=int, default=500)
    ap.add_argument("--urls", type=int, default=300)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--no-http", action="store_true")
    ap.add_argument("--out", default=os.path.join(REPO, "docs", "bench", "scan.md"))
    args = ap.parse_args()
    ours = os.path.join(REPO, "target", "release", "mediaslice")
    for t in [ours, TIME, "ffprobe", "mediainfo", "exiftool"] + ([] if args.no_http else ["nginx"]):
        if not shutil.which(t):
            sys.exit(f"scan.py: {t} is missing (cargo build --release; apt-get install time ffmpeg mediainfo "
                     "libimage-exiftool-perl nginx-light)")
    bio = bench_io()
    if not os.path.isdir(SAMPLES):
        print(f"scan.py: {SAMPLES} is absent: the library is built from the bundled corpus alone")
    with tempfile.TemporaryDirectory(prefix="mediaslice-scan-", dir=os.path.join(REPO, "target")) as tmp:
        lib, files, sources = build_library(tmp, args.files)
        warm(files)
        file_res = run_files(ours, lib, files, args.loop_files, args.jobs)
        for r in file_res:
            print(json.dumps(r))
        http_res, urls = [], []
        if not args.no_http:
            urls = pick_urls(sources, args.urls)
            http_res = run_http(ours, bio, tmp, urls, max(args.jobs, 8))
            for r in http_res:
                print(json.dumps(r))
        versions = bio.versions()
        versions["commit"] = bio.git_commit()
        write_doc(args.out, args, files, sources, file_res, http_res, len(urls), versions)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
