#!/usr/bin/env python3
"""Turns the suite's raw results into the markdown tables of docs/bench/README.md.

    report.py CRITERION_DIR RESULTS_DIR > report.md
    report.py CRITERION_DIR RESULTS_DIR --readme docs/bench/README.md

CRITERION_DIR is $CARGO_TARGET_DIR/criterion; RESULTS_DIR holds counts.tsv,
alloc.tsv, probe_facts.tsv (bench targets), packets.json, probe.json
(compare.py), icount.tsv (icount.sh) and machine.txt (run.sh). With
--readme, the text between the markers
<!-- BEGIN GENERATED --> and <!-- END GENERATED --> is replaced.

Times are per iteration (criterion) or per process (compare.py): median,
then min-max over the samples.
"""

import csv
import glob
import json
import os
import statistics
import sys
from collections import defaultdict


def fmt_t(s):
    """Seconds as a short human time."""
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms" if s < 0.1 else f"{s * 1e3:.0f} ms"
    if s >= 1e-6:
        return f"{s * 1e6:.3g} µs"
    return f"{s * 1e9:.0f} ns"


def fmt_rate(x, unit):
    for div, p in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= div:
            return f"{x / div:.3g} {p}{unit}"
    return f"{x:.3g} {unit}"


def tmm(med, lo, hi):
    return f"{fmt_t(med)} ({fmt_t(lo)}–{fmt_t(hi)})"


