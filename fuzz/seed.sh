#!/usr/bin/env bash
# Builds the seed corpora of the fuzz targets in fuzz/corpus/<target>/ (not
# committed) from corpus/files/, ../shared/samples/ and corpus/regressions/.
#
#   fuzz/seed.sh            # all targets
#   fuzz/seed.sh mp4 wav    # some targets
#
# Environment: SAMPLES (default <repo>/../shared/samples), SEED_MAX_BYTES
# (default 1048576: larger files are skipped, they slow libFuzzer down more
# than they teach it).
#
# A new format adds one line to FAMILIES below: its target name, then the
# family folders (under corpus/files, ../shared/samples and
# corpus/regressions) and the file-name globs in ../shared/samples/fuzz
# that seed it.
set -euo pipefail

FUZZ=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$FUZZ")
SAMPLES=${SAMPLES:-$ROOT/../shared/samples}
MAX=${SEED_MAX_BYTES:-1048576}

declare -A FAMILIES=(
  # target  families [glob ...] (globs for ../shared/samples/fuzz)
  [mp4]="mp4 *.mp4 *.m4a *.m4b *.m4s *.mov *.3gp *.avif"
  [wav]="wav *.wav"
  [matroska]="matroska *.mkv *.mka *.webm"
  [avi]="avi *.avi"
  [aiff]="aiff *.aif *.aiff *.aifc"
  [caf]="caf *.caf"
  [au]="au *.au *.snd"
  [tta]="tta *.tta"
  [dsf]="dsf *.dsf"
  [dff]="dff *.dff"
  [iff]="iff *.iff *.lbm *.ilbm *.8svx *.16sv"
  [wavpack]="wv *.wv"
  [ape]="ape *.ape"
  [musepack]="mpc *.mpc"
  [mxf]="mxf *.mxf"
  [mpegts]="mpegts *.ts *.m2ts"
  [mpegps]="mpegps *.mpg *.ps *.vob"
  [asf]="asf *.asf *.wma *.wmv"
  [flv]="flv *.flv"
  [ogg]="ogg *.ogg *.oga *.ogv *.opus *.spx media__continued_packet_over_two_pages media__four_packets_with_empty_page media__zero_sized_packets_at_end_of_stream"
  [flac]="flac *.flac"
  [mp3]="mp3 *.mp3"
  [adts]="adts *.aac *.adts"
  [ac3]="ac3"
  [amr]="amr"
  [h264]="h264 *.264"
  [hevc]="h265"
  [ivf]="ivf"
  [obu]="av1obu rav1d__clusterfuzz*"
  [av1_annexb]="av1obu"
  [dv]="dv"
  [mpegvideo]="mpegvideo"
  [m4v]="m4v"
  [codec_scanners]="mp3 adts ac3 h264 h265 av1obu mpegvideo m4v"
  [shared_parsers]="matroska mp3 adts aiff wav ogg flac"
  # The round trip (demux, mux, demux) takes the families the muxers carry.
  [remux]="mp4 matroska mpegts adts h264 h265 flac ac3 ogg mp3 wav avi"
  # Repair takes the families it repairs, each file also cut (see below).
  [repair]="mp4 matroska avi *.mp4 *.mov *.m4a *.mkv *.webm *.avi"
  # Tag editing takes the families the editor writes.
  [tagedit_roundtrip]="flac mp3 mp4 wav aiff matroska ogg asf"
)
# The detection and differential targets take every family.
ALL_TARGETS=(any slice_vs_stream truncation)

# Trailers appended to the differential seeds (see StreamConfig::from_trailer
# in fuzz/src/lib.rs): chunk/cache, seek/length, delta, format.
TRAILERS=(
  '\x00\x00\x00\x00'  # 1-byte reads, 8 blocks, seekable, known length, detect
  '\x0d\x00\x00\x00'  # 4096-byte reads
  '\x1b\x04\x00\x00'  # 513-byte reads, 1 block, length by seeking to the end
  '\x26\x01\x00\x00'  # 31-byte reads, 2 blocks, forward-only seeks
  '\x3f\x08\x10\x00'  # unlimited reads, no cache, claimed 17 bytes short
  '\x07\x00\x00\x80'  # 64-byte reads, format forced (KINDS[0])
)

