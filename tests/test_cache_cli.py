"""bench compare --cache-dir / --no-cache / $RETBENCH_CACHE_DIR: where fitted indexes go, and that a
second run reuses them with the same results."""

from __future__ import annotations

from pathlib import Path

from harness.cli import main


def _compare(runner, out: Path, *flags: str):
    result = runner.invoke(main, ["compare", "--systems", "bm25,weighted", "--metrics", "ndcg@5,mrr",
                                  "--out", str(out), *flags])
    assert result.exit_code == 0, result.output
    (folder,) = [p for p in out.iterdir() if p.is_dir()]
    return folder


def _indexes(root: Path) -> list[str]:
    folder = root / "indexes"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def test_cache_dir_holds_the_fitted_indexes_and_a_rerun_gives_the_same_results(runner, tmp_path):
    cache = tmp_path / "cache"
    first = _compare(runner, tmp_path / "one", "--cache-dir", str(cache))
    entries = _indexes(cache)
    assert entries and all(name.endswith(".idx") for name in entries)
    second = _compare(runner, tmp_path / "two", "--cache-dir", str(cache))
    assert _indexes(cache) == entries
    for name in ("summary.csv", "per_query.csv"):
        assert (first / name).read_text() == (second / name).read_text()


def test_no_cache_writes_nothing(runner, tmp_path, monkeypatch):
    monkeypatch.setenv("RETBENCH_CACHE_DIR", str(tmp_path / "env"))
    _compare(runner, tmp_path / "out", "--no-cache", "--cache-dir", str(tmp_path / "flag"))
    assert not (tmp_path / "env").exists() and not (tmp_path / "flag").exists()


def test_the_environment_names_the_default_folder(runner, tmp_path, monkeypatch):
    monkeypatch.setenv("RETBENCH_CACHE_DIR", str(tmp_path / "env"))
    _compare(runner, tmp_path / "out")
    assert _indexes(tmp_path / "env")
