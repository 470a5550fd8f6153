#!/usr/bin/env bash
# Instruction counts (valgrind callgrind) of open + every packet, for every
# implementation, mode and throughput file of the suite: stable figures on a
# shared machine where wall time is noisy.
#
#   benches/icount.sh ICOUNT_BIN OUT.tsv [FILTER]
#
# ICOUNT_BIN is the `icount` bench executable (run.sh finds it). Only the
# function `measured` is counted (--toggle-collect), so loading the file is
# not. FILTER keeps the lines of `ICOUNT_BIN --list` that contain it. The
# callgrind output of each mediaslice run is kept beside OUT.tsv
# (callgrind.<label>.<mode>.out) for callgrind_annotate. ICOUNT_SKIP names
# implementations to leave out (default "mp4": the mp4 crate takes about 10
# minutes per large file under callgrind; set ICOUNT_SKIP= to include it).
set -euo pipefail
SKIP=${ICOUNT_SKIP-mp4}
BIN=$1
OUT=$2
FILTER=${3:-}
DIR=$(dirname "$OUT")
mkdir -p "$DIR"
printf 'file\tmode\timpl\tir\tpackets\tbytes\n' >"$OUT"
"$BIN" --list | grep -F -- "$FILTER" | while IFS=$'\t' read -r fam impl mode path label; do
	[[ -n $SKIP && " $SKIP " == *" $impl "* ]] && continue
	cg=$(mktemp)
	if ! res=$(valgrind --tool=callgrind --callgrind-out-file="$cg" --toggle-collect='*icount::measured*' \
		"$BIN" "$fam" "$impl" "$mode" "$path" 2>/dev/null); then
		rm -f "$cg"
		continue
	fi
	ir=$(awk '/^summary:/ {print $2}' "$cg")
	read -r packets bytes _ <<<"$res"
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$mode" "$impl" "$ir" "$packets" "$bytes" | tee -a "$OUT"
	if [[ $impl == mediaslice ]]; then
		mv "$cg" "$DIR/callgrind.$(echo "$label" | tr '/' '_').$mode.out"
	else
		rm -f "$cg"
	fi
done
