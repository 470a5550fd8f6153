#!/usr/bin/env bash
# Peak resident memory (VmHWM) and wall time of `mediaslice packets --summary`
# (every packet, CRC-32 over all payloads), one fresh process per file and
# source, plus per-phase peaks in process (`mediaslice phases`: open, tracks
# and tags, all packets, seek), for:
#
#   * every small file of corpus/files/ (sources mmap and pread);
#   * the large files of corpus/big.sh, made one at a time under $BIG_DIR
#     (default /tmp/mediaslice-big) with the same ffmpeg loop as big.sh,
#     measured (sources mmap, pread, reader), and deleted before the next:
#     mp4 with the moov at the end (4.5 GiB), Matroska (4.5 GiB, only if this
#     build reads Matroska), OpenDML AVI (4.5 GiB), RF64 (4.5 GiB), MPEG-TS
#     (2.2 GB). A file is skipped, with a note, when the disk is short.
#
#   benches/scripts/memory.sh              # everything; writes docs/bench/memory.md
#   benches/scripts/memory.sh --small      # the corpus only (seconds)
#   BIG=mp4,rf64 benches/scripts/memory.sh # some of the large files
#   MEDIASLICE=path/to/mediaslice COMMIT_LABEL=abc123 benches/scripts/memory.sh
#
# Needs: a release build (cargo build --release -p mediaslice-std; set
# CARGO_TARGET_DIR if it is elsewhere), /usr/bin/time (apt-get install time),
# ffmpeg for the large files, python3 to write the tables.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BIN=${MEDIASLICE:-${CARGO_TARGET_DIR:-$REPO/target}/release/mediaslice}
BIG_DIR=${BIG_DIR:-/tmp/mediaslice-big}
OUT=${OUT:-$REPO/docs/bench/memory.md}
FFMPEG=${FFMPEG:-ffmpeg}
BIG=${BIG:-mp4,mkv,avi,rf64,ts}
SMALL_ONLY=0
[[ ${1:-} == --small ]] && SMALL_ONLY=1

