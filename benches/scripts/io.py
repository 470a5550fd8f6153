#!/usr/bin/env python3
"""Bytes and reads a probe costs: mediaslice vs ffprobe, MediaInfo, ExifTool.

For every file of corpus/files/<family>/ and ../shared/samples/<family>/:

* on files: each tool runs under
      strace -f -qq -yy -e trace=read,pread64,readv,preadv,preadv2
  and only the calls on a descriptor of that file count (strace's -yy
  prints the path beside each descriptor); `bytes` is what those calls
  returned, `reads` how many there were. Our own figure is also what the
  source counted (`mediaslice io --json`, positioned reads), and the two
  must agree.
* over HTTP: nginx on 127.0.0.1 serves the files (each run gets its own URL
  prefix, so its requests are told apart in the access log). For each tool:
  requests and body bytes nginx sent ($body_bytes_sent, counted when a
  request ends, so bytes pushed into socket buffers and never read count
  too) and, for ffprobe and MediaInfo, the bytes they received on the
  socket (strace, recvfrom/read on the connection to the server). Ours
  counts its own requests and body bytes. ExifTool has no HTTP client.

The probes: `mediaslice io FILE` (open: detection, headers, tracks,
duration; then every tag), `ffprobe -v error -show_format -show_streams`,
`mediainfo FILE`, `exiftool FILE`.

Writes docs/bench/io.md (tables, the command, the date, the commit) and a
JSON of every measurement beside it in /tmp. Needs strace, ffprobe,
mediainfo, exiftool and nginx (apt-get install strace ffmpeg mediainfo
libimage-exiftool-perl nginx-light) and a release build of mediaslice.

    benches/scripts/io.sh                    # everything (a few minutes)
    benches/scripts/io.py --no-http --limit 5 # quick look
"""

import argparse
import datetime
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SAMPLES = os.path.abspath(os.path.join(REPO, "..", "shared", "samples"))
SKIP_SAMPLE_DIRS = {"expected", "fuzz", "other"}
TOOLS = ["ours", "ffprobe", "mediainfo", "exiftool"]
HTTP_TOOLS = ["ours", "ffprobe", "mediainfo"]
TIMEOUT = 120

READ_CALLS = "read,pread64,readv,preadv,preadv2"
NET_CALLS = "read,recvfrom,recvmsg,readv"

# `PID  call(FD<annotation>, ...) = N` and the unfinished/resumed halves.
CALL = re.compile(r"^(\d+)\s+(\w+)\((\d+)<(.*?)>,.*\)\s+=\s+(-?\d+)")
UNFINISHED = re.compile(r"^(\d+)\s+(\w+)\((\d+)<(.*?)>,.*<unfinished \.\.\.>$")
RESUMED = re.compile(r"^(\d+)\s+<\.\.\. (\w+) resumed>.*\)\s+=\s+(-?\d+)")


