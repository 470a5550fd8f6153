"""The GIL is released while Rust parses.

Two proofs that cannot pass by luck:

* A URL served by a Python thread of this same process: a probe that held
  the GIL would leave that thread unable to answer (the probe would then
  fail on its read timeout).
* A tick thread that can only take the GIL when the main thread lets it
  go: with the switch interval set far beyond the test's length, Python
  never takes the GIL from the main thread by force, so a tick stamped
  between a call's start and end means the call released it. A pure-Python
  call of the same length is the control: it must see no tick.
"""
import sys
import threading
import time

import mediaslice
import pytest

from conftest import corpus_files, manifest_subset
from rangeserver import RangeServer


def test_url_served_by_a_thread_of_this_process(tmp_path):
    files = [p for p in corpus_files() if p.suffix in (".mp4", ".mkv", ".ts")][:4]
    assert files
    root = files[0].parents[2]
    with RangeServer(root) as srv:
        for path in files:
            url = srv.url(path.relative_to(root))
            got = mediaslice.probe(url)
            want = mediaslice.probe(path, name=url)
            assert got == want, path
            assert mediaslice.tags(url) == mediaslice.tags(path)
            over_http = [(p.track, p.pts, bytes(p.data)) for p in mediaslice.packets(url)]
            assert over_http == [(p.track, p.pts, bytes(p.data)) for p in mediaslice.packets(path)]
        assert srv.requests > 0


def ticks_inside(calls, seconds=1.0):
    """Runs `calls` in turn for `seconds` with a tick thread waiting on the
    GIL; returns how many ticks fell between a call's start and its end."""
    ticks, stop = [], threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.00005)  # lets the main thread take the GIL back

    old = sys.getswitchinterval()
    spans = []
    t = threading.Thread(target=tick, daemon=True)
    sys.setswitchinterval(100.0)
    try:
        t.start()
        time.sleep(0.01)
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            for call in calls:
                t0 = time.perf_counter()
                call()
                t1 = time.perf_counter()
                spans.append((t0, t1))
    finally:
        stop.set()
        sys.setswitchinterval(old)
        t.join()
    # Spans are in time order and disjoint: one pass over both lists.
    inside, i = 0, 0
    for tk in ticks:
        while i < len(spans) and spans[i][1] <= tk:
            i += 1
        inside += i < len(spans) and spans[i][0] < tk
    return inside


def test_control_pure_python_sees_no_tick():
    assert ticks_inside([lambda: sum(range(300_000))]) == 0


@pytest.mark.parametrize("kind", ["path", "bytes", "tags"])
def test_probe_lets_another_thread_run(samples, kind):
    files = sorted(manifest_subset(), key=lambda p: -p.stat().st_size)[:10]
    blobs = {p: p.read_bytes() for p in files}
    make = {
        "path": lambda p: (lambda: mediaslice.probe(str(p), errors="return")),
        "bytes": lambda p: (lambda: mediaslice.probe(blobs[p], name=p.name, errors="return")),
        "tags": lambda p: (lambda: mediaslice.tags(str(p))),
    }[kind]
    assert ticks_inside([make(p) for p in files]) > 0
