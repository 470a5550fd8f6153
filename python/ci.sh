#!/usr/bin/env bash
# The Python bindings' CI step (called by .ci/run after the Rust tests):
# cargo fmt and clippy on python/ (its own workspace), the CLI the tests
# compare against, then a fresh venv with maturin, pytest, dask[distributed]
# and pandas, the abi3 wheel built by maturin and installed, and pytest.
#
#   python/ci.sh    # VENV=... reuses a venv; MEDIASLICE_CLI=... a built CLI
#                   # (.ci/run gives the one its release tests built);
#                   # CARGO_TARGET_DIR is honoured
#
# Measured on 2 cores: 243 s from an empty target folder and no pip cache
# (of which 121 s build the CLI); 62 s with both warm.
set -euo pipefail
cd "$(dirname "$0")"
here=$PWD
root=$(cd .. && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target}
venv=${VENV:-$here/.venv}
start=$(date +%s)
say() { echo "-- python: $* ($(( $(date +%s) - start ))s)"; }

say "cargo fmt --check and clippy -D warnings (python/Cargo.toml)"
cargo fmt --manifest-path Cargo.toml --check
cargo clippy --manifest-path Cargo.toml --all-targets -- -D warnings

if [ -n "${MEDIASLICE_CLI:-}" ] && [ -x "$MEDIASLICE_CLI" ]; then
  say "the CLI the tests compare against: $MEDIASLICE_CLI (given)"
else
  say "the CLI the tests compare against (built)"
  cargo build --release --manifest-path "$root/Cargo.toml" -p mediaslice-std --features cli
  export MEDIASLICE_CLI=$CARGO_TARGET_DIR/release/mediaslice
fi

say "venv $venv: maturin, pytest, dask[distributed], pandas"
python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check maturin pytest "dask[distributed]" pandas

say "wheel (maturin build --release), installed"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$venv/bin/maturin" build --release --quiet --out "$out"
"$venv/bin/pip" install -q --disable-pip-version-check --force-reinstall --no-deps "$out"/mediaslice-*.whl

say "pytest"
# From another folder, so `import mediaslice` is the installed wheel.
(cd "$out" && "$venv/bin/python" -m pytest -q -p no:cacheprovider "$here/tests")
say "done"
