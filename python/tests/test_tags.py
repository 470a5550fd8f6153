"""tags(): the CLI's `tags --json`."""
import mediaslice

from conftest import corpus_files, manifest_subset, run_cli


def test_tags_equal_cli(samples, cli):
    files = manifest_subset() + corpus_files()[::3]
    with_tags = 0
    for path in files:
        try:
            got = mediaslice.tags(path)
        except mediaslice.Error as e:
            assert e.code and e.path == str(path)
            continue
        assert got == run_cli(cli, "tags", "--json", path), path
        assert mediaslice.tags(path.read_bytes(), name=str(path)) == got, path
        with_tags += bool(got["format"]["tags"]) or any(s["tags"] for s in got["streams"])
    assert with_tags >= 10, with_tags
