#!/usr/bin/env bash
# A fuzz campaign that keeps going after findings: fork mode, niced, PAR targets at a time.
#   fuzz/campaign.sh "$PWD/fuzz" SECONDS PAR TARGET...   (after cargo +nightly fuzz build --sanitizer none)
# Logs: fuzz/logs-campaign/<target>.log and DONE; inputs kept: fuzz/artifacts-campaign/<target>/.
set -uo pipefail
FUZZ=$1; SECS=$2; PAR=$3; shift 3
cd $FUZZ
BIN=$FUZZ/target/x86_64-unknown-linux-gnu/release
mkdir -p logs-campaign artifacts-campaign
cat dict/*.dict > target/all.dict
dict_for() { [ -f "$FUZZ/dict/$1.dict" ] && echo "$FUZZ/dict/$1.dict" || echo "$FUZZ/target/all.dict"; }
run_one() {
  local t=$1
  [ -d corpus/$t ] || FUZZ_CORPUS=$FUZZ/corpus ./seed.sh $t >/dev/null 2>&1
  mkdir -p corpus/$t artifacts-campaign/$t
  local start=$(date +%s)
  nice -n 19 $BIN/$t corpus/$t -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 -max_total_time=$SECS \
     -rss_limit_mb=256 -timeout=2 -dict=$(dict_for $t) -artifact_prefix=$FUZZ/artifacts-campaign/$t/ -print_final_stats=1 > logs-campaign/$t.log 2>&1
  echo "$t done $(( $(date +%s) - start )) s" >> logs-campaign/DONE
}
for t in "$@"; do
  while [ "$(jobs -rp | wc -l)" -ge "$PAR" ]; do wait -n || true; done
  echo "$(date +%T) start $t" >> logs-campaign/DONE
  run_one $t &
done
wait
