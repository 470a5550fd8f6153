#!/usr/bin/env bash
# Replays the inputs of fuzz/regressions/<target>/ through the built fuzz
# target binaries (`cargo fuzz build` first): findings that only misbehave
# under `cfg(fuzzing)` (CRC checks off, so `cargo test` cannot reproduce
# them). Each input runs once with the per-input bounds of docs/fuzzing.md;
# any crash, timeout or OOM fails the script. Called by .ci/run.
#
#   fuzz/replay.sh
set -uo pipefail

FUZZ=$(cd "$(dirname "$0")" && pwd)
[ -n "${CARGO_TARGET_DIR:-}" ] || unset CARGO_TARGET_DIR
TRIPLE=$(rustc -vV | sed -n 's/^host: //p')
BIN=$(realpath -m "${CARGO_TARGET_DIR:-$FUZZ/target}")/$TRIPLE/release

fail=0 n=0
for dir in "$FUZZ"/regressions/*/; do
  t=$(basename "$dir")
  if [ ! -x "$BIN/$t" ]; then
    echo "replay.sh: no binary for target $t in $BIN (run cargo fuzz build)" >&2
    exit 1
  fi
  for f in "$dir"*; do
    [ -f "$f" ] || continue
    n=$((n + 1))
    if ! out=$("$BIN/$t" -rss_limit_mb=256 -timeout=2 "$f" 2>&1); then
      echo "replay.sh: FAIL $t ${f#"$FUZZ"/}"
      grep -A3 -E 'panicked at|ERROR: libFuzzer' <<<"$out" | head -8
      fail=1
    fi
  done
done
echo "replay.sh: $n inputs, $([ $fail = 0 ] && echo "all passed" || echo "failures above")"
exit $fail
