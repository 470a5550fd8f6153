#!/usr/bin/env python3
"""Summarises soak TSVs (benches/src/bin/soak.rs) as a Markdown table, and
draws RSS and heap against time into soak.png beside the first TSV when
matplotlib can be imported.

The figure of merit is growth: the maximum RSS after the first five minutes
less the RSS at five minutes (the process has warmed up by then: the first
files rotated), and the same for RssAnon alone (the process's own memory,
without the file pages the kernel maps and reclaims). The issue's bound is
256 KiB.
"""
import csv
import os
import sys

WARM = 300.0  # seconds


def load(path):
    with open(path, newline="") as f:
        return [{k: float(v) for k, v in row.items()} for row in csv.DictReader(f, delimiter="\t")]


def summary(path, rows):
    last = rows[-1]
    warm = next((r for r in rows if r["seconds"] >= WARM), None)
    after = [r for r in rows if warm and r["seconds"] >= warm["seconds"]]
    growth = (max(r["rss_kib"] for r in after) - warm["rss_kib"]) if warm else None
    heap_growth = (max(r["heap_bytes"] for r in after) - warm["heap_bytes"]) if warm else None
    anon_growth = (max(r["anon_kib"] for r in after) - warm["anon_kib"]) if warm else None
    allocs_after = (last["allocs"] - warm["allocs"]) if warm else None
    return [
        os.path.basename(path),
        f"{last['seconds'] / 60:.0f} min",
        f"{last['bytes'] / 2**30:.1f} GiB",
        f"{last['files']:.0f}",
        f"{last['fragments']:.0f}",
        f"{last['packets']:.0f}",
        f"{warm['rss_kib']:.0f}" if warm else "n/a (run < 5 min)",
        f"{max(r['rss_kib'] for r in after):.0f}" if warm else "n/a",
        f"{growth:+.0f}" if warm else "n/a",
        f"{anon_growth:+.0f}" if warm else "n/a",
        f"{last['hwm_kib']:.0f}",
        f"{heap_growth:+.0f}" if warm else "n/a",
        f"{allocs_after:.0f}" if warm else "n/a",
    ]


def main():
    paths = sys.argv[1:]
    if not paths:
        sys.exit("usage: soak_summary.py TSV...")
    head = ["run", "time", "written", "files", "fragments", "packets", "RSS at 5 min (KiB)",
            "max RSS after (KiB)", "growth (KiB)", "RssAnon growth (KiB)", "VmHWM (KiB)", "heap growth (B)", "allocations after 5 min"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    data = {}
    for p in paths:
        rows = load(p)
        if not rows:
            print(f"| {os.path.basename(p)} | no rows |")
            continue
        data[p] = rows
        print("| " + " | ".join(summary(p, rows)) + " |")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("\n(no plot: matplotlib is not importable)")
        return
    # RSS and RssAnon in KiB on top (the figure of merit); the heap below,
    # most of it the muxer's zeroed scratch, allocated once and touched only
    # where fragments are built.
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    for p, rows in data.items():
        name = os.path.basename(p).removesuffix(".tsv")
        t = [r["seconds"] / 60 for r in rows]
        top.plot(t, [r["rss_kib"] for r in rows], label=f"{name}: VmRSS")
        top.plot(t, [r["anon_kib"] for r in rows], "--", label=f"{name}: RssAnon")
        bottom.plot(t, [r["heap_bytes"] / 2**20 for r in rows], label=f"{name}: heap in use")
    top.set_ylabel("KiB")
    top.set_ylim(bottom=0)
    top.legend(fontsize="small", loc="center right")
    top.set_title("recorder soak: resident memory")
    bottom.set_ylabel("MiB")
    bottom.set_ylim(bottom=0)
    bottom.set_xlabel("minutes")
    bottom.legend(fontsize="small", loc="lower right")
    out = os.path.join(os.path.dirname(paths[0]), "soak.png")
    fig.savefig(out, dpi=100, bbox_inches="tight")
    print(f"\nplot: {out}")


if __name__ == "__main__":
    main()
