#!/usr/bin/env bash
# A fuzz campaign that keeps going after findings: fork mode, niced, PAR targets at a time.
#   fuzz/campaign.sh "$PWD/fuzz" SECONDS PAR TARGET...   (after cargo +nightly fuzz build --sanitizer none)
# Logs: fuzz/logs-campaign/<target>.log and DONE; inputs kept: fuzz/artifacts-campaign/<target>/.
# ROUNDS=N (default 1) splits SECONDS into N rounds with corpus minimisation
# (libFuzzer -merge=1 into a fresh folder, which then replaces the corpus)
# after each, so a long campaign's corpus keeps only inputs that add coverage
# and stays under libFuzzer's RSS bound (slice_vs_stream once ran out of
# memory on its own 205 MB in-memory corpus).
set -uo pipefail
FUZZ=$1; SECS=$2; PAR=$3; shift 3
ROUNDS=${ROUNDS:-1}
cd $FUZZ
BIN=$FUZZ/target/x86_64-unknown-linux-gnu/release
mkdir -p logs-campaign artifacts-campaign
cat dict/*.dict > target/all.dict
dict_for() { [ -f "$FUZZ/dict/$1.dict" ] && echo "$FUZZ/dict/$1.dict" || echo "$FUZZ/target/all.dict"; }
run_one() {
  local t=$1
  [ -d corpus/$t ] || FUZZ_CORPUS=$FUZZ/corpus ./seed.sh $t >/dev/null 2>&1
  mkdir -p corpus/$t artifacts-campaign/$t
  local start=$(date +%s) per=$(( SECS / ROUNDS )) r
  [ "$per" -ge 1 ] || per=1
  : > logs-campaign/$t.log
  for r in $(seq 1 "$ROUNDS"); do
    nice -n 19 $BIN/$t corpus/$t -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 -max_total_time=$per \
       -rss_limit_mb=256 -timeout=2 -dict=$(dict_for $t) -artifact_prefix=$FUZZ/artifacts-campaign/$t/ -print_final_stats=1 >> logs-campaign/$t.log 2>&1
    [ "$ROUNDS" -gt 1 ] || continue
    local before=$(ls corpus/$t | wc -l)
    rm -rf corpus/$t.min && mkdir -p corpus/$t.min
    if nice -n 19 $BIN/$t -merge=1 -rss_limit_mb=2048 -timeout=2 corpus/$t.min corpus/$t >> logs-campaign/$t.log 2>&1; then
      rm -rf corpus/$t && mv corpus/$t.min corpus/$t
      echo "$t round $r: corpus $before -> $(ls corpus/$t | wc -l) inputs ($(du -sh corpus/$t | cut -f1))" >> logs-campaign/DONE
    else
      rm -rf corpus/$t.min
      echo "$t round $r: merge failed, corpus kept ($before inputs)" >> logs-campaign/DONE
    fi
  done
  echo "$t done $(( $(date +%s) - start )) s" >> logs-campaign/DONE
}
for t in "$@"; do
  while [ "$(jobs -rp | wc -l)" -ge "$PAR" ]; do wait -n || true; done
  echo "$(date +%T) start $t" >> logs-campaign/DONE
  run_one $t &
done
wait
