"""The per-file cost of a probe, measured for docs/scale-out.md: the
Python bindings against running ffprobe on the same machine.

    python measure.py SAMPLES_DIR [--dask-inputs N]

* local files, serial: wall time per file; read calls and bytes read on
  the media file itself (strace -y -e read,pread64, the file's descriptor
  only; ffprobe's reads of its own libraries are not counted);
* HTTP: requests and body bytes sent per file by a Range server on
  127.0.0.1 (tests/rangeserver.py);
* Dask: files per second on a LocalCluster of 2 worker processes, probing
  in-process against ffprobe run as a subprocess by the same workers.

Needs ffprobe and strace on PATH, and dask[distributed] for the last part.
"""
import argparse
import csv
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

import mediaslice  # noqa: E402
from rangeserver import RangeServer  # noqa: E402

FFPROBE = ["ffprobe", "-v", "error", "-show_format", "-show_streams", "-of", "json"]
SYSCALL = re.compile(r"^(?:\d+\s+)?(read|pread64)\((\d+)<([^>]*)>.*\)\s+=\s+(-?\d+)")


def sample_files(root):
    out = []
    with open(os.path.join(root, "MANIFEST.tsv"), newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if row["family"] in ("fuzz", "other") or row["ffprobe_format_name"].startswith("ERROR"):
                continue
            p = os.path.join(root, row["local_path"])
            if os.path.isfile(p):
                out.append(os.path.realpath(p))
    return out


def strace_reads(cmd, files):
    """Read calls and bytes on each of `files` by `cmd` under strace."""
    with tempfile.NamedTemporaryFile(suffix=".strace") as log:
        subprocess.run(
            ["strace", "-f", "-y", "-e", "trace=read,pread64", "-o", log.name, *cmd],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
        )
        wanted = set(files)
        calls = {f: 0 for f in files}
        nbytes = {f: 0 for f in files}
        for line in open(log.name, errors="replace"):
            m = SYSCALL.match(line)
            if m and m.group(3) in wanted:
                calls[m.group(3)] += 1
                nbytes[m.group(3)] += max(int(m.group(4)), 0)
    return calls, nbytes


def summary(values):
    return f"mean {statistics.mean(values):.1f}, median {statistics.median(values):.0f}, max {max(values)}"


def local(files):
    t = time.perf_counter()
    for f in files:
        mediaslice.probe(f, errors="return")
    ours_s = (time.perf_counter() - t) / len(files)
    t = time.perf_counter()
    for f in files:
        subprocess.run(FFPROBE + [f], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ff_s = (time.perf_counter() - t) / len(files)
    code = "import mediaslice, sys\nfor f in sys.argv[1:]: mediaslice.probe(f, errors='return')"
    oc, ob = strace_reads([sys.executable, "-c", code, *files], files)
    fc, fb = {}, {}
    for f in files:
        c, b = strace_reads(FFPROBE + [f], [f])
        fc[f], fb[f] = c[f], b[f]
    print(f"local, {len(files)} files, page cache warm:")
    print(f"  time per file: mediaslice {ours_s * 1e3:.3f} ms in-process; ffprobe {ff_s * 1e3:.1f} ms per run")
    print(f"  read calls on the file: mediaslice {summary(list(oc.values()))}; ffprobe {summary(list(fc.values()))}")
    kib = lambda d: [v / 1024 for v in d.values()]  # noqa: E731
    print(f"  KiB read from the file: mediaslice {summary(kib(ob))}; ffprobe {summary(kib(fb))}")
    print(f"  sum over the files: mediaslice {sum(oc.values())} calls, {sum(ob.values())} B; "
          f"ffprobe {sum(fc.values())} calls, {sum(fb.values())} B")


def http(root, files):
    rel = [os.path.relpath(f, root) for f in files]
    with RangeServer(root) as srv:
        t = time.perf_counter()
        for r in rel:
            mediaslice.probe(srv.url(r), errors="return")
        ours_s = (time.perf_counter() - t) / len(rel)
        ours = dict(srv.per_path)
        srv.per_path.clear()
        t = time.perf_counter()
        for r in rel:
            subprocess.run(FFPROBE + [srv.url(r)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ff_s = (time.perf_counter() - t) / len(rel)
        ff = dict(srv.per_path)
    reqs = lambda d: [d.get(r, (0, 0))[0] for r in rel]  # noqa: E731
    kib = lambda d: [d.get(r, (0, 0))[1] / 1024 for r in rel]  # noqa: E731
    print(f"HTTP on 127.0.0.1, {len(rel)} files:")
    print(f"  time per file: mediaslice {ours_s * 1e3:.2f} ms; ffprobe {ff_s * 1e3:.1f} ms")
    print(f"  requests: mediaslice {summary(reqs(ours))}; ffprobe {summary(reqs(ff))}")
    print(f"  KiB sent: mediaslice {summary(kib(ours))}; ffprobe {summary(kib(ff))}")


def run_ffprobe(f):
    r = subprocess.run(FFPROBE + [f], capture_output=True)
    return r.returncode


def dask_rate(files, n):
    from dask.distributed import Client, LocalCluster

    sys.path.insert(0, HERE)
    import dask_scan

    inputs = (files * (n // len(files) + 1))[:n]
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster)
    client.upload_file(os.path.join(HERE, "dask_scan.py"))
    dask_scan.scan(client, inputs[:50])  # workers warm
    t = time.perf_counter()
    dask_scan.scan(client, inputs)
    ours = time.perf_counter() - t
    few = inputs[: min(len(inputs), 600)]
    t = time.perf_counter()
    client.gather(client.map(run_ffprobe, few, pure=False))
    ff = time.perf_counter() - t
    print("Dask LocalCluster, 2 worker processes of 1 thread:")
    print(f"  mediaslice: {len(inputs)} files in {ours:.2f} s = {len(inputs) / ours:.0f} files/s")
    print(f"  ffprobe:    {len(few)} files in {ff:.2f} s = {len(few) / ff:.0f} files/s")
    client.close()
    cluster.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("samples")
    ap.add_argument("--dask-inputs", type=int, default=4000)
    a = ap.parse_args()
    files = sample_files(a.samples)
    local(files)
    http(os.path.realpath(a.samples), files)
    if a.dask_inputs:
        dask_rate(files, a.dask_inputs)


if __name__ == "__main__":
    main()
