#!/usr/bin/env python3
"""Summarises a log of benches/scripts/live_rss.sh (`package -` fed live)
as the soak's figure of merit: VmRSS at five minutes, the largest VmRSS
after it, and their difference (the issue's bound is 256 KiB), plus the
run's length and the segments on disk; draws VmRSS against time into PNG
when matplotlib can be imported.

    benches/scripts/live_rss_summary.py LOG [PNG]
"""
import re
import sys

WARM = 300.0  # seconds

LINE = re.compile(r"^(\d+) s VmHWM:\s*(\d+) kB VmRSS:\s*(\d+) kB segment files: (\d+)")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    rows = []
    with open(sys.argv[1]) as f:
        for line in f:
            m = LINE.match(line)
            if m:
                rows.append(tuple(int(g) for g in m.groups()))
    if not rows:
        sys.exit(f"{sys.argv[1]}: no samples")
    warm = next((r for r in rows if r[0] >= WARM), None)
    print("| samples | length | segments on disk (last) | VmRSS at 5 min (KiB) | max VmRSS after (KiB) | growth (KiB) | max VmHWM (KiB) |")
    print("|---|---|---|---|---|---|---|")
    if warm:
        after = [r[2] for r in rows if r[0] >= warm[0]]
        print(
            f"| {len(rows)} | {rows[-1][0] / 60:.0f} min | {rows[-1][3]} | {warm[2]} | {max(after)} | "
            f"{max(after) - warm[2]:+d} | {max(r[1] for r in rows)} |"
        )
    else:
        print(f"| {len(rows)} | {rows[-1][0] / 60:.0f} min | {rows[-1][3]} | n/a (run < 5 min) | | | |")
    if len(sys.argv) > 2:
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("matplotlib is not importable: no plot", file=sys.stderr)
            return
        fig, ax = plt.subplots(figsize=(8, 3.5))
        ax.plot([r[0] / 60 for r in rows], [r[2] for r in rows], label="VmRSS")
        ax.set_xlabel("minutes")
        ax.set_ylabel("KiB")
        ax.set_ylim(0, max(r[2] for r in rows) * 1.2)
        ax.axvline(WARM / 60, color="grey", linestyle=":", label="5 min")
        ax.legend(loc="lower right")
        ax.set_title("package - --hls --live --window 5, real-time input")
        fig.tight_layout()
        fig.savefig(sys.argv[2], dpi=90)


if __name__ == "__main__":
    main()
