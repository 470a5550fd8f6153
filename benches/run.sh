#!/usr/bin/env bash
# Runs the whole benchmark suite of issue 9 and writes the report.
#
#   benches/run.sh                 full run (makes the large files if missing; about an hour here)
#   benches/run.sh --quick         smoke test: corpus files only, short measurements (about 6 minutes
#                                  once built)
#   benches/run.sh --update-docs   also rewrite the generated block of docs/bench/README.md
#   benches/run.sh --only STEPS    run only these comma-separated steps:
#                                  files,build,throughput,alternate,probe,alloc,process,probeproc,icount,report
#
# Environment: CARGO_TARGET_DIR (default: the workspace's target/),
# MEDIASLICE_BENCH_FILES (large files, default /tmp/mediaslice-bench),
# MEDIASLICE_BENCH_OUT (results, default $MEDIASLICE_BENCH_FILES/results),
# ROUNDS / WARMUP (whole-process rounds, default 5 / 1), JOBS (cargo -j, default 1),
# CRITERION_HOME (criterion's data, default $CARGO_TARGET_DIR/criterion).
#
# Results: $MEDIASLICE_BENCH_OUT/{counts,alternate,alloc,probe_facts,icount}.tsv,
# {packets,probe}.json, machine.txt, report.md; criterion's own data under
# $CRITERION_HOME.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
QUICK=
DOCS=
ONLY=
while (($#)); do
	case $1 in
	--quick) QUICK=1 ;;
	--update-docs) DOCS=1 ;;
	--only) ONLY=$2; shift ;;
	-h | --help) sed -n '2,/^set /p' "$0" | sed '$d'; exit 0 ;;
	*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
step() { [[ -z $ONLY || ,$ONLY, == *,$1,* ]]; }

export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
export MEDIASLICE_BENCH_FILES=${MEDIASLICE_BENCH_FILES:-/tmp/mediaslice-bench}
export MEDIASLICE_BENCH_OUT=${MEDIASLICE_BENCH_OUT:-$MEDIASLICE_BENCH_FILES/results}
JOBS=${JOBS:-1}
CRIT=${CRITERION_HOME:-$CARGO_TARGET_DIR/criterion}
OUT=$MEDIASLICE_BENCH_OUT
mkdir -p "$OUT"
if [[ -n $QUICK ]]; then
	export MEDIASLICE_BENCH_QUICK=1 ROUNDS=${ROUNDS:-2} WARMUP=${WARMUP:-0}
else
	unset MEDIASLICE_BENCH_QUICK
	export ROUNDS=${ROUNDS:-5} WARMUP=${WARMUP:-1}
fi
MS=$CARGO_TARGET_DIR/release/mediaslice
export WALK_BIN=$CARGO_TARGET_DIR/release/walk
export MMAPCRC_BIN=$CARGO_TARGET_DIR/release/mmapcrc
BENCH=(cargo bench -j "$JOBS" -p mediaslice-benches)

if step files && [[ -z $QUICK ]]; then
	benches/make_files.sh "$MEDIASLICE_BENCH_FILES"
fi

if step build; then
	cargo build -j "$JOBS" --release -p mediaslice-std --bin mediaslice
	cargo build -j "$JOBS" --release -p mediaslice-benches --bin walk --bin mmapcrc
	"${BENCH[@]}" --no-run
fi

{
	echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
	echo "commit: $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- core std-adapter benches || echo ' (+ uncommitted changes)')"
	echo "mode: $([[ -n $QUICK ]] && echo quick || echo full)"
	echo "nproc: $(nproc)"
	lscpu | grep -E '^(Model name|Architecture|CPU\(s\)|Thread|Core|Socket|L1d|L2|L3|CPU max MHz)' || true
	free -h | sed -n '1,2p'
	rustc --version
	ffmpeg -version | head -1
	mediainfo --version 2>/dev/null | tail -1 || true
	valgrind --version 2>/dev/null || true
} >"$OUT/machine.txt"

if step throughput; then
	"${BENCH[@]}" --bench throughput
fi
if step alternate; then
	"${BENCH[@]}" --bench alternate >/dev/null
fi
if step probe; then
	"${BENCH[@]}" --bench probe
fi
if step alloc; then
	"${BENCH[@]}" --bench alloc >/dev/null
fi

# The files of the whole-process comparisons: every large file (full run),
# plus each family's corpus file.
mapfile -t CORPUS_ONE < <(sed -n 's/^ *fam("[^"]*", "\([^"]*\)".*/\1/p' benches/src/lib.rs | sed "s|^|$ROOT/corpus/files/|")
BIG=()
if [[ -z $QUICK ]]; then
	for f in "$MEDIASLICE_BENCH_FILES"/loop130k.* "$MEDIASLICE_BENCH_FILES"/hd1080.* "$MEDIASLICE_BENCH_FILES"/long.wav; do
		[[ -f $f ]] && "$MS" probe "$f" >/dev/null 2>&1 && BIG+=("$f")
	done
fi
if step process; then
	python3 benches/compare.py packets "$MS" "$OUT/packets.json" "${BIG[@]}" "${CORPUS_ONE[@]}"
fi
if step probeproc; then
	mapfile -t ALL < <(for d in $(sed -n 's/^ *fam("[^"]*", "[^"]*", &\[\([^]]*\)\].*/\1/p' benches/src/lib.rs | tr -d '",'); do
		ls "$ROOT/corpus/files/$d"/*; done)
	[[ -n $QUICK ]] && ALL=("${CORPUS_ONE[@]}")
	python3 benches/compare.py probe "$MS" "$OUT/probe.json" "${ALL[@]}" "${BIG[@]}"
fi
if step icount && command -v valgrind >/dev/null; then
	BIN=$("${BENCH[@]}" --no-run --message-format=json 2>/dev/null |
		python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "icount" and m.get("executable"):
        print(m["executable"])')
	if [[ -n $QUICK ]]; then
		benches/icount.sh "$BIN" "$OUT/icount.tsv" corpus/mp4/
	else
		benches/icount.sh "$BIN" "$OUT/icount.tsv" big/loop130k
	fi
fi
if step report; then
	python3 benches/report.py "$CRIT" "$OUT" >"$OUT/report.md"
	echo "report: $OUT/report.md"
	if [[ -n $DOCS ]]; then
		python3 benches/report.py "$CRIT" "$OUT" --readme docs/bench/README.md
		echo "updated docs/bench/README.md"
	fi
fi