[[ -x $BIN ]] || { echo "memory.sh: no binary at $BIN (cargo build --release -p mediaslice-std)" >&2; exit 1; }
[[ -x /usr/bin/time ]] || { echo "memory.sh: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }

RES=$(mktemp -d /tmp/mediaslice-memory.XXXXXX)
trap 'rm -rf "$RES"' EXIT
ROWS=$RES/rows.tsv      # kind file size source rss_kib wall_s exit summary
PHASES=$RES/phases.jsonl
NOTES=$RES/notes.txt
: >"$ROWS"; : >"$PHASES"; : >"$NOTES"

# A file's name in the tables: family/name for the corpus, the name alone
# for the large files.
label() {
	case $1 in
	"$REPO"/corpus/files/*) echo "${1#"$REPO"/corpus/files/}" ;;
	*) basename "$1" ;;
	esac
}

# One fresh process: peak RSS (KiB, from the kernel's VmHWM via time -v's
# "Maximum resident set size") and wall time.
measure() { # KIND FILE SOURCE
	local kind=$1 file=$2 src=$3 t out rc=0
	t=$RES/time.txt
	out=$(/usr/bin/time -f '%M %e' -o "$t" "$BIN" --source "$src" packets --summary "$file" 2>/dev/null) || rc=$?
	read -r rss wall <"$t" || { rss=0; wall=0; }
	# time -v prints "Command exited with non-zero status N" first on failure.
	if [[ $rc -ne 0 ]]; then read -r rss wall < <(tail -n1 "$t"); fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$kind" "$(label "$file")" "$(stat -c %s "$file")" \
		"$src" "$rss" "$wall" "$rc" "${out//$'\t'/ }" >>"$ROWS"
}

phases() { # KIND FILE SOURCE
	local kind=$1 file=$2 src=$3 out
	out=$("$BIN" --source "$src" phases "$file" 2>/dev/null) || true
	if [[ -n $out ]]; then
		printf '{"kind": "%s", "name": "%s", "run": %s}\n' "$kind" "$(label "$file")" "$out" >>"$PHASES"
	fi
}

echo "== small corpus files ($BIN)" >&2
for f in "$REPO"/corpus/files/*/*; do
	[[ -f $f ]] || continue
	measure small "$f" mmap
	measure small "$f" pread
	phases small "$f" mmap
done

# The large files: the loop of corpus/big.sh, one at a time.
GIB=$((1024 * 1024 * 1024))
SIZE_4_5G=$((GIB * 9 / 2))
SIZE_TS=2200000000
big() { # KEY SRC OUTNAME SIZE [ffmpeg output options]
	local key=$1 rel=$2 name=$3 src=$REPO/corpus/files/$2 out=$BIG_DIR/$3 size=$4 avail
	shift 4
	[[ ,$BIG, == *,$key,* ]] || return 0
	if ! "$BIN" probe "$src" >/dev/null 2>&1; then
		echo "$name: skipped: this build does not read corpus/files/$rel (no demuxer for the format yet)" >>"$NOTES"
		return 0
	fi
	mkdir -p "$BIG_DIR"
	avail=$(($(df -Pk "$BIG_DIR" | awk 'NR==2 {print $4}') * 1024))
	if ((avail < size + GIB)); then
		echo "$name: skipped: $BIG_DIR has $((avail / GIB)) GiB free, needs $(((size + GIB) / GIB)) GiB" >>"$NOTES"
		return 0
	fi
	echo "== $out <- $src (-fs $size)" >&2
	local t0=$SECONDS
	"$FFMPEG" -nostdin -hide_banner -loglevel error -y -stream_loop -1 -i "$src" -map 0 -c copy \
		-fs "$size" -fflags +bitexact "$@" "$out"
	echo "$name: made in $((SECONDS - t0)) s with \`ffmpeg -stream_loop -1 -i corpus/files/$rel -map 0 -c copy -fs $size${*:+ $*}\`" >>"$NOTES"
	for s in mmap pread reader; do
		echo "   $s" >&2
		measure big "$out" "$s"
	done
	phases big "$out" mmap
	rm -f "$out"
}

if ((SMALL_ONLY == 0)); then
	big mp4 mp4/h264_aac.mp4 big_moov_end.mp4 "$SIZE_4_5G"
	big mkv matroska/h264_aac.mkv big.mkv "$SIZE_4_5G"
	big avi avi/mpeg4_mp3.avi big_opendml.avi "$SIZE_4_5G"
	big rf64 wav/pcm_s16le.wav big_rf64.wav "$SIZE_4_5G" -rf64 always
	big ts mpegts/h264_aac.ts big.ts "$SIZE_TS"
fi

mkdir -p "$(dirname "$OUT")"
cp "$ROWS" /tmp/mediaslice-memory-rows.tsv
cp "$PHASES" /tmp/mediaslice-memory-phases.jsonl
# COMMIT_LABEL names the commit the binary was built from when it is not
# the repository's HEAD.
COMMIT=${COMMIT_LABEL:-$(git -C "$REPO" rev-parse --short HEAD)}
DIRTY=
[[ -z ${COMMIT_LABEL:-} ]] && DIRTY=$(git -C "$REPO" status --porcelain -- core std-adapter | head -c1)
CMD="benches/scripts/memory.sh${1:+ $1}"
[[ $BIG != mp4,mkv,avi,rf64,ts ]] && CMD="BIG=$BIG $CMD"
python3 - "$ROWS" "$PHASES" "$NOTES" "$OUT" "$CMD" "$COMMIT${DIRTY:+ (+ uncommitted changes)}" "$SMALL_ONLY" <<'EOF'
import datetime, json, statistics, sys
rows_p, phases_p, notes_p, out, cmd, commit, small_only = sys.argv[1:]
rows = [l.rstrip("\n").split("\t") for l in open(rows_p) if l.strip()]
phases = [json.loads(l) for l in open(phases_p) if l.strip()]
notes = [l.rstrip("\n") for l in open(notes_p) if l.strip()]
MIB = 1024
CAVEAT = """## Caveat: large page-cache folios

On this kernel (Linux 6.18) the page cache can hold large folios (up to 2 MiB), depending on
how it was filled (read-ahead through the map fills it with them; a file just written by ffmpeg
was seen with small ones, see the dated section below), and one fault maps a whole folio (`FilePmdMapped` in `/proc/PID/smaps`). The mmap
source's resident pages then move in 2 MiB steps: with the payload and an index read in two
places at once (OpenDML AVI), two folios (4 MiB) can be mapped between two releases. On a
1.5 GB OpenDML AVI made like the files above (`ffmpeg -stream_loop -1 -i
corpus/files/avi/mpeg4_mp3.avi -map 0 -c copy -fs 1500000000`), `--source mmap` peaked at
8.5 MiB (the process's own baseline is 4.3 MiB, the binary's text being mapped in large folios
too); the same file through `--source pread` peaked at 4.3 MiB. The release threshold does not
change it (0.5, 1 and 2 MiB measured alike), nor do `MADV_NOHUGEPAGE` or `MADV_RANDOM`. Where
the 8 MiB bound must hold whatever the page cache looks like, use `--source pread`.

### 2026-12-07: `big.ts` at 9.8 MiB instead of 5.0 MiB, measured

Kernel 6.18.44 (`uname -r`: 6.18.44-fc-v1300), 2 cores, commit 86329d2, release CLI. Files:
`ffmpeg -stream_loop -1 -i corpus/files/mpegts/h264_aac.ts -map 0 -c copy -fs 2200000000 big.ts`
and `... -i corpus/files/mp4/h264_aac.mp4 ... -fs 2000000000 big.mp4` (moov at the end). Each
run: `/usr/bin/time -f "%M %e" mediaslice --source mmap packets --summary FILE`, with the
input mapping's `Rss` and `FilePmdMapped` read from `/proc/PID/smaps` every 10 ms. Page cache
emptied for one file with `posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)` (Python's
`os.posix_fadvise`).

What decides the figure is how the file's page cache was filled, not a change in the code:

| file | page cache | peak RSS (MiB) | wall (s) | input mapping, max seen |
|---|---|---:|---:|---:|
| big.ts | just written by ffmpeg (small folios) | 6.0, 6.5 | 3.3 | 256-512 KiB, no PMD |
| big.ts | emptied, then read once through the map | 9.7 (that read), 9.8, 9.6 | 9.3 (that read), 1.9-3.3 | 4 MiB = 2 PMD-mapped folios |
| big.mp4 | just written by ffmpeg | 9.0 | 0.75 | 2.8 MiB |
| big.mp4 | emptied, then read once through the map | 12.3 (that read), 12.3, 12.7 | 3.8 (that read), 0.5-0.7 | 6.5 MiB (payload + table runs) |
| big.mp4 | emptied and read once with `MADV_RANDOM` (small folios), then this run as on main | 8.5 | 0.7 | 2.7 MiB |

* Read-ahead through the map (`MADV_SEQUENTIAL` from `packets`) fills the cache with 2 MiB
  folios, and each is mapped whole by one fault (`FilePmdMapped`). The releases do run:
  `strace -c` counts 157,092 `madvise(MADV_DONTNEED)` on `big.ts`. The kernel updates the
  peak (VmHWM) when pages are unmapped, that is at each release, and at that moment the block
  behind the read position and the one ahead of it are both mapped: reads that cross a 2 MiB boundary (TS packets, the TS
  demuxer's 48,128-byte look-ahead) need both. So TS costs 2 folios (4 MiB), and MP4 about 3
  (payload and sample tables).
* The binary is the other share, and it also depends on the page cache: its text was
  2.5-2.7 MiB resident (3.4-3.8 MiB with rodata) as cargo wrote it, 4.1 MiB when the same file
  was just copied with `cp` (large folios). libc/libm/ld add about 1.4 MiB and heap + stack
  about 0.3 MiB.
* The 5.0 MiB in the table above was measured on files just written by ffmpeg (small folios).
  On this machine today the same case measured 6.0-6.5 MiB.

Levers, each tried alone on `big.ts` / `big.mp4` with 2 MiB folios in the cache (peak RSS
in MiB, wall in s; a throwaway build read each choice from an environment variable; none
of them is committed). Rows marked * were measured with a copy of that build whose text had
large folios: their baseline was 11.3 MiB / 3.9 s on big.ts, not 9.8 MiB:

| lever | big.ts peak / wall | big.mp4 peak / wall | verdict |
|---|---|---|---|
| none (as on main) | 9.8-9.9 / 2.9-5.1 | 12.3-12.7 / 0.5-0.7 | |
| `MADV_NOHUGEPAGE` on the map | 10.0 / 4.2 | 12.4 / 0.5 | no gain: no PMD mapping any more, but a fault still maps the whole large folio with PTEs (`PR_SET_THP_DISABLE` set by a wrapper: the same, 2-4 MiB of the input mapped, no PMD) |
| `MADV_RANDOM` on the map (no `MADV_SEQUENTIAL`) | 9.8 / 3.6 | 12.3 / 0.4 | no gain once the folios exist; on an empty cache it keeps folios small (big.mp4: 8.2 MiB) but read-ahead is gone: 38 s instead of 3.8 s |
| `MADV_SEQUENTIAL` at open (not only for `packets`) | 11.5* / 3.1 | 12.4 / 0.4 | no change |
| release every 0.5 MiB served | 9.9 / 5.0-6.7 | 12.3 / 0.7 | no gain, slower |
| release every 8 MiB served | 11.3* / 2.0 | | no change |
| `MADV_COLD` instead of `MADV_DONTNEED` | 2,106* / 4.7 | | wrong tool: COLD does not unmap, the whole file stays mapped |
| `MADV_PAGEOUT` instead of `MADV_DONTNEED` | 9.5* / 54 | | input mapping stays near 300 KiB, but it evicts the page cache (every read is a disk read): 18x slower, and it throws away cache other processes share |
| release when a run of reads enters a new 2 MiB block | 9.7 / 3.6-7.8 | 12.4 / 0.5 | no gain: the read that crosses the boundary maps both blocks anyway |
| charge a read only for the bytes past its run's end (windows that overlap count once) | 11.7-11.8 / 2.3-2.5 | 12.4 / 0.6-0.8 | 1,049 `madvise` calls instead of 157,092 and faster (big.ts, alternating, 3 runs each: median 2.4 s vs 3.7 s), but the peak grows by 2 MiB: fewer releases let a third folio be mapped at release time |

For the binary's own pages nothing was changed: the release profile is shared with the tests
and benches, and there was no time to measure `opt-level`/`codegen-units`/`strip` builds
(debug info is not loaded, so `strip` should not change resident pages). No test uses
`catch_unwind` or `#[should_panic]`; `panic = "abort"` was not measured either.

Conclusion: with 2 MiB folios in the cache, the mmap source keeps 2 folios (TS) to 3 folios
(MP4 with moov at the end) mapped, and no cheap `madvise` choice changes that without a large
slowdown. To get under 8 MiB whatever the page cache holds, use `--source pread` (4.0-4.4 MiB
above).
"""
TARGET = 8 * MIB
def mib(k): return f"{int(k) / MIB:.1f}"
def kb(n):
    n = int(n)
    return str(n) if n < 10_000 else f"{n / 1e3:.0f} k" if n < 10_000_000 else f"{n / 1e6:.0f} M"
def size(b):
    b = int(b)
    return f"{b / 2**30:.2f} GiB" if b >= 2**30 else f"{b / 2**20:.1f} MiB" if b >= 2**20 else f"{b / 1024:.0f} KiB"
L = []
now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
L += ["# Peak memory: `mediaslice packets --summary`", "",
      "Peak resident memory (the kernel's VmHWM, as `/usr/bin/time` reports it) and wall time of a",
      "fresh `mediaslice --source S packets --summary FILE` process per file: every packet is read and",
      "a CRC-32 taken over all payloads. Target: **at most 8 MiB** on every file. Produced by",
      "`benches/scripts/memory.sh`; do not edit the tables by hand.", "",
      f"* Command: `{cmd}`", f"* Date: {now}; commit {commit}",
      "* Machine: 2 cores, 24 GiB RAM; the large files are in the page cache when measured (they were",
      "  just written), so wall time is CPU time, not disk time.", ""]
big = [r for r in rows if r[0] == "big"]
small = [r for r in rows if r[0] == "small"]
over = [r for r in rows if int(r[4] or 0) > TARGET and r[6] == "0"]
L += ["## Summary", ""]
for kind, rs in (("small corpus files", small), ("large files", big)):
    for src in ("mmap", "pread", "reader"):
        v = [int(r[4]) for r in rs if r[3] == src]
        if v:
            L.append(f"* {kind}, `{src}`: {len(v)} runs, peak RSS median {mib(statistics.median(v))} MiB, max {mib(max(v))} MiB")
L.append(f"* Runs over 8 MiB: {len(over)}" + ("" if not over else ": " + ", ".join(f"{r[1]} ({r[3]}, {mib(r[4])} MiB)" for r in over)))
L.append("")
if big or small_only == "0":
    L += ["## Large files (made by the loop of `corpus/big.sh`, deleted after each run)", ""]
    if big:
        L += ["| file | size | source | peak RSS (MiB) | wall (s) | exit | summary |", "|---|---:|---|---:|---:|---:|---|"]
        for r in big:
            L.append(f"| {r[1]} | {size(r[2])} | {r[3]} | {mib(r[4])} | {r[5]} | {r[6]} | `{r[7]}` |")
        L.append("")
    if notes:
        L += ["Notes:", ""] + [f"* {n}" for n in notes] + [""]
def phase_table(title, runs):
    if not runs:
        return
    L.extend([f"## {title}", "",
              "In process (`mediaslice phases FILE`, mmap source): before each phase the peak is reset",
              "(`5` to `/proc/self/clear_refs`) and the heap counter's peak too (a counting global",
              "allocator in the binary), so each figure is that phase's own peak. Each cell:",
              "peak RSS · peak live heap (KiB) · allocations · bytes read / read calls in the phase.", "",
              "| file | open | tracks + tags | all packets | seek to the middle + 1000 packets |",
              "|---|---:|---:|---:|---:|"])
    for p in runs:
        ph = {x["phase"]: x for x in p["run"]["phases"]}
        cells = []
        for k in ("open", "tracks", "packets", "seek"):
            x = ph.get(k)
            cells.append("—" if not x else f"{mib(x['vm_hwm_kib'])} MiB · {x['heap_peak'] / 1024:.0f} · {x['allocs']} · {kb(x['bytes_read'])} / {x['reads']}")
        L.append(f"| {p['name']} | " + " | ".join(cells) + " |")
    L.append("")
phase_table("Per phase, large files", [p for p in phases if p["kind"] == "big"])
L += CAVEAT.splitlines() + [""]
L += ["## Small corpus files", "", "| file | size | mmap: peak RSS (MiB) / wall (s) | pread | exit |", "|---|---:|---:|---:|---:|"]
by = {}
for r in small:
    by.setdefault(r[1], {})[r[3]] = r
for name, d in sorted(by.items()):
    m, p = d.get("mmap"), d.get("pread")
    L.append(f"| {name} | {size((m or p)[2])} | {mib(m[4])} / {m[5]} | {mib(p[4])} / {p[5]} | {m[6]} |")
L.append("")
phase_table("Per phase, small corpus files", [p for p in phases if p["kind"] == "small"])
open(out, "w").write("\n".join(L))
print(f"memory.sh: wrote {out}", file=sys.stderr)
EOF
