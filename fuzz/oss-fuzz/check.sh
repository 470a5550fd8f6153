#!/usr/bin/env bash
# Checks fuzz/oss-fuzz/build.sh (through .clusterfuzzlite/build.sh) the way
# the OSS-Fuzz / ClusterFuzzLite builder runs it, without Docker: SRC, OUT
# and CARGO_BUILD_TARGET_DIR set, the checkout at $SRC/mediaslice. Then
# every target of `cargo fuzz list` must be in $OUT with its .options and
# dictionary (and a seed zip where seeds exist), and each fuzzer is run from
# $OUT on its unzipped seeds, as the runner does: FUZZ_RUNS inputs (1000)
# from the fixed seed FUZZ_SEED (1), at most FUZZ_SECONDS (20) per target,
# a crash kept in FUZZ_ARTIFACTS (fuzz/artifacts/oss-fuzz-check/).
#
#   fuzz/oss-fuzz/check.sh
#   FUZZ_SEED=$RANDOM FUZZ_RUNS=100000 FUZZ_SECONDS=60 fuzz/oss-fuzz/check.sh   # explore
#
# Called by .ci/run. No sanitizer (MEDIASLICE_FUZZ_SANITIZER=none): the
# ASan runtime is the builder image's.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SECONDS_PER=${FUZZ_SECONDS:-20}
RUNS=${FUZZ_RUNS:-1000}
SEED=${FUZZ_SEED:-1}
ARTIFACTS=${FUZZ_ARTIFACTS:-$ROOT/fuzz/artifacts/oss-fuzz-check}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/mediaslice-ossfuzz.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export SRC=$WORK/src OUT=$WORK/out CARGO_BUILD_TARGET_DIR=${OSSFUZZ_TARGET_DIR:-$ROOT/fuzz/target/oss-fuzz-check}
mkdir -p "$SRC" "$OUT" "$ARTIFACTS"
ln -s "$ROOT" "$SRC/mediaslice"
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  export RUSTUP_TOOLCHAIN=nightly
else
  export RUSTC_BOOTSTRAP=1
fi
export MEDIASLICE_FUZZ_SANITIZER=${MEDIASLICE_FUZZ_SANITIZER:-none}

start=$(date +%s)
bash "$ROOT/.clusterfuzzlite/build.sh" > "$WORK/build.log" 2>&1 || {
  tail -30 "$WORK/build.log"
  echo "check.sh: build.sh failed" >&2
  exit 1
}
echo "build.sh: $(( $(date +%s) - start )) s"

targets=$(cd "$ROOT" && cargo fuzz list)
fail=0 seeded=0 n=0
for t in $targets; do
  n=$((n + 1))
  for f in "$t" "$t.options" "$t.dict"; do
    [ -e "$OUT/$f" ] || { echo "missing in \$OUT: $f"; fail=1; }
  done
  [ -x "$OUT/$t" ] || continue
  corpus=$WORK/corpus/$t
  mkdir -p "$corpus"
  if [ -f "$OUT/${t}_seed_corpus.zip" ]; then
    seeded=$((seeded + 1))
    (cd "$corpus" && unzip -q "$OUT/${t}_seed_corpus.zip")
  elif [ -d "$ROOT/fuzz/corpus/$t" ] && [ -n "$(ls -A "$ROOT/fuzz/corpus/$t")" ]; then
    echo "$t: seeds exist but no ${t}_seed_corpus.zip in \$OUT"; fail=1
  fi
  # The runner's options: those the .options file names.
  rss=$(sed -n 's/^rss_limit_mb = //p' "$OUT/$t.options")
  to=$(sed -n 's/^timeout = //p' "$OUT/$t.options")
  # A fixed seed and a bounded number of runs: the same mutations on every
  # machine, so this check of the build cannot fail at random on a new
  # finding (finding them is the campaigns' and ClusterFuzzLite's job).
  if ! (cd "$OUT" && timeout 120 "./$t" -seed="$SEED" -runs="$RUNS" -max_total_time="$SECONDS_PER" \
        -rss_limit_mb="${rss:-2560}" -timeout="${to:-25}" -dict="$t.dict" \
        -artifact_prefix="$ARTIFACTS/$t-" "$corpus" > "$WORK/$t.log" 2>&1); then
    grep -A2 -E 'panicked at|ERROR: libFuzzer' "$WORK/$t.log" | head -12
    echo "$t: the fuzzer failed from \$OUT (seed $SEED); the input is in $ARTIFACTS/"; fail=1
  else
    echo "$t: ran from \$OUT: $(grep -o 'Done [0-9]* runs' "$WORK/$t.log" || echo 'runs unknown')"
  fi
done
echo "oss-fuzz check: $n targets built into \$OUT, $seeded with seed zips, $(( $(date +%s) - start )) s"
exit $fail
