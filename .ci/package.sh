#!/usr/bin/env bash
# Packaging checks (docs/packaging.md): mediaslice-std's feature sets build
# without warnings, both crates package and verify as crates.io would build
# them (`cargo publish --dry-run`: nothing is uploaded), and each builds with
# the rustc its `rust-version` names. Under two minutes once built.
set -euo pipefail
cd "$(dirname "$0")/.."
export RUSTFLAGS="${RUSTFLAGS:-} -D warnings"

echo "-- mediaslice-std feature sets"
cargo check -q -p mediaslice-std --no-default-features
cargo check -q -p mediaslice-std --no-default-features --features http
cargo check -q -p mediaslice-std --no-default-features --features https
cargo check -q -p mediaslice-std

echo "-- package contents (src, licenses, README; no tests)"
for p in mediaslice mediaslice-std; do
  list=$(cargo package -q -p "$p" --list --allow-dirty 2>/dev/null)
  for f in Cargo.toml README.md LICENSE-MIT LICENSE-APACHE src/lib.rs; do
    grep -qx "$f" <<<"$list" || { echo "$p: $f missing from the package" >&2; exit 1; }
  done
  if grep -q '^tests/' <<<"$list"; then
    echo "$p: the package holds tests that read files outside it" >&2
    exit 1
  fi
  echo "$p: $(wc -l <<<"$list") files"
done

echo "-- cargo publish --dry-run --workspace"
# Packages both crates into a local registry overlay (mediaslice-std
# resolves the unpublished core there) and builds each from its .crate.
# Cargo notes every test it leaves out of the package: expected, filtered.
# --allow-dirty: CI runs on a checkout that may hold build outputs.
unset RUSTFLAGS
# Cargo unpacks the overlay's .crate files under registry/src/-<hash>/ and
# reuses an unpacked directory of the same name and version without looking
# at the new .crate: on a machine whose cargo home saw an older checkout at
# the same path, mediaslice-std was verified against that older core (CI
# failed so on 4c5cdbe). Our unpublished crates are removed from there first;
# crates.io's directories (index.crates.io-*) are not touched.
cargo_home="${CARGO_HOME:-$HOME/.cargo}"
rm -rf "$cargo_home"/registry/src/-*/mediaslice-* "$cargo_home"/registry/cache/-*/mediaslice-*
cargo publish --dry-run --workspace --allow-dirty 2>&1 \
  | { grep -v -e '^warning: ignoring test' -e '^warning: aborting upload due to dry run' || true; }

echo "-- rust-version"
msrv() { sed -n 's/^rust-version = "\(.*\)"/\1/p' "$1" | head -1; }
core_msrv=$(msrv core/Cargo.toml)
std_msrv=$(msrv Cargo.toml)
for v in "$core_msrv" "$std_msrv"; do
  rustup toolchain list | grep -q "^$v" || rustup toolchain install "$v" --profile minimal >/dev/null
done
cargo "+$core_msrv" check -q -p mediaslice --all-features
cargo "+$std_msrv" check -q -p mediaslice-std
echo "mediaslice builds with $core_msrv, mediaslice-std with $std_msrv"
