#!/usr/bin/env bash
# Builds every fuzz target and runs each for SECONDS (default 30) with the
# per-input bounds of docs/fuzzing.md; fails on any crash, timeout or OOM.
#
#   fuzz/smoke.sh [SECONDS] [TARGET ...]
#
# Environment:
#   FUZZ_SANITIZER  cargo fuzz --sanitizer (default none: the library is
#                   forbid(unsafe_code), so ASan mostly slows the search)
#   FUZZ_PARALLEL   targets run at once (default 1; the machine has 2 cores)
#   FUZZ_CORPUS     corpus root (default fuzz/corpus, built by seed.sh when
#                   a target's folder is missing)
# Output: fuzz/logs/<target>.log, a summary table (executions, cov, ft,
# corpus) on stdout, and any crashing input in fuzz/artifacts/<target>/.
set -uo pipefail

FUZZ=$(cd "$(dirname "$0")" && pwd)
cd "$FUZZ"
SECONDS_PER=${1:-30}
shift || true
SAN=${FUZZ_SANITIZER:-none}
PAR=${FUZZ_PARALLEL:-1}
CORPUS=${FUZZ_CORPUS:-$FUZZ/corpus}
export CARGO_BUILD_JOBS=${CARGO_BUILD_JOBS:-1}

# Toolchain: nightly when rustup has it, else stable with RUSTC_BOOTSTRAP.
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  CARGO=(cargo +nightly)
else
  export RUSTC_BOOTSTRAP=1
  CARGO=(cargo)
fi
if ! "${CARGO[@]}" fuzz --version >/dev/null 2>&1; then
  echo "smoke.sh: installing cargo-fuzz"
  "${CARGO[@]}" install cargo-fuzz --locked || { echo "smoke.sh: cannot install cargo-fuzz" >&2; exit 1; }
fi

[ -n "${CARGO_TARGET_DIR:-}" ] || unset CARGO_TARGET_DIR
echo "smoke.sh: building ($("${CARGO[@]}" fuzz --version), sanitizer $SAN)"
"${CARGO[@]}" fuzz build --sanitizer "$SAN" || { echo "smoke.sh: build failed" >&2; exit 1; }
TRIPLE=$(rustc -vV | sed -n 's/^host: //p')
# cargo fuzz honours CARGO_TARGET_DIR (an empty one means unset).
[ -n "${CARGO_TARGET_DIR:-}" ] || unset CARGO_TARGET_DIR
BIN=$(realpath -m "${CARGO_TARGET_DIR:-$FUZZ/target}")/$TRIPLE/release

targets=("$@")
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <("${CARGO[@]}" fuzz list)

# Dictionaries: dict/<target>.dict for a parser target, all of them merged for
# the detection and differential targets.
mkdir -p "$FUZZ/logs" "$FUZZ/target"
cat "$FUZZ"/dict/*.dict > "$FUZZ/target/all.dict"
dict_for() { [ -f "$FUZZ/dict/$1.dict" ] && echo "$FUZZ/dict/$1.dict" || echo "$FUZZ/target/all.dict"; }

run_one() {
  local t=$1 log=$FUZZ/logs/$1.log
  [ -d "$CORPUS/$t" ] || FUZZ_CORPUS="$CORPUS" "$FUZZ/seed.sh" "$t" >/dev/null
  mkdir -p "$CORPUS/$t" "$FUZZ/artifacts/$t"
  "$BIN/$t" "$CORPUS/$t" -max_total_time="$SECONDS_PER" -rss_limit_mb=256 -timeout=2 \
    -dict="$(dict_for "$t")" -artifact_prefix="$FUZZ/artifacts/$t/" -print_final_stats=1 \
    > "$log" 2>&1
}

fail=0
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$PAR" ]; do wait -n || true; done
  echo "smoke.sh: $t for ${SECONDS_PER}s"
  run_one "$t" &
done
wait

printf '\n%-18s %10s %8s %8s %8s  %s\n' target execs exec/s cov ft result
for t in "${targets[@]}"; do
  log=$FUZZ/logs/$t.log
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  last=$(grep -E '^#[0-9]+.*cov: [0-9]+' "$log" | tail -1)
  cov=$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  if grep -qE 'ERROR: libFuzzer|SUMMARY: libFuzzer|panicked at|==ERROR' "$log"; then
    result="FAIL ($(grep -oE 'deadly signal|timeout|out-of-memory|leak' "$log" | head -1); $(ls "$FUZZ/artifacts/$t" | head -1))"
    fail=1
  elif [ -z "$execs" ]; then
    result="FAIL (no stats: see logs/$t.log)"
    fail=1
  else
    result=ok
  fi
  printf '%-18s %10s %8s %8s %8s  %s\n' "$t" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "$result"
done
exit $fail