def strace_count(log, match):
    """Bytes and calls in an strace -f -yy log on descriptors whose
    annotation satisfies `match`."""
    total = calls = 0
    pending = {}
    with open(log, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = CALL.match(line)
            if m:
                if match(m.group(4)):
                    n = int(m.group(5))
                    calls += 1
                    total += max(n, 0)
                continue
            m = UNFINISHED.match(line)
            if m:
                pending[(m.group(1), m.group(2))] = match(m.group(4))
                continue
            m = RESUMED.match(line)
            if m and pending.pop((m.group(1), m.group(2)), False):
                n = int(m.group(3))
                calls += 1
                total += max(n, 0)
    return total, calls


def tool_cmd(tool, target, ours):
    if tool == "ours":
        return [ours, "io", "--json", target]
    if tool == "ffprobe":
        return ["ffprobe", "-v", "error", "-show_format", "-show_streams", target]
    if tool == "mediainfo":
        return ["mediainfo", target]
    if tool == "exiftool":
        return ["exiftool", target]
    raise ValueError(tool)


def run_strace(cmd, calls, tmp):
    log = os.path.join(tmp, "strace.log")
    full = ["strace", "-f", "-qq", "-yy", "-e", "trace=" + calls, "-e", "signal=none", "-o", log] + cmd
    try:
        p = subprocess.run(full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT)
        rc, out = p.returncode, p.stdout
    except subprocess.TimeoutExpired:
        rc, out = "timeout", b""
    return log, rc, out


def measure_file(tool, path, ours, tmp):
    real = os.path.realpath(path)
    log, rc, out = run_strace(tool_cmd(tool, real, ours), READ_CALLS, tmp)
    b, n = strace_count(log, lambda a: a == real)
    r = {"bytes": b, "reads": n, "rc": rc}
    if tool == "ours":
        try:
            j = json.loads(out)
            r["self_bytes"], r["self_reads"] = j["bytes_read"], j["reads"]
        except (ValueError, KeyError):
            pass
    return r


class Nginx:
    """nginx on 127.0.0.1:PORT serving / under /rN/ prefixes."""

    def __init__(self, tmp):
        self.dir = os.path.join(tmp, "nginx")
        os.makedirs(os.path.join(self.dir, "logs"), exist_ok=True)
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        self.log = os.path.join(self.dir, "access.log")
        conf = os.path.join(self.dir, "nginx.conf")
        user = "user root;" if os.geteuid() == 0 else ""
        d = self.dir
        with open(conf, "w") as f:
            f.write(f"""
{user}
worker_processes 1;
pid {d}/nginx.pid;
error_log {d}/error.log;
events {{ worker_connections 256; }}
http {{
    default_type application/octet-stream;
    client_body_temp_path {d}/body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    log_format io '$request_uri|$status|$body_bytes_sent|$bytes_sent|$http_range|$request_method';
    access_log {self.log} io;
    server {{
        listen 127.0.0.1:{self.port};
        location ~ ^/r[0-9]+(/.*)$ {{ alias $1; }}
    }}
}}
""")
        self.proc = subprocess.Popen(
            ["nginx", "-p", d, "-c", conf, "-g", "daemon off;"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        else:
            self.stop()
            raise RuntimeError("nginx did not start")
        self.run = 0

    def url(self, path):
        self.run += 1
        prefix = f"/r{self.run}"
        return prefix, f"http://127.0.0.1:{self.port}{prefix}{urllib.parse.quote(os.path.realpath(path))}"

    def lines(self, prefix):
        """Access-log lines of one run; waits until they stop coming."""
        last, stable = -1, 0
        out = []
        for _ in range(60):
            out = []
            try:
                with open(self.log, errors="replace") as f:
                    for line in f:
                        if line.startswith(prefix + "/"):
                            out.append(line.rstrip("\n").split("|"))
            except FileNotFoundError:
                pass
            if len(out) == last:
                stable += 1
                if stable >= 2:
                    break
            else:
                stable = 0
            last = len(out)
            time.sleep(0.05)
        return out

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def measure_http(tool, path, ours, nginx, tmp):
    prefix, url = nginx.url(path)
    port = f":{nginx.port}]"
    log, rc, out = run_strace(tool_cmd(tool, url, ours), NET_CALLS, tmp)
    # Client side: reads on the TCP connection to the server (-yy prints
    # "TCP:[local->127.0.0.1:PORT]").
    got, _ = strace_count(log, lambda a: a.startswith("TCP:") and a.endswith(port))
    lines = nginx.lines(prefix)
    r = {
        "requests": len(lines),
        "sent": sum(int(x[2]) for x in lines if len(x) > 2 and x[2].isdigit()),
        "received": got,
        "rc": rc,
        "ranges": [x[4] for x in lines if len(x) > 4],
    }
    if tool == "ours":
        try:
            j = json.loads(out)
            r["self_bytes"], r["self_requests"] = j["bytes_read"], j["requests"]
        except (ValueError, KeyError):
            pass
    return r


def files(limit):
    out = []
    corpus = os.path.join(REPO, "corpus", "files")
    for fam in sorted(os.listdir(corpus)):
        d = os.path.join(corpus, fam)
        if os.path.isdir(d):
            names = sorted(os.listdir(d))[: limit or None]
            out += [("corpus", fam, os.path.join(d, n)) for n in names]
    if os.path.isdir(SAMPLES):
        for fam in sorted(os.listdir(SAMPLES)):
            d = os.path.join(SAMPLES, fam)
            if os.path.isdir(d) and fam not in SKIP_SAMPLE_DIRS:
                names = sorted(os.listdir(d))[: limit or None]
                out += [("samples", fam, os.path.join(d, n)) for n in names if os.path.isfile(os.path.join(d, n))]
    return out


# Larger files for `--large`: a corpus file looped by ffmpeg (stream copy, as
# corpus/big.sh does) up to a size; made under /tmp, deleted after use.
LARGE = [
    ("mp4", "mp4/h264_aac.mp4", "large_moov_end.mp4", 300_000_000, []),
    ("mp4", "mp4/h264_aac.mp4", "large_faststart.mp4", 300_000_000, ["-movflags", "+faststart"]),
    ("matroska", "matroska/h264_aac.mkv", "large.mkv", 300_000_000, []),
    ("avi", "avi/mpeg4_mp3.avi", "large_opendml.avi", 1_500_000_000, []),
    ("wav", "wav/pcm_s16le.wav", "large.wav", 300_000_000, []),
    ("mpegts", "mpegts/h264_aac.ts", "large.ts", 300_000_000, []),
    ("mpegps", "mpegps/mpeg2_ac3.vob", "large.vob", 300_000_000, ["-f", "vob"]),
]


# Why a family's probe reads more than ffprobe, where that was analysed.
KNOWN_CAUSES = {
    "mpegps": "core `format/mpeg/ps.rs` `open`: walks every pack and PES header up to `Limits::probe_bytes`"
    " (6 MiB) to list the streams, and does not stop once no new stream turns up; ffprobe stops after a few"
    " seconds of time stamps",
    "ac3": "core `format/es/ac3.rs`: the probe walks every frame of the file from offset 0 (after reading the"
    " tail), twice; with a 128 KiB cache the second walk reads the file again. ffprobe estimates the duration"
    " from the first frames",
    "adts": "core `format/es/adts.rs`: the probe walks every ADTS frame to the end of the file for the duration;"
    " ffprobe estimates it from the bit rate of the first frames",
    "av1obu": "core `format/es/obu.rs`: after the header walk the first temporal unit (12.7 KB at byte 2) is"
    " read again in one piece",
    "ogg": "core `format/ogg`: the Vorbis comment packet is joined twice during a probe (every page piece of it"
    " is read twice: 16 122 bytes at 372, twice, and so on), and the identification header too; a file with"
    " 100 KB of tags reads its tags twice",
}


def make_large(spec, outdir):
    fam, src, name, size, extra = spec
    out = os.path.join(outdir, name)
    cmd = ["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "quiet", "-y", "-stream_loop", "-1", "-i",
           os.path.join(REPO, "corpus", "files", src), "-map", "0", "-c", "copy", "-fs", str(size),
           "-fflags", "+bitexact"] + extra + [out]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return out, "ffmpeg -stream_loop -1 -i corpus/files/" + src + f" -map 0 -c copy -fs {size}" + "".join(" " + e for e in extra)


def kb(n):
    if n is None:
        return "—"
    if n < 10_000:
        return str(n)
    if n < 10_000_000:
        return f"{n / 1000:.1f} k"
    return f"{n / 1e6:.1f} M"


def med(xs):
    xs = [x for x in xs if x is not None]
    return int(statistics.median(xs)) if xs else None


def git_commit():
    try:
        c = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", REPO, "status", "--porcelain", "--", "core", "std-adapter"], capture_output=True, text=True
        ).stdout.strip()
        return c + (" (+ uncommitted changes in core/ or std-adapter/)" if dirty else "")
    except OSError:
        return "?"


def versions():
    def first(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip().splitlines()[0]
        except (OSError, IndexError, subprocess.TimeoutExpired):
            return "?"

    return {
        "ffprobe": first(["ffprobe", "-version"]),
        "mediainfo": " ".join(subprocess.run(["mediainfo", "--Version"], capture_output=True, text=True).stdout.split()),
        "exiftool": "ExifTool " + first(["exiftool", "-ver"]),
        "nginx": subprocess.run(["nginx", "-v"], capture_output=True, text=True).stderr.strip(),
    }


def write_doc(results, args, out_path, http):
    L = []
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    L.append("# I/O per probe: mediaslice vs ffprobe, MediaInfo, ExifTool\n")
    L.append(
        "How many bytes, and in how many read calls, each tool takes to probe a file (format, streams,\n"
        "duration, tags). Produced by `benches/scripts/io.py` (see its docstring for the method); do not\n"
        "edit the tables by hand.\n"
    )
    L.append(f"* Command: `{args.cmdline}`")
    L.append(f"* Date: {now}; commit {args.commit or git_commit()}")
    for k, v in versions().items():
        L.append(f"* {k}: {v}")
    L.append(
        "* Files: `corpus/files/<family>/` (generated) and `../shared/samples/<family>/` (real files;\n"
        "  `fuzz/`, `other/` left out)."
    )
    made = [r for r in results if r.get("made")]
    if made:
        L.append("* Larger files (set `large`), made under /tmp for the run and deleted after it:")
        for r in made:
            L.append(f"  `{os.path.basename(r['path'])}` ({kb(r['size'])}B): `{r['made']}`")
    L.append("")
    L.append("## Method\n")
    L.append(
        "* **Files.** Every tool runs under `strace -f -qq -yy -e trace=read,pread64,readv,preadv,preadv2`;\n"
        "  only calls on a descriptor of the measured file count (`-yy` names the file beside the\n"
        "  descriptor). `bytes` is what those calls returned, `reads` how many calls. For mediaslice the\n"
        "  probe is `mediaslice io --json FILE` (positioned reads through `FileSource`: 32 × 4 KiB block\n"
        "  cache, read-ahead when reading on); its own counters are checked against strace (below).\n"
        "  ffprobe: `ffprobe -v error -show_format -show_streams FILE`; MediaInfo: `mediainfo FILE`;\n"
        "  ExifTool: `exiftool FILE`.\n"
        "* **HTTP.** nginx on 127.0.0.1 serves the same files; each run has its own URL prefix so its\n"
        "  requests are told apart in the access log. *sent* is nginx's `$body_bytes_sent` summed over\n"
        "  the run's requests: what the server pushed, including bytes that sat in socket buffers and\n"
        "  were thrown away when the client closed. *recv* is what the client read from the socket\n"
        "  (strace on `read`/`recvfrom`/`recvmsg` of the connection to the server; response headers\n"
        "  included). mediaslice: `mediaslice io --json URL` (`HttpSource`, closed ranges); its own\n"
        "  count of requests is checked against nginx's log. ExifTool has no HTTP client.\n"
        "* `fail` marks a probe that exited non-zero (mediaslice: a format this build does not read\n"
        "  yet; it stops after detection).\n"
    )

    # Family medians.
    fams = {}
    for r in results:
        fams.setdefault((r["set"], r["family"]), []).append(r)

    def col(rs, tool, key, where="file"):
        return med([r[where][tool].get(key) for r in rs if tool in r.get(where, {})])

    L.append("## Family medians (files)\n")
    L.append("bytes / reads, median over the family's files. *ok* is how many files mediaslice probed successfully.\n")
    L.append("| set | family | files | ok | mediaslice | ffprobe | MediaInfo | ExifTool |")
    L.append("|---|---|---:|---:|---:|---:|---:|---:|")
    for (st, fam), rs in sorted(fams.items()):
        ok = sum(1 for r in rs if r["file"]["ours"]["rc"] == 0)
        cells = []
        for t in TOOLS:
            cells.append(f"{kb(col(rs, t, 'bytes'))} / {col(rs, t, 'reads')}")
        L.append(f"| {st} | {fam} | {len(rs)} | {ok} | " + " | ".join(cells) + " |")
    L.append("")

    if http:
        L.append("## Family medians (HTTP, nginx on 127.0.0.1)\n")
        L.append("requests · bytes nginx sent · bytes the client received; medians over the family's files.\n")
        L.append("| set | family | files | mediaslice | ffprobe | MediaInfo |")
        L.append("|---|---|---:|---:|---:|---:|")
        for (st, fam), rs in sorted(fams.items()):
            cells = []
            for t in HTTP_TOOLS:
                cells.append(
                    f"{col(rs, t, 'requests', 'http')} · {kb(col(rs, t, 'sent', 'http'))} · {kb(col(rs, t, 'received', 'http'))}"
                )
            L.append(f"| {st} | {fam} | {len(rs)} | " + " | ".join(cells) + " |")
        L.append("")

    # Where we read more than ffprobe.
    worse = [
        r
        for r in results
        if r["file"]["ours"]["rc"] == 0 and r["file"]["ours"]["bytes"] > r["file"]["ffprobe"]["bytes"]
    ]
    L.append("## mediaslice ≤ ffprobe?\n")
    corpus_ok = [r for r in results if r["set"] == "corpus" and r["file"]["ours"]["rc"] == 0]
    corpus_worse = [r for r in worse if r["set"] == "corpus"]
    L.append(
        f"Generated corpus: {len(corpus_ok) - len(corpus_worse)} of {len(corpus_ok)} probed files read no more than ffprobe."
    )
    for st in ("corpus", "samples"):
        rs = [r for r in results if r["set"] == st]
        n = sum(1 for r in rs if r["file"]["ours"]["bytes"] <= r["file"]["ffprobe"]["bytes"])
        L.append(
            f"\nAll {st} files, failed probes included (a format this build does not read stops after"
            f" detection): {n} of {len(rs)} read no more than ffprobe."
        )
        for r in rs:
            if r["file"]["ours"]["bytes"] > r["file"]["ffprobe"]["bytes"] and r["file"]["ours"]["rc"] != 0:
                L.append(
                    f"Failed probe reading more: {r['family']}/{os.path.basename(r['path'])}, "
                    f"{r['file']['ours']['bytes']} bytes in {r['file']['ours']['reads']} reads vs ffprobe's "
                    f"{r['file']['ffprobe']['bytes']} (ffprobe rc {r['file']['ffprobe']['rc']})."
                )
    if worse:
        L.append("\nFiles where mediaslice read more bytes than ffprobe (successful probes only):\n")
        L.append("| set | file | size | mediaslice | ffprobe | why |")
        L.append("|---|---|---:|---:|---:|---|")
        for r in worse:
            L.append(
                f"| {r['set']} | {r['family']}/{os.path.basename(r['path'])} | {kb(r['size'])} | "
                f"{kb(r['file']['ours']['bytes'])} / {r['file']['ours']['reads']} | "
                f"{kb(r['file']['ffprobe']['bytes'])} / {r['file']['ffprobe']['reads']} | "
                f"{KNOWN_CAUSES.get(r['family'], 'not analysed')} |"
            )
    mism = [
        r
        for r in results
        if "self_bytes" in r["file"]["ours"]
        and (r["file"]["ours"]["self_bytes"], r["file"]["ours"]["self_reads"]) != (r["file"]["ours"]["bytes"], r["file"]["ours"]["reads"])
    ]
    L.append(
        f"\nmediaslice's own counters agree with strace on {len(results) - len(mism)} of {len(results)} files"
        + (": " + ", ".join(os.path.basename(r["path"]) for r in mism[:10]) if mism else ".")
    )
    if http:
        hm = [
            r
            for r in results
            if "self_requests" in r["http"]["ours"] and r["http"]["ours"]["self_requests"] != r["http"]["ours"]["requests"]
        ]
        L.append(
            f"Over HTTP, mediaslice's request count agrees with nginx's log on {len(results) - len(hm)} of {len(results)} files"
            + (": " + ", ".join(os.path.basename(r["path"]) for r in hm[:10]) if hm else ".")
        )
        worse_http = [
            r
            for r in results
            if r["set"] == "corpus" and r["http"]["ours"]["rc"] == 0 and r["http"]["ours"]["sent"] > r["http"]["ffprobe"]["sent"]
        ]
        L.append(
            f"Over HTTP, nginx sent mediaslice no more than it sent ffprobe on "
            f"{len(corpus_ok) - len(worse_http)} of {len(corpus_ok)} probed corpus files"
            + (": " + ", ".join(os.path.basename(r["path"]) for r in worse_http[:10]) if worse_http else ".")
        )
    L.append("")

    # Per file.
    L.append("## Per file (files)\n")
    L.append("bytes / reads. `fail`: the probe exited non-zero.\n")
    L.append("| set | file | size | mediaslice | ffprobe | MediaInfo | ExifTool |")
    L.append("|---|---|---:|---:|---:|---:|---:|")
    for r in results:
        cells = []
        for t in TOOLS:
            m = r["file"][t]
            mark = "" if m["rc"] == 0 else " fail"
            cells.append(f"{kb(m['bytes'])} / {m['reads']}{mark}")
        L.append(f"| {r['set']} | {r['family']}/{os.path.basename(r['path'])} | {kb(r['size'])} | " + " | ".join(cells) + " |")
    L.append("")
    if http:
        L.append("## Per file (HTTP)\n")
        L.append("requests · bytes nginx sent · bytes the client received.\n")
        L.append("| set | file | size | mediaslice | ffprobe | MediaInfo |")
        L.append("|---|---|---:|---:|---:|---:|")
        for r in results:
            if not r.get("http"):
                continue
            cells = []
            for t in HTTP_TOOLS:
                m = r["http"][t]
                mark = "" if m["rc"] == 0 else " fail"
                cells.append(f"{m['requests']} · {kb(m['sent'])} · {kb(m['received'])}{mark}")
            L.append(f"| {r['set']} | {r['family']}/{os.path.basename(r['path'])} | {kb(r['size'])} | " + " | ".join(cells) + " |")
        L.append("")
    with open(out_path, "w") as f:
        f.write("\n".join(L))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=None, help="mediaslice binary (default: $CARGO_TARGET_DIR or target, release)")
    ap.add_argument("--out", default=os.path.join(REPO, "docs", "bench", "io.md"))
    ap.add_argument("--json", default="/tmp/mediaslice-io.json")
    ap.add_argument("--no-http", action="store_true")
    ap.add_argument("--limit", type=int, default=0, help="files per family (0: all)")
    ap.add_argument("--family", default="", help="comma-separated families (default: all)")
    ap.add_argument("--commit", default="", help="commit the binary was built from (default: the repository's HEAD)")
    ap.add_argument("--large", action="store_true", help="also larger files made under /tmp by looping corpus files")
    ap.add_argument("--large-only", action="store_true", help="only the larger files")
    ap.add_argument("--from-json", default="", help="write the doc from an earlier run's JSON (no measuring)")
    ap.add_argument("--cmdline", default="", help="with --from-json: the command of that run")
    args = ap.parse_args()
    args.cmdline = args.cmdline or "benches/scripts/io.py" + "".join(" " + a for a in sys.argv[1:])
    if args.from_json:
        with open(args.from_json) as f:
            results = json.load(f)
        write_doc(results, args, args.out, any(r.get("http") for r in results))
        print(f"io.py: wrote {args.out} from {args.from_json}", file=sys.stderr)
        return
    ours = args.bin or os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(REPO, "target")), "release", "mediaslice")
    for t in ["strace", "ffprobe", "mediainfo", "exiftool"] + ([] if args.no_http else ["nginx"]):
        if not shutil.which(t):
            sys.exit(f"io.py: {t} is missing (apt-get install strace ffmpeg mediainfo libimage-exiftool-perl nginx-light)")
    if not os.access(ours, os.X_OK):
        sys.exit(f"io.py: no mediaslice binary at {ours} (cargo build --release -p mediaslice-std)")
    tmp = tempfile.mkdtemp(prefix="mediaslice-io-")
    nginx = None if args.no_http else Nginx(tmp)
    fams = set(args.family.split(",")) - {""}
    results = []
    try:
        todo = [] if args.large_only else [f for f in files(args.limit) if not fams or f[1] in fams]
        if args.large or args.large_only:
            todo += [("large", spec[0], spec) for spec in LARGE if not fams or spec[0] in fams]
        for i, (st, fam, path) in enumerate(todo):
            made = None
            if st == "large":
                path, made = make_large(path, tmp)
            r = {"set": st, "family": fam, "path": path, "size": os.path.getsize(path), "file": {}, "http": {}}
            if made:
                r["made"] = made
            for t in TOOLS:
                r["file"][t] = measure_file(t, path, ours, tmp)
            if nginx:
                for t in HTTP_TOOLS:
                    r["http"][t] = measure_http(t, path, ours, nginx, tmp)
            results.append(r)
            if made:
                os.remove(path)
            o, f = r["file"]["ours"], r["file"]["ffprobe"]
            print(f"[{i + 1}/{len(todo)}] {st}/{fam}/{os.path.basename(path)}: ours {o['bytes']}/{o['reads']} ffprobe {f['bytes']}/{f['reads']}", file=sys.stderr)
    finally:
        if nginx:
            nginx.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    with open(args.json, "w") as f:
        json.dump(results, f, indent=1)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    write_doc(results, args, args.out, nginx is not None)
    print(f"io.py: {len(results)} files; wrote {args.out} and {args.json}", file=sys.stderr)


if __name__ == "__main__":
    main()
