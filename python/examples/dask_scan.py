"""Probe many files or URLs over a Dask cluster into a pandas DataFrame.

    python dask_scan.py --local 2 FILE_OR_URL...         # a LocalCluster of 2 processes
    python dask_scan.py --scheduler tcp://host:8786 -    # a running cluster, inputs on stdin
    python dask_scan.py --local 2 --csv out.csv DIR      # folders are walked

Dask schedules: the inputs become a dask.bag of a few partitions per
worker, each partition is probed in one task by `probe_partition`, and the
rows are gathered into a pandas DataFrame. Every worker needs
the `mediaslice` wheel installed; this file is sent to them with
`Client.upload_file`. See docs/scale-out.md.
"""
import argparse
import json
import os
import sys
import time

import mediaslice

# The columns of a row; `probe` is the whole probe dict as JSON text (the
# CLI's `probe --json` object, with "error" when the input failed).
COLUMNS = {
    "input": "object",
    "format_name": "object",
    "nb_streams": "Int64",
    "duration": "float64",
    "size": "Int64",
    "error_code": "object",
    "error_offset": "Int64",
    "probe": "object",
}


def probe_row(src):
    """One input's row: a few columns for queries and the full probe."""
    d = mediaslice.probe(src, errors="return")
    fmt = d.get("format", {})
    err = d.get("error", {})
    duration = fmt.get("duration")
    return {
        "input": src,
        "format_name": fmt.get("format_name"),
        "nb_streams": fmt.get("nb_streams"),
        "duration": float(duration) if duration is not None else None,
        "size": int(fmt["size"]) if "size" in fmt else None,
        "error_code": err.get("code"),
        "error_offset": err.get("offset"),
        "probe": json.dumps(d),
    }


def probe_partition(inputs):
    """The rows of one partition (one Dask task)."""
    return [probe_row(src) for src in inputs]


def as_frame(rows):
    """Rows as a pandas DataFrame with the COLUMNS' types."""
    import pandas as pd

    return pd.DataFrame(rows, columns=list(COLUMNS)).astype(COLUMNS)


def scan(client, inputs, per_worker=4):
    """Probes `inputs` on `client`'s workers; a pandas DataFrame in input
    order. Partitions: `per_worker` per worker thread, so a slow file
    delays one task, not the whole run."""
    import dask.bag as db

    threads = sum(client.nthreads().values()) or 1
    parts = max(1, min(len(inputs), threads * per_worker))
    bag = db.from_sequence(inputs, npartitions=parts).map_partitions(probe_partition)
    # The rows come back in input order (a bag keeps its partitions'
    # order); pandas, not dask.dataframe, so pyarrow is not needed.
    return as_frame(client.compute(bag).result())


def expand(args):
    out = []
    for a in args:
        if a == "-":
            out.extend(line.strip() for line in sys.stdin if line.strip())
        elif os.path.isdir(a):
            for dirpath, _, names in sorted(os.walk(a)):
                out.extend(os.path.join(dirpath, n) for n in sorted(names))
        else:
            out.append(a)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--scheduler", help="address of a running scheduler, e.g. tcp://scheduler:8786")
    where.add_argument("--local", type=int, metavar="N", help="start a LocalCluster of N worker processes")
    ap.add_argument("--csv", help="write the DataFrame here")
    ap.add_argument("inputs", nargs="+", help="files, folders, URLs, or - for a list on stdin")
    a = ap.parse_args()
    from dask.distributed import Client, LocalCluster

    inputs = expand(a.inputs)
    if a.local:
        cluster = LocalCluster(n_workers=a.local, threads_per_worker=1, processes=True)
        client = Client(cluster)
    else:
        client = Client(a.scheduler)
    client.upload_file(os.path.abspath(__file__))
    t = time.perf_counter()
    df = scan(client, inputs)
    secs = time.perf_counter() - t
    failed = df["error_code"].notna().sum()
    print(f"{len(df)} inputs in {secs:.2f} s ({len(df) / secs:.0f}/s), {failed} with an error", file=sys.stderr)
    print(df.drop(columns=["probe"]).groupby("format_name", dropna=False).size().to_string(), file=sys.stderr)
    if a.csv:
        df.to_csv(a.csv, index=False)
    client.close()


if __name__ == "__main__":
    main()