add_cut() { # add_cut <dir> <file> <percent>: the file's first percent
  local size tmp="$1/.tmp"
  size=$(stat -c %s "$2")
  [ "$size" -le "$MAX" ] || return 0
  head -c $((size * $3 / 100)) "$2" > "$tmp"
  mv "$tmp" "$1/$(sha1sum < "$tmp" | cut -c1-40)"
}
add() { # add <dir> <file> [trailer]
  local dir=$1 f=$2 t=${3:-}
  local size
  size=$(stat -c %s "$f")
  [ "$size" -le "$MAX" ] || return 0
  if [ -z "$t" ]; then
    cp "$f" "$dir/$(sha1sum "$f" | cut -c1-40)"
  else
    local tmp="$dir/.tmp"
    { cat "$f"; printf "$t"; } > "$tmp"
    mv "$tmp" "$dir/$(sha1sum < "$tmp" | cut -c1-40)"
  fi
}

files_of() { # files_of <spec...>: every file of the families and globs
  local fam
  for fam in "$@"; do
    case "$fam" in
      \**)
        [ -d "$SAMPLES/fuzz" ] && find "$SAMPLES/fuzz" -maxdepth 1 -type f -name "$fam" ;;
      *)
        for d in "$ROOT/corpus/files/$fam" "$SAMPLES/$fam" "$ROOT/corpus/regressions/$fam"; do
          [ -d "$d" ] && find "$d" -type f
        done ;;
    esac
  done
  return 0
}

every_family() {
  local specs=()
  for t in "${!FAMILIES[@]}"; do specs+=(${FAMILIES[$t]}); done
  # Formats without a parser target yet still seed detection and the
  # differential targets (they are rejected quickly, and the bytes mutate
  # into something else).
  for d in "$ROOT/corpus/files"/* "$SAMPLES"/*; do
    [ -d "$d" ] && [ "$(basename "$d")" != expected ] && specs+=("$(basename "$d")")
  done
  specs+=('*')
  files_of "${specs[@]}" | sort -u
}

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${!FAMILIES[@]}" "${ALL_TARGETS[@]}")

for t in "${targets[@]}"; do
  dir="$FUZZ/corpus/$t"
  mkdir -p "$dir"
  n=0
  if [ "$t" = repair ]; then
    # Damaged recordings: each file whole, and cut at a third, a half and
    # nine tenths (a recorder stopped mid-file).
    while IFS= read -r f; do
      add "$dir" "$f"
      for pc in 33 50 90; do add_cut "$dir" "$f" $pc; done
      n=$((n + 1))
    done < <(files_of ${FAMILIES[$t]} | sort -u)
  elif [ -n "${FAMILIES[$t]:-}" ]; then
    # shellcheck disable=SC2086
    while IFS= read -r f; do add "$dir" "$f"; n=$((n + 1)); done < <(files_of ${FAMILIES[$t]} | sort -u)
  elif [ "$t" = slice_vs_stream ]; then
    i=0
    while IFS= read -r f; do
      add "$dir" "$f" "${TRAILERS[$((i % ${#TRAILERS[@]}))]}"
      add "$dir" "$f" "${TRAILERS[$(((i + 3) % ${#TRAILERS[@]}))]}"
      i=$((i + 1)); n=$((n + 2))
    done < <(every_family)
  else
    while IFS= read -r f; do add "$dir" "$f"; n=$((n + 1)); done < <(every_family)
  fi
  echo "seed.sh: $t: $(find "$dir" -type f | wc -l) seeds (from $n files, at most $MAX bytes each) in $dir"
done
