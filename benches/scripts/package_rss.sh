#!/usr/bin/env bash
# Peak RSS and wall time of `mediaslice package` on the large files of
# corpus/big.sh, for each segment duration and output form (issue 19's
# target: at most 8 MiB whatever the input size and segment duration):
#
#   package IN OUT --hls          (CMAF segments)
#   package IN OUT --hls --ts     (MPEG-TS segments)
#   package IN OUT --hls --dash   (CMAF for HLS, then one pass per stream)
#
# with --segment 2s, 6s and 12s, one fresh process per run, one run at a
# time. Peak RSS is the kernel's VmHWM (`/usr/bin/time -f %M`); while a run
# goes, /proc/PID/status is read every SAMPLE seconds (default 0.2) for the
# largest RssAnon and RssFile seen (the binary's own code pages are
# RssFile, as are the mapped input's). Each output folder is deleted after
# its run. A run that fails (the CMAF packager refuses an input whose decode
# times go back, such as Matroska with B-frames) is listed with its error
# and "n/a".
#
#   corpus/big.sh /work/scratch/big        # the inputs (about 20 GiB)
#   BIG_DIR=/work/scratch/big OUT_DIR=/work/scratch/pkg \
#       benches/scripts/package_rss.sh > table.md
#   FILES="big.ts big.mkv" SEGMENTS="6s" MODES="hls" benches/scripts/package_rss.sh
#   SOURCE=mmap benches/scripts/package_rss.sh   # --source mmap (default: none given)
#
# Writes a Markdown table on stdout (progress on stderr). Needs a release
# build (cargo build --release -p mediaslice-std; MEDIASLICE=path or
# CARGO_TARGET_DIR to find it) and /usr/bin/time (apt-get install time).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BIN=${MEDIASLICE:-${CARGO_TARGET_DIR:-$REPO/target}/release/mediaslice}
BIG_DIR=${BIG_DIR:-/tmp/mediaslice-big}
OUT_DIR=${OUT_DIR:-/tmp/mediaslice-package-rss}
FILES=${FILES:-big_moov_end.mp4 big_faststart.mp4 big.mkv big.ts big_opendml.avi}
SEGMENTS=${SEGMENTS:-2s 6s 12s}
MODES=${MODES:-hls ts dash}
SAMPLE=${SAMPLE:-0.2}
LIMIT_KIB=$((8 * 1024))
SOURCE=${SOURCE:-}
source_args=()
[[ -n $SOURCE ]] && source_args=(--source "$SOURCE")

[[ -x $BIN ]] || { echo "package_rss.sh: no binary at $BIN" >&2; exit 1; }
[[ -x /usr/bin/time ]] || { echo "package_rss.sh: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }
TMP=$(mktemp -d /tmp/package-rss.XXXXXX)
trap 'rm -rf "$TMP" "$OUT_DIR"' EXIT
trap 'exit 130' INT TERM

mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

echo "| input | size | source | segment | output | peak RSS (MiB) | RssAnon max (MiB) | RssFile max (MiB) | wall (s) | segments | ≤ 8 MiB |"
echo "|---|---:|---|---|---|---:|---:|---:|---:|---:|---|"
for name in $FILES; do
	in=$BIG_DIR/$name
	[[ -f $in ]] || { echo "package_rss.sh: skipping $name (not in $BIG_DIR)" >&2; continue; }
	size=$(awk -v b="$(stat -c %s "$in")" 'BEGIN { printf "%.2f GiB", b / 2^30 }')
	for seg in $SEGMENTS; do
		for mode in $MODES; do
			case $mode in
			hls) args=(--hls) ;;
			ts) args=(--hls --ts) ;;
			dash) args=(--hls --dash) ;;
			*) echo "package_rss.sh: unknown mode $mode" >&2; exit 1 ;;
			esac
			rm -rf "$OUT_DIR"
			echo "== $name --segment $seg ${args[*]}" >&2
			/usr/bin/time -f '%M %e' -o "$TMP/time" \
				"$BIN" "${source_args[@]}" package "$in" "$OUT_DIR" "${args[@]}" --segment "$seg" 2>"$TMP/err" &
			tpid=$!
			anon=0 file=0
			# The child of /usr/bin/time is the packager.
			while kill -0 "$tpid" 2>/dev/null; do
				pid=$(pgrep -P "$tpid" | head -n1 || true)
				if [[ -n $pid && -r /proc/$pid/status ]]; then
					read -r a f < <(awk '/^RssAnon/ { a = $2 } /^RssFile/ { f = $2 } END { print a + 0, f + 0 }' \
						"/proc/$pid/status" 2>/dev/null || echo "0 0")
					((a > anon)) && anon=$a
					((f > file)) && file=$f
				fi
				sleep "$SAMPLE"
			done
			rc=0
			wait "$tpid" || rc=$?
			read -r rss wall < <(tail -n1 "$TMP/time")
			segs=$(sed -n 's/.* \([0-9]*\) segments,.*/\1/p' "$TMP/err" | tail -n1)
			ok=yes
			((rss > LIMIT_KIB)) && ok="**no**"
			# A refused input meets nothing: its figure is the process's start.
			[[ $rc -eq 0 ]] || { segs="failed ($rc): $(tail -n1 "$TMP/err")"; ok="n/a"; }
			echo "| $name | $size | ${SOURCE:-default} | $seg | ${args[*]} | $(mib "$rss") | $(mib "$anon") | $(mib "$file") | $wall | $segs | $ok |"
			rm -rf "$OUT_DIR"
		done
	done
done
