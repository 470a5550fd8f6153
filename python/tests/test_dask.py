"""The probe fanned out over Dask distributed (a LocalCluster of 2 worker
processes) over a few thousand paths and 100 URLs served on 127.0.0.1,
collected into pandas: equal to the serial probe, row for row."""
import pathlib
import sys

import pytest

pytest.importorskip("distributed", reason="dask[distributed] is not installed: the distributed test is not run")
pd = pytest.importorskip("pandas", reason="pandas is not installed: the distributed test is not run")

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"
sys.path.insert(0, str(EXAMPLES))

import dask_scan  # noqa: E402
from conftest import corpus_files, manifest_subset  # noqa: E402
from rangeserver import RangeServer  # noqa: E402


@pytest.fixture(scope="module")
def client():
    from dask.distributed import Client, LocalCluster

    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, host="127.0.0.1"
    )
    c = Client(cluster)
    c.upload_file(str(EXAMPLES / "dask_scan.py"))
    yield c
    c.close()
    cluster.close()


def test_paths_and_urls_equal_serial(client, samples):
    files = [str(p) for p in corpus_files() + manifest_subset(per_family=100, limit=10_000)]
    paths = (files * (3000 // len(files) + 1))[:3000]
    root = pathlib.Path(samples)
    served = [p for p in manifest_subset(per_family=100, limit=10_000)][:100]
    with RangeServer(root) as srv:
        urls = [srv.url(p.relative_to(root)) for p in served]
        inputs = paths + urls
        distributed = dask_scan.scan(client, inputs)
        serial = dask_scan.as_frame([dask_scan.probe_row(x) for x in inputs])
        assert srv.requests > 0
    assert len(distributed) == len(inputs) == 3000 + len(urls)
    assert len(urls) == 100
    pd.testing.assert_frame_equal(distributed, serial)
    # The rows say something: most inputs were read, by both.
    assert distributed["error_code"].isna().mean() > 0.9
    assert distributed["format_name"].nunique() >= 15