def read_tsv(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return list(csv.DictReader(f, delimiter="\t"))


def criterion(cdir):
    """{(group, function): (median, min, max)} in seconds per iteration."""
    out = {}
    for bj in glob.glob(os.path.join(cdir, "**", "new", "benchmark.json"), recursive=True):
        d = os.path.dirname(bj)
        try:
            b = json.load(open(bj))
            s = json.load(open(os.path.join(d, "sample.json")))
        except (OSError, ValueError):
            continue
        per = [t / i * 1e-9 for t, i in zip(s["times"], s["iters"]) if i]
        if per:
            out[(b["group_id"], b["function_id"] or b.get("value_str") or "")] = (
                statistics.median(per), min(per), max(per))
    return out


def throughput_tables(crit, counts):
    lines = []
    by_file = defaultdict(dict)
    for r in counts:
        by_file[r["file"]][(r["mode"], r["impl"])] = r
    files = list(dict.fromkeys(r["file"] for r in counts))
    head = ("| file | impl | median (min–max) | packets | packets/s | MB/s of file | "
            "vs mediaslice | note |")
    sep = "|---|---|---|---:|---:|---:|---:|---|"
    summ = []
    for mode in ("headers", "crc"):
        title = ("Headers only: open + every packet's header, payload untouched" if mode == "headers"
                 else "CRC-32 over every payload byte (same CRC code for all), and the bare CRC over the whole file")
        lines += [f"### {title}", "", head, sep]
        for f in files:
            rows = {impl: r for (m, impl), r in by_file[f].items() if m == mode}
            ms = crit.get((f"tp/{f}/{mode}", "mediaslice"))
            if not ms or "mediaslice" not in rows:
                continue
            size = int(rows["mediaslice"]["bytes"])
            msc = rows["mediaslice"]
            base = crit.get((f"tp/{f}/{mode}", "crc-baseline"))
            fastest_peer = None
            for impl, r in rows.items():
                t = crit.get((f"tp/{f}/{mode}", impl))
                if not t:
                    continue
                pk = int(r["packets"])
                note = []
                if impl not in ("mediaslice", "crc-baseline"):
                    if r["packets"] != msc["packets"]:
                        note.append(f"{pk} packets vs {msc['packets']}")
                    if mode == "crc" and r["payload_bytes"] != msc["payload_bytes"]:
                        note.append(f"{int(r['payload_bytes']):,} B")
                    if fastest_peer is None or t[0] < fastest_peer[1][0]:
                        fastest_peer = (impl, t, pk)
                if mode == "crc" and base and impl != "crc-baseline":
                    note.append(f"{base[0] / t[0] * 100:.0f}% of bare CRC")
                pps = fmt_rate(pk / t[0], "") if pk else "–"
                lines.append(
                    f"| {f} | {impl} | {tmm(*t)} | {pk if pk else '–'} | {pps} | {size / t[0] / 1e6:,.0f} | "
                    f"{t[0] / ms[0]:.2f}× | {'; '.join(note)} |")
            summ.append((mode, f, ms, int(msc["packets"]), fastest_peer, base, size))
        lines.append("")
    # Summary against the targets.
    lines += ["### Summary against the targets", "",
              "| file | mode | mediaslice | fastest peer | ratio (peer time ÷ ours; packets/s ratio) | bare CRC | ours as % of bare CRC |",
              "|---|---|---:|---|---:|---:|---:|"]
    for mode, f, ms, pk, fp, base, size in summ:
        if fp:
            impl, t, ppk = fp
            pr = (pk / ms[0]) / (ppk / t[0]) if ppk else float("nan")
            peer = f"{impl} {fmt_t(t[0])}"
            ratio = f"{t[0] / ms[0]:.1f}× ; {pr:.1f}×"
        else:
            peer, ratio = "–", "–"
        b = fmt_t(base[0]) if (base and mode == "crc") else "–"
        pct = f"{base[0] / ms[0] * 100:.0f}%" if (base and mode == "crc") else "–"
        lines.append(f"| {f} | {mode} | {fmt_t(ms[0])} | {peer} | {ratio} | {b} | {pct} |")
    lines.append("")
    return lines


def alternate_tables(rows):
    """The alternating harness (alternate.rs): per file and mode, every
    implementation, and a summary against the targets."""
    if not rows:
        return []
    lines = ["| file | mode | impl | median (min–max) | packets | packets/s | vs mediaslice (time) | of bare CRC |",
             "|---|---|---|---|---:|---:|---:|---:|"]
    groups = defaultdict(dict)
    for r in rows:
        if r["impl"] == "hound" and r["mode"] == "headers":
            continue  # hound has no packets: its "headers" run is a header parse
        groups[(r["file"], r["mode"])][r["impl"]] = r
    summ = []
    for (f, mode), g in groups.items():
        ms = g.get("mediaslice")
        if not ms:
            continue
        base = g.get("crc-baseline")
        tms = float(ms["median_s"])
        fastest = None
        for impl, r in g.items():
            t, lo, hi, pk = float(r["median_s"]), float(r["min_s"]), float(r["max_s"]), int(r["packets"])
            of = f"{float(base['median_s']) / t * 100:.0f}%" if base and impl != "crc-baseline" else "–"
            lines.append(f"| {f} | {mode} | {impl} | {tmm(t, lo, hi)} | {pk if pk else '–'} | "
                         f"{fmt_rate(pk / t, '') if pk else '–'} | {t / tms:.2f}× | {of} |")
            if impl not in ("mediaslice", "crc-baseline") and (fastest is None or t < fastest[1]):
                fastest = (impl, t, pk)
        summ.append((f, mode, tms, int(ms["packets"]), fastest, float(base["median_s"]) if base else None))
    lines += ["", "Summary (alternating harness medians):", "",
              "| file | mode | mediaslice | fastest peer | peer time ÷ ours | packets/s ours ÷ peer | bare CRC | ours as % of bare CRC |",
              "|---|---|---:|---|---:|---:|---:|---:|"]
    for f, mode, tms, pk, fp, base in summ:
        if fp:
            impl, t, ppk = fp
            peer, r1 = f"{impl} {fmt_t(t)}", f"{t / tms:.2f}×"
            # Packets/s only where the units are comparable.
            r2 = f"{(pk / tms) / (ppk / t):.2f}×" if ppk and pk and 0.5 <= ppk / pk <= 2 else "–"
        else:
            peer, r1, r2 = "–", "–", "–"
        b = fmt_t(base) if base else "–"
        pct = f"{base / tms * 100:.0f}%" if base else "–"
        lines.append(f"| {f} | {mode} | {fmt_t(tms)} | {peer} | {r1} | {r2} | {b} | {pct} |")
    lines.append("")
    return lines


def process_tables(packets):
    if not packets:
        return []
    lines = ["| file | packets | command | median (min–max) | packets/s | ours faster by | peak RSS (median) |",
             "|---|---:|---|---|---:|---:|---:|"]
    for e in packets["results"]:
        name = os.path.basename(e["file"])
        pk = (e.get("summary") or {}).get("packets", 0)
        ms = statistics.median(e["commands"]["mediaslice"]["wall"])
        for cmd, s in e["commands"].items():
            w = s["wall"]
            med = statistics.median(w)
            rss = statistics.median(s["rss_kib"]) / 1024
            fail = f" ({s['failed']} failed)" if s["failed"] else ""
            lines.append(f"| {name} | {pk} | {cmd}{fail} | {tmm(med, min(w), max(w))} | "
                         f"{fmt_rate(pk / med, '') if pk else '–'} | {med / ms:.1f}× | {rss:.1f} MiB |")
    lines.append("")
    return lines


def probe_tables(crit, probe, facts):
    lines = []
    fam_of = {r["file"]: r["family"] for r in facts}
    # In process, per family.
    per_fam = defaultdict(list)
    for (g, fn), t in crit.items():
        if g == "probe" and fn in fam_of:
            per_fam[fam_of[fn]].append((fn, t))
    if per_fam:
        lines += ["In process (open + tracks + duration + every tag, over a slice of the mapped file):", "",
                  "| family | files | median of per-file medians | fastest file | slowest file |",
                  "|---|---:|---:|---|---|"]
        for fam, items in per_fam.items():
            meds = [t[0] for _, t in items]
            lo = min(items, key=lambda x: x[1][0])
            hi = max(items, key=lambda x: x[1][0])
            lines.append(f"| {fam} | {len(items)} | {fmt_t(statistics.median(meds))} | "
                         f"{lo[0]} {fmt_t(lo[1][0])} | {hi[0]} {fmt_t(hi[1][0])} |")
        lines.append("")
    if probe:
        by_fam = defaultdict(lambda: defaultdict(list))
        cmds = []
        for e in probe["results"]:
            rel = e["file"].split("corpus/files/")[-1] if "corpus/files/" in e["file"] else "big/" + os.path.basename(e["file"])
            fam = fam_of.get(rel, rel.split("/")[0])
            for cmd, s in e["commands"].items():
                if cmd not in cmds:
                    cmds.append(cmd)
                by_fam[fam][cmd].append((statistics.median(s["wall"]), statistics.median(s["rss_kib"]) / 1024))
        lines += ["Whole process (median over files of each file's median; peak RSS median):", "",
                  "| family | files | " + " | ".join(cmds) + " | " + " | ".join(f"{c} ÷ ours" for c in cmds[1:]) + " |",
                  "|---|---:|" + "---:|" * (2 * len(cmds) - 1)]
        for fam, d in by_fam.items():
            meds = {c: statistics.median([x[0] for x in d[c]]) for c in cmds if d[c]}
            rss = {c: statistics.median([x[1] for x in d[c]]) for c in cmds if d[c]}
            n = len(d[cmds[0]])
            cells = [f"{fmt_t(meds[c])}, {rss[c]:.1f} MiB" if c in meds else "–" for c in cmds]
            ratios = [f"{meds[c] / meds[cmds[0]]:.1f}×" if c in meds else "–" for c in cmds[1:]]
            lines.append(f"| {fam} | {n} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
        lines.append("")
    return lines


def alloc_table(rows):
    if not rows:
        return []
    lines = ["| file | packets | open: allocs / bytes / peak heap | probe: allocs | pull: allocs (per packet) | "
             "pull peak heap | mmap source open: allocs / bytes | mmap source pull: allocs / bytes | diagnostics |",
             "|---|---:|---|---:|---:|---:|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['file']} | {r['packets']} | {r['open_allocs']} / {r['open_bytes']} / {r['open_peak']} | "
            f"{r['probe_allocs']} | {r['pull_allocs']} ({float(r['pull_allocs_per_packet']):g}) | {r['pull_peak']} | "
            f"{r['mmap_open_allocs']} / {r['mmap_open_bytes']} | {r['mmap_pull_allocs']} / {r['mmap_pull_bytes']} | "
            f"{r['diag']} |")
    total = sum(int(r["pull_allocs"]) for r in rows)
    pk = sum(int(r["packets"]) for r in rows)
    lines += ["", f"{len(rows)} files, {pk:,} packets, {total} allocations on the slice pull path.", ""]
    return lines


def icount_table(rows):
    if not rows:
        return []
    lines = ["| file | mode | impl | instructions | per packet | per payload byte | ours ÷ impl |",
             "|---|---|---|---:|---:|---:|---:|"]
    ours = {(r["file"], r["mode"]): int(r["ir"]) for r in rows if r["impl"] == "mediaslice"}
    for r in rows:
        ir, pk, by = int(r["ir"]), int(r["packets"]), int(r["bytes"])
        o = ours.get((r["file"], r["mode"]))
        lines.append(f"| {r['file']} | {r['mode']} | {r['impl']} | {ir:,} | {ir / pk if pk else 0:,.0f} | "
                     f"{ir / by if by else 0:.2f} | {o / ir if o and ir else 0:.2f} |")
    lines.append("")
    return lines


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    cdir, rdir = sys.argv[1], sys.argv[2]
    crit = criterion(cdir)
    counts = read_tsv(os.path.join(rdir, "counts.tsv"))
    facts = read_tsv(os.path.join(rdir, "probe_facts.tsv"))
    load = lambda n: json.load(open(os.path.join(rdir, n))) if os.path.exists(os.path.join(rdir, n)) else None
    out = []
    machine = os.path.join(rdir, "machine.txt")
    if os.path.exists(machine):
        out += ["## Machine and build", "", "```", open(machine).read().strip(), "```", ""]
    alt = read_tsv(os.path.join(rdir, "alternate.tsv"))
    if alt:
        out += ["## Throughput in process, alternating harness (`--bench alternate`)", ""] + alternate_tables(alt)
    out += ["## Throughput in process, criterion (`--bench throughput`)", ""] + throughput_tables(crit, counts)
    out += ["## Whole process: `mediaslice packets --summary` vs ffmpeg and ffprobe", ""] + process_tables(load("packets.json"))
    out += ["## Probe latency", ""] + probe_tables(crit, load("probe.json"), facts)
    out += ["## Allocations per phase (counting global allocator)", ""] + alloc_table(read_tsv(os.path.join(rdir, "alloc.tsv")))
    ic = read_tsv(os.path.join(rdir, "icount.tsv"))
    if ic:
        out += ["## Instruction counts (callgrind, open + every packet)", ""] + icount_table(ic)
    text = "\n".join(out)
    if "--readme" in sys.argv:
        path = sys.argv[sys.argv.index("--readme") + 1]
        doc = open(path).read()
        a, b = "<!-- BEGIN GENERATED -->", "<!-- END GENERATED -->"
        i, j = doc.index(a) + len(a), doc.index(b)
        open(path, "w").write(doc[:i] + "\n" + text + "\n" + doc[j:])
    else:
        print(text)


if __name__ == "__main__":
    main()
