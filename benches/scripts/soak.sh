#!/usr/bin/env bash
# The recorder soak (issue 19): one long-lived `soak` process writes
# fragmented MP4 from a looped camera-like input for SECONDS, rotating a ring
# of output files, and samples its own memory into a TSV. Two runs: as fast
# as the machine allows (most fragments, files and packets per hour) and
# paced at the input's own rate (a camera's timing). A summary of each TSV
# (RSS at 5 min, its maximum after, the growth between, the heap and the
# allocation count) is printed as a Markdown table, and a PNG is drawn when
# matplotlib is importable.
#
#   benches/scripts/soak.sh SECONDS [fast|paced|both]
#
# Environment: SOAK_DIR (outputs, TSVs, input; default /tmp/mediaslice-soak),
# SOAK_INPUT (default: a 60 s 1280x720 H.264 + AAC file made with ffmpeg),
# FILE_MIB (default 1024), RING (default 2), EVERY (seconds per row, 10).
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SECONDS_RUN=${1:?usage: soak.sh SECONDS [fast|paced|both]}
MODES=${2:-both}
DIR=${SOAK_DIR:-/tmp/mediaslice-soak}
mkdir -p "$DIR"
INPUT=${SOAK_INPUT:-$DIR/camera-720p-60s.mp4}
if [[ ! -f $INPUT ]]; then
  command -v ffmpeg >/dev/null || { echo "soak.sh: ffmpeg is needed to make the input (or set SOAK_INPUT)" >&2; exit 1; }
  # A camera's shape: 30 fps, a keyframe every 2 s, AAC beside it.
  ffmpeg -v error -y -f lavfi -i testsrc2=size=1280x720:rate=30 -f lavfi -i sine=frequency=440:sample_rate=48000 \
    -t 60 -c:v libx264 -preset ultrafast -g 60 -b:v 4M -c:a aac -b:a 128k "$INPUT"
fi
(cd "$REPO" && cargo build -q --release -p mediaslice-benches --bin soak)
BIN=${CARGO_TARGET_DIR:-$REPO/target}/release/soak
run() {
  local mode=$1 extra=()
  [[ $mode == paced ]] && extra=(--paced)
  rm -rf "$DIR/out-$mode"
  nice -n 19 ionice -c 3 "$BIN" "$INPUT" "$DIR/out-$mode" "$SECONDS_RUN" "${extra[@]}" --file-mib "${FILE_MIB:-1024}" --ring "${RING:-2}" \
    --every "${EVERY:-10}" --tsv "$DIR/soak-$mode.tsv"
  rm -rf "$DIR/out-$mode"
}
case $MODES in
  both) run fast & fast=$!; run paced; wait "$fast" ;;
  fast | paced) run "$MODES" ;;
  *) echo "soak.sh: mode is fast, paced or both" >&2; exit 2 ;;
esac
python3 "$REPO/benches/scripts/soak_summary.py" "$DIR"/soak-*.tsv
