#!/usr/bin/env bash
# Builds the large benchmark files (not committed) for issue 9:
#
#   loop130k.{mp4,ts,avi,mkv}  a 10 s 320x240 H.264 + AAC clip (testsrc2, as
#                              in corpus/generate.sh) looped with -c copy to
#                              about 130,000 packets (about 32 minutes)
#   hd1080.{mp4,ts,mkv}        150 s of 1080p25 H.264 (libx264 ultrafast,
#                              about 17 Mbit/s) + AAC 48 kHz: about 317 MB and
#                              10,783 packets (10 s encoded, looped 15 times)
#   long.wav                   5 minutes of 48 kHz stereo PCM s16le (55 MB)
#
#   benches/make_files.sh [OUTDIR]     default $MEDIASLICE_BENCH_FILES or
#                                      /tmp/mediaslice-bench
#   FORCE=1 benches/make_files.sh      rebuild files that exist
#
# Needs ffmpeg/ffprobe (Debian: apt-get install ffmpeg). About a minute on
# 2 cores. Writes MANIFEST.tsv (name, bytes, ffprobe packet count) beside
# the files. Adding a container: append its extension to CONTAINERS (and
# HD_CONTAINERS) below.
set -euo pipefail

OUT=${1:-${MEDIASLICE_BENCH_FILES:-/tmp/mediaslice-bench}}
FFMPEG=${FFMPEG:-ffmpeg}
FFPROBE=${FFPROBE:-ffprobe}
CONTAINERS=(mp4 ts avi mkv)
HD_CONTAINERS=(mp4 ts mkv)
TARGET_PACKETS=130000
mkdir -p "$OUT"
cd "$OUT"

ff() { "$FFMPEG" -nostdin -hide_banner -loglevel error -y "$@"; }
# Sum of the streams' packet counts (a TS lists its streams twice: once per
# program, once in the stream list).
packets() {
	"$FFPROBE" -v error -count_packets -show_entries stream=index,nb_read_packets -of csv=p=0 "$1" |
		sort -u | awk -F, '{ s += $2 } END { print s }'
}
fresh() { [[ -n ${FORCE:-} || ! -s $1 ]]; }
# Same determinism flags as corpus/generate.sh.
BITEXACT=(-map_metadata -1 -fflags +bitexact -flags:v +bitexact -flags:a +bitexact)

# The 10 s 320x240 clip (the corpus's sources, 10 s long).
if fresh clip10.mp4; then
	ff -f lavfi -i "testsrc2=size=320x240:rate=25:duration=10" \
		-f lavfi -i "aevalsrc=exprs=0.4*sin(440*2*PI*t)|0.4*sin(660*2*PI*t):sample_rate=44100:duration=10" \
		-c:v libx264 -pix_fmt yuv420p -g 50 -c:a aac -b:a 128k -threads 1 "${BITEXACT[@]}" clip10.mp4
fi
per_clip=$(packets clip10.mp4)
loops=$(((TARGET_PACKETS + per_clip - 1) / per_clip))
for c in "${CONTAINERS[@]}"; do
	if fresh "loop130k.$c"; then
		echo "loop130k.$c: clip10.mp4 ($per_clip packets) x $loops"
		ff -stream_loop $((loops - 1)) -i clip10.mp4 -map 0 -c copy "${BITEXACT[@]}" "loop130k.$c"
	fi
done

# The 1080p file: 10 s encoded once, looped to 150 s without re-encoding.
if fresh hd10.mp4; then
	echo "hd10.mp4: encoding 10 s of 1080p25 (libx264 ultrafast)"
	ff -f lavfi -i "testsrc2=size=1920x1080:rate=25:duration=10" \
		-f lavfi -i "aevalsrc=exprs=0.4*sin(440*2*PI*t)|0.4*sin(660*2*PI*t):sample_rate=48000:duration=10" \
		-c:v libx264 -preset ultrafast -b:v 17M -maxrate 17M -bufsize 17M -pix_fmt yuv420p -g 50 \
		-c:a aac -b:a 128k "${BITEXACT[@]}" hd10.mp4
fi
for c in "${HD_CONTAINERS[@]}"; do
	if fresh "hd1080.$c"; then
		echo "hd1080.$c: hd10.mp4 x 15"
		ff -stream_loop 14 -i hd10.mp4 -map 0 -c copy "${BITEXACT[@]}" "hd1080.$c"
	fi
done

if fresh long.wav; then
	ff -f lavfi -i "aevalsrc=exprs=0.4*sin(440*2*PI*t)|0.4*sin(660*2*PI*t):sample_rate=48000:duration=300" \
		-c:a pcm_s16le "${BITEXACT[@]}" long.wav
fi

{
	printf 'file\tbytes\tffprobe_packets\n'
	for f in loop130k.* hd1080.* long.wav; do
		printf '%s\t%s\t%s\n' "$f" "$(stat -c %s "$f")" "$(packets "$f")"
	done
} >MANIFEST.tsv
column -t MANIFEST.tsv
