#!/usr/bin/env bash
# Scanning a library: files per second and peak RSS of `mediaslice probe
# --json-lines` beside ffprobe (loop and xargs -P), MediaInfo and ExifTool,
# and requests and bytes per URL over HTTP (nginx on 127.0.0.1). Builds the
# release binary and runs scan.py, which writes docs/bench/scan.md.
# Arguments go to scan.py (--files N, --loop-files N, --urls N, --jobs N,
# --no-http, --out FILE).
#
# Needs: apt-get install time ffmpeg mediainfo libimage-exiftool-perl nginx-light
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
for t in /usr/bin/time ffprobe mediainfo exiftool nginx; do
	command -v "$t" >/dev/null || { echo "scan.sh: $t is missing (apt-get install time ffmpeg mediainfo libimage-exiftool-perl nginx-light)" >&2; exit 1; }
done
(cd "$REPO" && cargo build --release -p mediaslice-std -j1)
exec python3 "$REPO/benches/scripts/scan.py" "$@"
