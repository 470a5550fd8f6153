#!/usr/bin/env bash
# Builds files larger than 4 GiB (and one TS larger than 2^31 bytes) for the
# 64-bit offset paths: mp4 co64 + 64-bit mdat with the moov at the end, Matroska
# with 8-byte sizes far into the file, OpenDML AVI (RIFF AVIX + indx/ix##),
# RF64 WAV (ds64), and an MPEG-TS past 2^31.
#
#   corpus/big.sh [OUTDIR]        # default /tmp/mediaslice-big
#
# NOT run by CI and not committed: about 20 GiB of output, a few minutes of
# disk-bound work.  Each file is a corpus file looped with
#   ffmpeg -stream_loop -1 -i SRC -map 0 -c copy -fs SIZE OUT
# so no encoding happens.  The sources are small (160x120), so the big files
# hold millions of packets spanning tens of hours; ffmpeg's mp4 muxer keeps
# its sample table in memory while writing (a few hundred MB of RAM).
# Needs corpus/files from corpus/generate.sh.
set -euo pipefail

CORPUS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=${1:-/tmp/mediaslice-big}
FFMPEG=${FFMPEG:-ffmpeg}
FFPROBE=${FFPROBE:-ffprobe}

GIB=$((1024 * 1024 * 1024))
SIZE_4_5G=$((GIB * 9 / 2))   # 4.5 GiB = 4831838208 bytes
SIZE_TS=2200000000           # > 2^31 = 2147483648

mkdir -p "$OUT"
need=$((SIZE_4_5G * 4 + SIZE_TS + GIB))
avail=$(($(df -Pk "$OUT" | awk 'NR==2 {print $4}') * 1024))
if ((avail < need)); then
	echo "big.sh: $OUT has $((avail / GIB)) GiB free, needs about $((need / GIB)) GiB" >&2
	exit 1
fi

loop() { # SRC(relative to corpus/files) OUTNAME SIZE [extra output options]
	local src=$CORPUS/files/$1 out=$OUT/$2 size=$3
	shift 3
	[[ -f $src ]] || { echo "big.sh: missing $src (run corpus/generate.sh first)" >&2; exit 1; }
	echo "== $out <- $src (-fs $size)"
	"$FFMPEG" -nostdin -hide_banner -loglevel error -stats -y \
		-stream_loop -1 -i "$src" -map 0 -c copy -fs "$size" \
		-fflags +bitexact "$@" "$out"
	"$FFPROBE" -v error -show_entries format=format_name,size,duration,nb_streams -of compact "$out"
}

# mp4, moov after mdat (the default): mdat > 4 GiB forces a 64-bit mdat size
# and co64 chunk offsets.
loop mp4/h264_aac.mp4 big_moov_end.mp4 "$SIZE_4_5G"
# Matroska: Cluster/Cues positions past 4 GiB.
loop matroska/h264_aac.mkv big.mkv "$SIZE_4_5G"
# AVI: ffmpeg switches to OpenDML (RIFF AVIX extensions, indx super index and
# ix## standard indexes) once the first RIFF passes 1 GiB.
loop avi/mpeg4_mp3.avi big_opendml.avi "$SIZE_4_5G"
# WAV: RF64 header with a ds64 chunk carrying the 64-bit sizes.
loop wav/pcm_s16le.wav big_rf64.wav "$SIZE_4_5G" -rf64 always
# MPEG-TS past 2^31 bytes (signed 32-bit offsets overflow).
loop mpegts/h264_aac.ts big.ts "$SIZE_TS"

ls -l "$OUT"
