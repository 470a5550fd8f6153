#!/usr/bin/env bash
# The Python bindings' CI step (called by .ci/run after the Rust tests):
# cargo fmt and clippy on python/ (its own workspace), the CLI the tests
# compare against, then a fresh venv with maturin, pytest, dask[distributed]
# and pandas, the abi3 wheel built by maturin and installed, and pytest;
# then pytest again on CPython 3.9 and 3.10 where the machine has them.
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
# The wheel is abi3 for CPython 3.9+: run the same tests on the oldest
# interpreters this machine has (pyenv's or on PATH), with pytest only (the
# distributed test, which needs dask and pandas, says it is skipped there).
for minor in 3.9 3.10; do
  # pyenv's shims answer `command -v` even for a version that is not
  # selected, so each candidate must also run.
  py=
  for cand in $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$minor".*/bin/python3 2>/dev/null | sort -V -r) \
    $(command -v "python$minor" 2>/dev/null || true); do
    if "$cand" -c 'import venv' 2>/dev/null; then py=$cand; break; fi
  done
  if [ -z "$py" ]; then
    say "skip: no CPython $minor here; the abi3 wheel is not tested on it"
    continue
  fi
  say "pytest on CPython $minor ($py)"
  old="$out/venv$minor"
  "$py" -m venv "$old"
  "$old/bin/pip" install -q --disable-pip-version-check pytest "$out"/mediaslice-*.whl
  (cd "$out" && "$old/bin/python" -m pytest -q -rs -p no:cacheprovider "$here/tests")
done
say "done"
