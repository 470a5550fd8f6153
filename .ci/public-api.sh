#!/usr/bin/env bash
# The public API of `mediaslice` (core), as cargo-public-api lists it, against
# the committed core/public-api.txt: a change to what users can name fails
# here until the listing is regenerated with `--bless` and the diff reviewed.
#
#   .ci/public-api.sh          check (exit 1 with a diff when it differs)
#   .ci/public-api.sh --bless  regenerate core/public-api.txt
#
# All features (what docs.rs shows); blanket impls (`impl<T> Any for T`,
# zerocopy's pointer invariants) left out as noise. doc(hidden) items are
# not listed: they are not public API (docs/api.md). cargo-public-api reads
# rustdoc JSON, which needs the nightly toolchain (installed, not default).
# Exit 2 when cargo-public-api or nightly is missing, so .ci/run can skip
# with a message.
set -euo pipefail
cd "$(dirname "$0")/.."
listing=core/public-api.txt

if ! command -v cargo-public-api >/dev/null 2>&1; then
  echo "cargo-public-api is not installed (cargo install cargo-public-api --locked)" >&2
  exit 2
fi
if ! rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  echo "cargo-public-api needs the nightly toolchain (rustup toolchain install nightly)" >&2
  exit 2
fi

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
cargo public-api -p mediaslice --all-features --omit blanket-impls >"$tmp"

if [ "${1:-}" = "--bless" ]; then
  cp "$tmp" "$listing"
  echo "wrote $listing ($(wc -l <"$listing") lines)"
  exit 0
fi

if diff -u "$listing" "$tmp"; then
  echo "public API unchanged ($(wc -l <"$listing") lines in $listing)"
else
  echo "the public API of mediaslice differs from $listing (- committed, + now):" >&2
  echo "review the change, then run .ci/public-api.sh --bless and commit the listing" >&2
  exit 1
fi
