#!/usr/bin/env bash
# CI: build every fuzz target and smoke-run each for FUZZ_CI_SECONDS
# (default 5). Called by .ci/run when present. Needs network access to
# crates.io the first time (cargo-fuzz, libfuzzer-sys).
set -euo pipefail
exec "$(dirname "$0")/smoke.sh" "${FUZZ_CI_SECONDS:-5}"
