#!/usr/bin/env bash
# The write side on a file over 4 GiB: every writer of the CLI (remux to
# Matroska, MP4, MP4 with the moov first, fragmented and hybrid MP4;
# package to HLS + DASH; repair of a cut hybrid and of an MP4 cut before its
# moov; a tag edit) run once each on one large input, with wall, user and
# system time and peak RSS (GNU time), and `ffmpeg -c copy` beside the
# remuxes. Every output that holds the whole input is read back with
# `mediaslice packets` and each stream's packets (count, sizes and payload
# CRC-32s in order) compared with the input's ("same" in the table); the
# repaired files give their own counts. Prints a Markdown table.
#
#   benches/scripts/write_big.sh [INPUT]
#
# INPUT defaults to $BIG_DIR/big720.mp4 (BIG_DIR default
# /tmp/mediaslice-big), made when missing by looping a 60 s 1280x720
# H.264 + AAC file (made with ffmpeg, libx264 ultrafast, 4 Mbit/s) to
# 4.5 GiB with `ffmpeg -stream_loop -1 -c copy -fs` (about 2.4 h, 717 k
# packets). Outputs go beside the input and are deleted after each row.
# Needs about 3 times the input's size free, a release build, ffmpeg.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BIN=${MEDIASLICE:-${CARGO_TARGET_DIR:-$REPO/target}/release/mediaslice}
DIR=${BIG_DIR:-/tmp/mediaslice-big}
mkdir -p "$DIR"
IN=${1:-$DIR/big720.mp4}
SMALL=$DIR/camera-720p-60s.mp4
if [[ ! -f $SMALL ]]; then
  ffmpeg -v error -y -f lavfi -i testsrc2=size=1280x720:rate=30 -f lavfi -i sine=frequency=440:sample_rate=48000 \
    -t 60 -c:v libx264 -preset ultrafast -g 60 -b:v 4M -c:a aac -b:a 128k "$SMALL"
fi
if [[ ! -f $IN ]]; then
  ffmpeg -nostdin -v error -y -stream_loop -1 -i "$SMALL" -map 0 -c copy -fs 4831838208 "$IN"
