"""Shared fixtures: the repository, the real samples beside it, the CLI.

The samples are looked for in `shared/samples` beside the repository (or
beside one of its parent folders, for a git worktree), or in
$MEDIASLICE_SAMPLES. A test that needs them is skipped, saying so, when they
are absent; so is one that needs the CLI (`target/release/mediaslice`, or
$MEDIASLICE_CLI), which `python/ci.sh` builds.
"""
import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def find_samples():
    env = os.environ.get("MEDIASLICE_SAMPLES")
    if env:
        return pathlib.Path(env)
    for parent in ROOT.parents:
        candidate = parent / "shared" / "samples"
        if (candidate / "MANIFEST.tsv").is_file():
            return candidate
    return None


SAMPLES = find_samples()
CLI = pathlib.Path(os.environ.get("MEDIASLICE_CLI", ROOT / "target" / "release" / "mediaslice"))

# Families whose files are media to match (fuzz/ and other/ hold damaged
# and odd inputs; the error tests use them).
SKIP_FAMILIES = {"fuzz", "other", "family"}


def manifest_subset(per_family=3, limit=48):
    """Up to `per_family` files of each family that ffprobe reads, in
    MANIFEST order: the first ones, so the choice is fixed."""
    if SAMPLES is None:
        return []
    out, seen = [], {}
    # Split by hand: one notes field of the manifest holds a NUL byte, which
    # the csv module refuses before Python 3.11 ("line contains NUL").
    with open(SAMPLES / "MANIFEST.tsv", encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    header = lines[0].rstrip("\r").split("\t")
    for line in lines[1:]:
        row = dict(zip(header, line.rstrip("\r").split("\t")))
        fam = row.get("family", "")
        if not fam or fam in SKIP_FAMILIES or seen.get(fam, 0) >= per_family:
            continue
        if row.get("ffprobe_format_name", "").startswith("ERROR"):
            continue  # ffprobe cannot read it either (AC-4, ...)
        path = SAMPLES / row.get("local_path", "")
        if path.is_file():
            seen[fam] = seen.get(fam, 0) + 1
            out.append(path)
    return out[:limit]


@pytest.fixture(scope="session")
def samples():
    if SAMPLES is None:
        pytest.skip("no shared/samples beside the repository and no $MEDIASLICE_SAMPLES: sample tests not run")
    print(f"samples: {SAMPLES}")
    return SAMPLES


@pytest.fixture(scope="session")
def cli():
    if not CLI.is_file():
        pytest.skip(f"{CLI} is missing: build it with `cargo build --release -p mediaslice-std --features cli`")
    return CLI


def run_cli(cli, *args):
    """The CLI's stdout as JSON (it may exit non-zero with JSON written)."""
    r = subprocess.run([str(cli), *map(str, args)], capture_output=True, timeout=120)
    return json.loads(r.stdout)


def json_lines(cli, paths):
    """`probe --json-lines` of `paths`, by path."""
    r = subprocess.run(
        [str(cli), "probe", "--json-lines", *map(str, paths)], capture_output=True, timeout=300
    )
    rows = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    return {row["path"]: row for row in rows}


def corpus_files():
    return sorted(p for p in (ROOT / "corpus" / "files").rglob("*") if p.is_file())
