"""Errors: mediaslice.Error with code, offset, path and message; with
errors="return", the CLI's `probe --json-lines` error object."""
import mediaslice
import pytest

from conftest import corpus_files, json_lines


def test_error_is_an_exception_class():
    assert issubclass(mediaslice.Error, Exception)
    # The wheel's package re-exports the module's names, the version too.
    assert isinstance(mediaslice.__version__, str)
    assert {"probe", "packets", "tags", "Error", "Packet"} <= set(dir(mediaslice))


def test_garbage_raises_with_code_and_offset():
    with pytest.raises(mediaslice.Error) as info:
        mediaslice.probe(b"\x00garbage" * 64, name="junk.bin")
    e = info.value
    assert e.code == "unknown_format"
    assert e.offset == 0
    assert e.path == "junk.bin"
    assert e.message and e.message in str(e)


def test_missing_file_is_an_open_error(tmp_path):
    missing = tmp_path / "nope.mp4"
    with pytest.raises(mediaslice.Error) as info:
        mediaslice.probe(missing)
    assert info.value.code == "open"
    assert info.value.offset is None
    assert info.value.path == str(missing)
    with pytest.raises(mediaslice.Error):
        mediaslice.packets(missing)
    with pytest.raises(mediaslice.Error):
        mediaslice.tags(missing)


def truncations(tmp_path):
    """Prefixes of corpus files, cut inside their headers or payload, as
    files: (path, bytes)."""
    out = []
    for src in corpus_files()[::3]:
        data = src.read_bytes()
        for cut in (12, 64, 300, len(data) // 7, len(data) // 2):
            p = tmp_path / f"{src.parent.name}_{cut}_{src.name}"
            p.write_bytes(data[:cut])
            out.append((p, data[:cut]))
    return out


def test_truncated_files_match_cli_error_objects(tmp_path, cli):
    cases = truncations(tmp_path)
    lines = json_lines(cli, [p for p, _ in cases])
    failed = 0
    for path, data in cases:
        want = dict(lines[str(path)])
        del want["path"]
        got = mediaslice.probe(path, errors="return")
        assert got == want, path
        if "error" in got:
            failed += 1
            err = got["error"]
            with pytest.raises(mediaslice.Error) as info:
                mediaslice.probe(path)
            assert (info.value.code, info.value.offset, info.value.path) == (
                err["code"],
                err.get("offset"),
                str(path),
            )
            assert info.value.message == err["message"]
            # The same bytes in memory fail the same way.
            assert mediaslice.probe(data, name=str(path), errors="return") == got
    # A cut that never fails would make this test empty.
    assert failed >= 5, failed


def test_damaged_samples_do_not_crash(samples):
    # The fuzz and other families: every call returns a dict or raises
    # mediaslice.Error, for probe, tags and a full packet walk.
    files = sorted(p for fam in ("fuzz", "other") for p in (samples / fam).glob("*") if p.is_file())
    if not files:
        pytest.skip(f"no fuzz/ or other/ files in {samples}")
    for path in files:
        assert isinstance(mediaslice.probe(path, errors="return"), dict)
        for call in (lambda: mediaslice.tags(path), lambda: sum(1 for _ in mediaslice.packets(path))):
            try:
                call()
            except mediaslice.Error as e:
                assert isinstance(e.code, str) and e.path == str(path)
