#!/usr/bin/env bash
# Line coverage of a fuzz target over its corpus, per format module:
#
#   fuzz/coverage.sh TARGET [CORPUS_DIR]     # default fuzz/corpus/TARGET
#
# `cargo fuzz coverage` builds TARGET with -Cinstrument-coverage and replays
# the corpus; llvm-cov (rustup's llvm-tools component of the nightly
# toolchain) then gives per-file line coverage, which this sums per folder
# of core/src (core/src/format/mp4, core/src/codec, ...). Prints a table and
# the files of core/src/format under 50% (the uncovered parser code).
set -euo pipefail
FUZZ=$(cd "$(dirname "$0")" && pwd)
T=${1:?usage: fuzz/coverage.sh TARGET [CORPUS_DIR]}
CORPUS=${2:-$FUZZ/corpus/$T}
[ -d "$CORPUS" ] || "$FUZZ/seed.sh" "$T" >/dev/null
rustup component add --toolchain nightly llvm-tools >/dev/null 2>&1 || rustup component add --toolchain nightly llvm-tools-preview >/dev/null 2>&1 || true
SYSROOT=$(rustc +nightly --print sysroot)
LLVM_COV=$(find "$SYSROOT" -name llvm-cov -type f | head -1)
[ -x "$LLVM_COV" ] || { echo "coverage.sh: llvm-cov not found (rustup component add --toolchain nightly llvm-tools)" >&2; exit 1; }
cd "$FUZZ"
cargo +nightly fuzz coverage "$T" "$CORPUS" > "$FUZZ/coverage/$T.build.log" 2>&1 || {
  mkdir -p "$FUZZ/coverage"; cargo +nightly fuzz coverage "$T" "$CORPUS" 2>&1 | tail -20; exit 1; }
BIN=$FUZZ/target/x86_64-unknown-linux-gnu/coverage/x86_64-unknown-linux-gnu/release/$T
PROF=$FUZZ/coverage/$T/coverage.profdata
"$LLVM_COV" export -format=text -summary-only -instr-profile="$PROF" "$BIN" > "$FUZZ/coverage/$T.json"
python3 - "$FUZZ/coverage/$T.json" "$T" "$(ls "$CORPUS" | wc -l)" <<'PY'
import json, os, sys
from collections import defaultdict
data = json.load(open(sys.argv[1]))
per = defaultdict(lambda: [0, 0])
low = []
for f in data["data"][0]["files"]:
    name = f["filename"]
    i = name.find("core/src/")
    if i < 0:
        continue
    rel = name[i:]
    lines = f["summary"]["lines"]
    folder = os.path.dirname(rel)
    per[folder][0] += lines["covered"]
    per[folder][1] += lines["count"]
    if rel.startswith("core/src/format/") and lines["count"] >= 20 and lines["percent"] < 50:
        low.append((lines["percent"], rel, lines["count"], folder))
tc = sum(c for c, _ in per.values()); tn = sum(n for _, n in per.values())
print(f"target {sys.argv[2]}: {sys.argv[3]} corpus inputs; core/src lines covered {tc}/{tn} = {100*tc/max(tn,1):.1f}%")
print(f"{'module (folders the target reaches)':44} {'lines':>7} {'covered':>8}")
for folder, (c, n) in sorted(per.items()):
    if n and c:
        print(f"{folder:44} {n:7} {100*c/n:7.1f}%")
# The uncovered parser code: files under 50% in the folders the target
# reaches at all (a folder at 0% is another target's).
low = [x for x in low if per[x[3]][0] > 0]
if low:
    print("format files under 50% (at least 20 lines) in the folders the target reaches:")
    for p, rel, n, _ in sorted(low):
        print(f"  {rel} {p:.1f}% of {n}")
PY
