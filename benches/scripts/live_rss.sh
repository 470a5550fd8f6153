#!/bin/bash
# Peak RSS of `mediaslice package - OUT --hls` fed a looped MPEG-TS through
# a pipe (docs/write-side.md, "Live packaging"): VmHWM and VmRSS from
# /proc/PID/status every INTERVAL seconds (default 2), one line each.
#
# usage: live_rss.sh BIN INPUT.ts SECONDS_OF_MEDIA REALTIME(0|1) OUTDIR [package options...]
set -u
bin=$1; input=$2; secs=$3; re=$4; out=$5; shift 5
rm -rf "$out"
reflag=()
[ "$re" = 1 ] && reflag=(-re)
ffmpeg -v error "${reflag[@]}" -stream_loop -1 -i "$input" -t "$secs" -c copy -f mpegts - \
    | "$bin" package - "$out" --hls "$@" &
sleep 1
pid=$(pgrep -n -f -- "package - $out")
start=$(date +%s)
while kill -0 "$pid" 2>/dev/null; do
    echo "$(( $(date +%s) - start )) s $(grep -E 'VmHWM|VmRSS' /proc/"$pid"/status 2>/dev/null | tr -s ' \t\n' ' ')segment files: $(ls "$out" 2>/dev/null | grep -c m4s)"
    sleep "${INTERVAL:-2}"
done
wait
