"""packets(): the CLI's `packets --json` packet for packet; memoryviews
over the file's mmap or the bytes given, copies only when joined."""
import json
import mmap
import subprocess
import zlib

import mediaslice
import pytest

from conftest import corpus_files, manifest_subset, run_cli


def pick_files(samples):
    # Every family of the subset once, the corpus's TS, PS, Ogg and ASF
    # (whose packets are joined from pieces) and its MP4s.
    files, seen = [], set()
    for p in manifest_subset():
        if p.parent.name not in seen:
            seen.add(p.parent.name)
            files.append(p)
    for p in corpus_files():
        if p.parent.name in ("mpegts", "mpegps", "ogg", "asf", "mp4") and p.stat().st_size < 4 << 20:
            files.append(p)
    return files


def cli_packets(cli, path):
    return run_cli(cli, "packets", "--json", path)["packets"]


def test_packets_equal_cli(samples, cli):
    copied_seen = viewed_seen = 0
    for path in pick_files(samples):
        want = cli_packets(cli, path)
        got = []
        try:
            for p in mediaslice.packets(path):
                got.append(p)
        except mediaslice.Error:
            pass  # the CLI stops at the same packet (its exit code says so)
        assert len(got) == len(want), path
        file_bytes = path.read_bytes()
        for p, w in zip(got, want):
            assert p.track == w["stream_index"], path
            assert p.size == len(p.data) == int(w["size"]), path
            assert p.pts == w.get("pts") and p.dts == w.get("dts"), path
            assert p.duration == w.get("duration"), path
            assert p.offset == (int(w["pos"]) if "pos" in w else None), path
            assert p.keyframe == ("K" in w["flags"]), path
            assert "CRC32:%08x" % zlib.crc32(p.data) == w["data_hash"], path
            if p.copied:
                copied_seen += 1
                assert isinstance(p.data, bytes)
            else:
                viewed_seen += 1
                assert isinstance(p.data, memoryview) and isinstance(p.data.obj, mmap.mmap)
                assert p.data == file_bytes[p.offset : p.offset + p.size]
    # Both kinds occurred, or the checks above were half empty.
    assert copied_seen > 0 and viewed_seen > 0, (copied_seen, viewed_seen)


def test_bytes_source_views_the_object(samples):
    for path in pick_files(samples)[:12]:
        data = path.read_bytes()
        from_path = [(p.track, p.pts, p.size, p.copied, bytes(p.data)) for p in mediaslice.packets(path)]
        walked = []
        for p in mediaslice.packets(data, name=str(path)):
            if not p.copied:
                assert p.data.obj is data  # no copy: a view of the caller's bytes
                assert p.data == data[p.offset : p.offset + p.size]
            walked.append((p.track, p.pts, p.size, p.copied, bytes(p.data)))
        assert walked == from_path, path
        ba = bytearray(data)
        assert [bytes(p.data) for p in mediaslice.packets(ba, name=str(path))] == [w[4] for w in walked]


def test_memoryview_is_not_a_copy(tmp_path):
    mp4 = next(p for p in corpus_files() if p.suffix == ".mp4")
    for p in mediaslice.packets(mp4):
        if not p.copied:
            view = p.data
            break
    else:
        pytest.fail(f"no contiguous packet in {mp4}")
    assert isinstance(view.obj, mmap.mmap)
    assert view.readonly
    # The view shares the map's memory: the map's bytes at the offset are
    # the view's bytes, and the view is a window of the map's length.
    assert len(view.obj) == mp4.stat().st_size
    assert view.obj[p.offset : p.offset + p.size] == view.tobytes()


def test_error_mid_walk_raises_after_the_packets_before(tmp_path, cli):
    # Files cut in the middle: the packets before the cut come, equal to the
    # CLI's, then mediaslice.Error with the code and offset of the cut.
    raised = 0
    for src in corpus_files():
        if src.suffix not in (".mp4", ".flv", ".webm", ".ivf", ".dv"):
            continue
        data = src.read_bytes()
        cut = tmp_path / f"cut_{src.name}"
        cut.write_bytes(data[: len(data) // 2 + 77])
        r = subprocess.run([str(cli), "packets", "--json", str(cut)], capture_output=True)
        if not r.stdout:
            # The CLI could not open it: neither can packets().
            with pytest.raises(mediaslice.Error):
                mediaslice.packets(cut)
            continue
        want = [int(w["size"]) for w in json.loads(r.stdout)["packets"]]
        got, err = [], None
        try:
            for p in mediaslice.packets(cut):
                got.append(p.size)
        except mediaslice.Error as e:
            err = e
        assert got == want, cut
        if err is not None:
            raised += 1
            assert err.code in ("truncated", "malformed"), (cut, err.code)
            assert isinstance(err.offset, int) and err.offset <= len(data), cut
            assert err.path == str(cut)
    assert raised >= 3, raised


def test_strided_memoryview_is_copied_whole(samples):
    # A view that is not one contiguous byte array cannot be cut by byte
    # offsets: every payload comes as a copy, equal all the same.
    path = next(p for p in manifest_subset() if p.suffix == ".mp4")
    data = path.read_bytes()
    spaced = bytearray(2 * len(data))
    spaced[::2] = data
    strided = memoryview(spaced)[::2]
    assert not strided.c_contiguous and strided.tobytes() == data
    want = [(p.track, p.pts, bytes(p.data)) for p in mediaslice.packets(data, name=str(path))]
    got = list(mediaslice.packets(strided, name=str(path)))
    assert got and all(p.copied and isinstance(p.data, bytes) for p in got)
    assert [(p.track, p.pts, p.data) for p in got] == want
    assert mediaslice.probe(strided, name=str(path)) == mediaslice.probe(path)
