#!/usr/bin/env bash
# Bytes and reads per probe, mediaslice vs ffprobe, MediaInfo and ExifTool,
# on files and over HTTP (nginx on 127.0.0.1): builds the release binary and
# runs io.py, which writes docs/bench/io.md. Arguments go to io.py
# (--no-http, --limit N, --family a,b, --out FILE).
#
# Needs: apt-get install strace ffmpeg mediainfo libimage-exiftool-perl nginx-light
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
for t in strace ffprobe mediainfo exiftool nginx; do
	command -v "$t" >/dev/null || { echo "io.sh: $t is missing (apt-get install strace ffmpeg mediainfo libimage-exiftool-perl nginx-light)" >&2; exit 1; }
done
(cd "$REPO" && cargo build --release -p mediaslice-std -j1)
exec python3 "$REPO/benches/scripts/io.py" "$@"