fi
[[ -x $BIN ]] || { echo "write_big.sh: no binary at $BIN" >&2; exit 1; }
T=$(mktemp -d "$DIR/write.XXXXXX")
trap 'rm -rf "$T"' EXIT
summary() { "$BIN" packets --summary "$1" 2>/dev/null || echo '{}'; }
field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1]).get(sys.argv[2], "?"))' "$1" "$2"; }
want=$(summary "$IN")
# measure LABEL CMD...: one row (wall, user, sys, peak MiB) into $ROW
measure() {
  local label=$1
  shift
  local t
  if ! /usr/bin/time -f '%e %U %S %M' -o "$T/time" "$@" >"$T/out.txt" 2>"$T/err.txt"; then
    ROW="| $label | failed: $(tail -c 200 "$T/err.txt" | tr '\n|' '  ') | | | | |"
    return 1
  fi
  read -r wall user sys kib <"$T/time"
  ROW="| $label | $wall | $user | $sys | $(awk -v k="$kib" 'BEGIN { printf "%.1f", k / 1024 }')"
}
# streams FILE: per stream, the packet count and a digest of the sizes and
# payload CRC-32s in the stream's order (so outputs that interleave the
# streams differently, as fragments do, compare equal when each stream's
# packets are the same, and times in another time base do not count).
streams() {
  "$BIN" packets "$1" 2>/dev/null | python3 -c '
import hashlib, sys
per = {}
for line in sys.stdin:
    f = line.split()
    if len(f) < 8 or not f[0].isdigit():
        continue
    h = per.setdefault(f[0], [0, hashlib.sha1()])
    h[0] += 1
    h[1].update(f"{f[4]} {f[7]};".encode())
print(" ".join(f"{k}:{v[0]}:{v[1].hexdigest()[:12]}" for k, v in sorted(per.items())))'
}
want_streams=$(streams "$IN")
check() { # OUTPUT: the same packets per stream as the input, or not
  local got
  got=$(streams "$1")
  if [[ $got == "$want_streams" ]]; then
    echo "same packets per stream ($(field "$want" packets))"
  else
    echo "DIFFERENT: $got (input $want_streams)"
  fi
}
echo "input: $IN, $(stat -c %s "$IN") bytes, $(field "$want" packets) packets, crc32 $(field "$want" crc32)"
echo
echo "| run | wall s | user s | sys s | peak RSS MiB | output |"
echo "|---|---|---|---|---|---|"
for target in "mkv:" "mp4:" "mp4:--faststart" "mp4:--fragmented" "mp4:--hybrid"; do
  ext=${target%%:*} flag=${target#*:}
  out=$T/out.$ext
  if measure "mediaslice remux → $ext $flag" "$BIN" remux "$IN" "$out" $flag; then
    echo "$ROW | $(check "$out") |"
  else
    echo "$ROW"
  fi
  rm -f "$out"
done
for target in "mkv:" "mp4:" "mp4:-movflags +faststart"; do
  ext=${target%%:*} flag=${target#*:}
  out=$T/ff.$ext
  # shellcheck disable=SC2086 # the flags are two words
  if measure "ffmpeg -c copy → $ext $flag" ffmpeg -nostdin -v error -y -i "$IN" -map 0 -c copy $flag "$out"; then
    echo "$ROW | $(check "$out") |"
  else
    echo "$ROW"
  fi
  rm -f "$out"
done
if measure "mediaslice package --hls --dash --segment 6s" "$BIN" package "$IN" "$T/pkg" --hls --dash --segment 6s; then
  echo "$ROW | $(ls "$T/pkg" | grep -c '^seg_') HLS segments, $(du -sm "$T/pkg" | cut -f1) MiB |"
else
  echo "$ROW"
fi
rm -rf "$T/pkg"
# A power cut while recording: a fragmented recording (what a hybrid one
# also is until it finishes) cut at 60 % of its length, mid-fragment.
"$BIN" remux "$IN" "$T/rec.mp4" --fragmented >/dev/null 2>&1
size=$(stat -c %s "$T/rec.mp4")
truncate -s $((size * 6 / 10)) "$T/rec.mp4"
if measure "mediaslice repair (fragmented recording cut at 60 %)" "$BIN" repair "$T/rec.mp4" "$T/fixed.mp4"; then
  got=$(summary "$T/fixed.mp4")
  echo "$ROW | $(field "$got" packets) packets recovered |"
else
  echo "$ROW"
fi
rm -f "$T/rec.mp4" "$T/fixed.mp4"
# A progressive recording cut before its moov: the sample tables rebuilt
# from the mdat, with the small file from the same "camera" as reference.
"$BIN" remux "$IN" "$T/rec.mp4" >/dev/null 2>&1
size=$(stat -c %s "$T/rec.mp4")
truncate -s $((size * 6 / 10)) "$T/rec.mp4"
if measure "mediaslice repair --reference (mp4 cut before its moov, at 60 %)" "$BIN" repair "$T/rec.mp4" "$T/fixed.mp4" --reference "$SMALL"; then
  got=$(summary "$T/fixed.mp4")
  echo "$ROW | $(field "$got" packets) packets recovered (streams left out: $(grep -c 'stream [0-9]* left out' "$T/err.txt" || true)) |"
else
  echo "$ROW"
fi
rm -f "$T/rec.mp4" "$T/fixed.mp4"
# A tag edit on the 4.5 GiB MP4 (moov at the end).
"$BIN" remux "$IN" "$T/tag.mp4" >/dev/null 2>&1
if measure "mediaslice tags --set title=… (4.5 GiB mp4, moov last)" "$BIN" tags "$T/tag.mp4" --set "title=Soak"; then
  echo "$ROW | $(check "$T/tag.mp4"), title $("$BIN" tags "$T/tag.mp4" --json 2>/dev/null | grep -o '"Soak"' | head -1) |"
else
  echo "$ROW"
fi
rm -f "$T/tag.mp4"
# The same on a faststart MP4 (moov first): the moov grows, so a copy
# with every chunk offset shifted.
"$BIN" remux "$IN" "$T/tag.mp4" --faststart >/dev/null 2>&1
if measure "mediaslice tags --set title=… (4.5 GiB mp4, moov first)" "$BIN" tags "$T/tag.mp4" --set "title=Soak"; then
  echo "$ROW | $(check "$T/tag.mp4"), title $("$BIN" tags "$T/tag.mp4" --json 2>/dev/null | grep -o '"Soak"' | head -1) |"
else
  echo "$ROW"
fi
