#!/bin/bash -eu
# OSS-Fuzz build script: every target of fuzz/ (cargo fuzz list), with its
# dictionary, seed corpus and libFuzzer options (the per-input bounds of
# docs/fuzzing.md). OSS-Fuzz's cargo wrapper supplies the sanitizer flags.
# Used by .clusterfuzzlite/build.sh too, and checked the way the builder runs
# it by fuzz/oss-fuzz/check.sh (which sets MEDIASLICE_FUZZ_SANITIZER=none:
# no sanitizer runtime outside the builder image).
cd "$SRC/mediaslice"

SANITIZER_FLAG=()
if [ -n "${MEDIASLICE_FUZZ_SANITIZER:-}" ]; then
  SANITIZER_FLAG=(--sanitizer "$MEDIASLICE_FUZZ_SANITIZER")
fi
cargo fuzz build -O --debug-assertions "${SANITIZER_FLAG[@]}"
# The builder sets CARGO_BUILD_TARGET_DIR; cargo puts the fuzzers there.
BIN=${CARGO_BUILD_TARGET_DIR:-fuzz/target}/x86_64-unknown-linux-gnu/release

# Seeds from corpus/files and corpus/regressions (../shared/samples is not
# part of the repository; seed.sh skips what it cannot find).
SEED_MAX_BYTES=1048576 fuzz/seed.sh || true
cat fuzz/dict/*.dict > /tmp/all.dict

for t in $(cargo fuzz list); do
  cp "$BIN/$t" "$OUT/"
  if [ -f "fuzz/dict/$t.dict" ]; then
    cp "fuzz/dict/$t.dict" "$OUT/$t.dict"
  else
    cp /tmp/all.dict "$OUT/$t.dict"
  fi
  printf '[libfuzzer]\nrss_limit_mb = 256\ntimeout = 2\ndict = %s.dict\n' "$t" > "$OUT/$t.options"
  if [ -d "fuzz/corpus/$t" ] && [ -n "$(ls -A "fuzz/corpus/$t")" ]; then
    (cd "fuzz/corpus/$t" && zip -q -r "$OUT/${t}_seed_corpus.zip" .)
  fi
done
