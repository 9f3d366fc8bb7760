"""``irds:<id>``: a dataset of ir_datasets read through the package, offline.

The collection is registered with ir_datasets in the test, from files the test holds (the bundled
corpus's BEIR folder, read by ir_datasets' own BEIR classes), so nothing is downloaded: it must give
the same counts, hashes and ``bench compare`` numbers as the same files read as a BEIR folder.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import NamedTuple

import pytest

from corpora import RetbenchError, load_dataset
from corpora.progress import Progress
from corpora.bundled import bundled_path
from harness import compare
from harness.cli import main
from tests.conftest import without_cost

ARTICLE = bundled_path("article")
# the article's own parameters, spelled out: an ir_datasets copy of it is another corpus, which gets the
# collection defaults (retrievers.defaults), while the bundled folder carries the article's
SYSTEMS = "bm25,lsa(dims=6),weighted(bm25,lsa(dims=6),depth=10),rrf(bm25,lsa(dims=6),depth=10)"
METRICS = "hit@3,recall@5,mrr,ndcg@5"
_NUMBERS = itertools.count()


@pytest.fixture
def ir_datasets(tmp_path: Path, monkeypatch):
    """ir_datasets, with its home (where it keeps copies and builds docstores) in the test's folder."""
    module = pytest.importorskip("ir_datasets", reason='ir_datasets is not installed (pip install "retbench[irds]")')
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "ir_datasets_home"))
    return module


def _register(ir_datasets, *components) -> str:
    """Register a dataset under a fresh id (the registry is process-wide) and return the id."""
    from ir_datasets.datasets.base import Dataset

    dataset_id = f"retbench-test/{next(_NUMBERS)}-{id(components)}"
    ir_datasets.registry.register(dataset_id, Dataset(*components))
    return dataset_id


def _beir(ir_datasets, folder: Path, split: str = "test") -> str:
    """The BEIR folder's own files, read by ir_datasets' BEIR classes (as it reads beir/<name>)."""
    from ir_datasets.datasets.beir import BeirDocs, BeirQrels, BeirQueries, BeirTitleDoc
    from ir_datasets.formats import GenericQuery
    from ir_datasets.util import LocalDownload

    name = f"retbench-{next(_NUMBERS)}"
    return _register(ir_datasets,
                     BeirDocs(name, LocalDownload(folder / "corpus.jsonl"), BeirTitleDoc),
                     BeirQueries(name, LocalDownload(folder / "queries.jsonl"), GenericQuery),
                     BeirQrels(LocalDownload(folder / "qrels" / f"{split}.tsv"), qrels_defs={}))


def test_an_ir_datasets_copy_reads_as_its_beir_folder(ir_datasets) -> None:
    dataset_id = _beir(ir_datasets, ARTICLE)
    through_irds = load_dataset(f"irds:{dataset_id}")
    as_folder = load_dataset(str(ARTICLE))
    assert (through_irds.name, through_irds.format, through_irds.source) == (dataset_id, "irds", f"irds:{dataset_id}")
    assert (len(through_irds.corpus), len(through_irds.queries), through_irds.qrels.n_judgments()) == \
        (len(as_folder.corpus), len(as_folder.queries), as_folder.qrels.n_judgments()) == (28, 14, 27)
    assert through_irds.corpus.content_hash() == as_folder.corpus.content_hash()  # ids, titles, texts
    assert through_irds.queries.content_hash() == as_folder.queries.content_hash()
    assert through_irds.qrels.content_hash() == as_folder.qrels.content_hash()
    assert through_irds.warnings == []


def test_bench_compare_on_irds_prints_the_articles_numbers_as_the_folder_does(ir_datasets, runner,
                                                                             tmp_path: Path) -> None:
    dataset_id = _beir(ir_datasets, ARTICLE)
    outputs = {}
    for name, corpus in (("irds", f"irds:{dataset_id}"), ("folder", str(ARTICLE))):
        result = runner.invoke(main, ["compare", "--corpus", corpus, "--systems", SYSTEMS, "--metrics", METRICS,
                                      "--out", str(tmp_path / name), "--no-cache", "--quiet"])
        assert result.exit_code == 0, result.output
        (folder,) = (tmp_path / name).iterdir()
        outputs[name] = {file: (folder / file).read_bytes()
                         for file in ("summary.csv", "per_query.csv", "comparisons.csv", "diagnosis.csv", "qrels.txt")}
        outputs[name]["runs"] = {p.name: p.read_bytes() for p in sorted((folder / "runs").iterdir())}
        outputs[name]["hashes"] = json.loads((folder / "manifest.json").read_text())["hashes"]
        # the first line names the corpus, the second and the last the folder
        first_line, folder_line, printed = result.stdout.split("\n", 2)
        assert folder_line == f"results: {folder}"
        outputs[name]["printed"] = without_cost(printed.split("\nresults: ")[0])  # the times of its own run aside
    assert outputs["irds"] == outputs["folder"]  # every number, run file and hash (not where the data lives)
    table = outputs["irds"]["printed"]
    rows: dict[str, list[str]] = {}
    for line in table.splitlines():  # the means table is the first to start a line with each label
        if line.split():
            rows.setdefault(line.split()[0], line.split()[1:])
    assert rows["bm25"] == ["0.857", "0.667", "0.821", "0.691"]
    assert rows["lsa(dims=6)"] == ["0.857", "0.679", "0.827", "0.679"]
    assert rows["weighted(bm25,lsa(dims=6),depth=10)"] == ["0.857", "0.738", "0.857", "0.734"]
    assert rows["rrf(bm25,lsa(dims=6),depth=10)"] == ["0.857", "0.738", "0.857", "0.737"]


def test_bench_corpora_shows_and_validates_an_id(ir_datasets, runner) -> None:
    dataset_id = _beir(ir_datasets, ARTICLE)
    shown = runner.invoke(main, ["corpora", "validate", f"irds:{dataset_id}"])
    assert shown.exit_code == 0, shown.output
    assert f"{dataset_id} (irds) from irds:{dataset_id}" in shown.stdout
    assert "\nvalid: " in shown.stdout and "judgments                     27 over 14 queries" in shown.stdout


def test_the_library_api_takes_an_irds_id(ir_datasets) -> None:
    dataset_id = _beir(ir_datasets, ARTICLE)
    through_irds = compare(["bm25", "lsa(dims=6)"], f"irds:{dataset_id}", ["ndcg@5"])  # the article's dims
    as_folder = compare(["bm25", "lsa(dims=6)"], str(ARTICLE), ["ndcg@5"])
    assert through_irds.summary.equals(as_folder.summary)
    (difference,) = through_irds.comparisons
    assert (round(difference.mean_diff, 3), round(difference.ci_low, 3), round(difference.ci_high, 3)) == \
        (0.012, -0.081, 0.107)


def test_a_config_file_keeps_an_irds_id_as_an_id(ir_datasets, runner, tmp_path: Path) -> None:
    dataset_id = _beir(ir_datasets, ARTICLE)
    (tmp_path / "run.toml").write_text(f'corpus = "irds:{dataset_id}"\nsystems = ["bm25"]\nmetrics = ["mrr"]\n',
                                       encoding="utf-8")
    result = runner.invoke(main, ["compare", "--config", str(tmp_path / "run.toml"), "--out", str(tmp_path / "out"),
                                  "--quiet"])
    assert result.exit_code == 0, result.output
    assert "bm25    0.821" in result.output


# ----- streaming -----------------------------------------------------------------------------------


class CountedDoc(NamedTuple):
    doc_id: str
    text: str
    title: str

    def __del__(self) -> None:  # noqa: D105  a tuple subclass may count its own deaths
        CountedDoc.deleted += 1


CountedDoc.deleted = 0  # type: ignore[attr-defined]


def test_documents_stream_into_the_corpus_lists_and_nothing_else_is_kept(ir_datasets) -> None:
    """One copy: the corpus's lists hold the very strings ir_datasets yielded, every document
    record is gone once read, and the reading is a task of the progress channel."""
    from ir_datasets.formats import BaseDocs, GenericQuery, TrecQrel
    from ir_datasets.formats import BaseQrels, BaseQueries

    texts = [f"text of document {i}" for i in range(25_000)]
    yielded = {"docs": 0}

    class Docs(BaseDocs):
        def docs_iter(self):
            for i, text in enumerate(texts):
                yielded["docs"] += 1
                yield CountedDoc(f"d{i}", text, "")

        def docs_cls(self):
            return CountedDoc

        def docs_count(self):
            return len(texts)

    class Queries(BaseQueries):
        def queries_iter(self):
            yield GenericQuery("q1", "document 7")

        def queries_cls(self):
            return GenericQuery

    class Qrels(BaseQrels):
        def qrels_iter(self):
            yield TrecQrel("q1", "d7", 1, "0")

        def qrels_cls(self):
            return TrecQrel

    dataset_id = _register(ir_datasets, Docs(), Queries(), Qrels())
    CountedDoc.deleted = 0  # type: ignore[attr-defined]
    heard: list[tuple[str, int, int | None]] = []
    dataset = load_dataset(f"irds:{dataset_id}", progress=Progress(lambda label, done, total: heard.append((label, done, total))))
    assert yielded["docs"] == len(texts)  # read once
    assert CountedDoc.deleted == len(texts)  # no record outlives its reading
    assert all(a is b for a, b in zip(dataset.corpus.texts, texts))  # the strings themselves, not copies
    assert dataset.corpus.metadata is None
    assert ("reading documents", 25_000, 25_000) in heard and ("reading documents", 10_000, 25_000) in heard


# ----- mistakes ------------------------------------------------------------------------------------


def test_missing_files_are_named_with_where_ir_datasets_expects_them(ir_datasets, runner, tmp_path: Path) -> None:
    """Offline and without a local copy: one error, exit 2, nothing written, no download by retbench."""
    absent = tmp_path / "nowhere"
    absent.mkdir()
    dataset_id = _beir(ir_datasets, absent)
    with pytest.raises(RetbenchError) as raised:
        load_dataset(f"irds:{dataset_id}")
    message = str(raised.value)
    assert message.startswith(f"corpus irds:{dataset_id}: ir_datasets could not provide the documents: "
                              "FileNotFoundError")
    assert f"missing: {absent / 'corpus.jsonl'}" in message
    assert f"under {tmp_path / 'ir_datasets_home'} ($IR_DATASETS_HOME)" in message and "Fix: " in message
    result = runner.invoke(main, ["compare", "--corpus", f"irds:{dataset_id}", "--out", str(tmp_path / "out"),
                                  "--quiet"])
    assert result.exit_code == 2
    error_line = result.output.splitlines()[-1]  # ir_datasets' own log lines come first, on stderr
    assert error_line.startswith(f"error: corpus irds:{dataset_id}: ir_datasets could not provide the documents")
    assert error_line.endswith("(rerun as `bench --debug compare ...` for the traceback)")
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_missing_judgments_name_their_own_file(ir_datasets, tmp_path: Path) -> None:
    folder = tmp_path / "beir"
    (folder / "qrels").mkdir(parents=True)
    for name in ("corpus.jsonl", "queries.jsonl"):
        (folder / name).write_bytes((ARTICLE / name).read_bytes())
    dataset_id = _beir(ir_datasets, folder)
    with pytest.raises(RetbenchError, match=r"could not provide the judgments: FileNotFoundError.*missing: .*test\.tsv"):
        load_dataset(f"irds:{dataset_id}")


def test_an_unknown_id_suggests_close_ones(ir_datasets) -> None:
    with pytest.raises(RetbenchError) as raised:
        load_dataset("irds:beir/scifact/tset")
    message = str(raised.value)  # the close ids depend on the ir_datasets version; the best one does not
    assert message.startswith("corpus irds:beir/scifact/tset: ir_datasets has no dataset 'beir/scifact/tset' "
                              "(close: beir/scifact/test, ")
    assert message.endswith(". Fix: check the id (`ir_datasets list` prints every one)")


def test_a_dataset_without_judgments_points_at_its_subsets(ir_datasets) -> None:
    with pytest.raises(RetbenchError, match=r"the dataset has no qrels in ir_datasets .* Fix: name one of its subsets "
                                            r"that has all three, e.g. beir/scifact/test, beir/scifact/train"):
        load_dataset("irds:beir/scifact")


@pytest.mark.parametrize(("options", "message"), [
    ({"format": "beir"}, "`format=beir` forces the layout of a folder"),
    ({"split": "dev"}, "`split=dev` picks the judgments of a folder, but a irds: id names its split itself"),
])
def test_folder_options_are_refused_for_an_id(ir_datasets, options, message) -> None:
    with pytest.raises(RetbenchError, match="Fix: drop `") as raised:
        load_dataset("irds:beir/scifact/test", **options)
    assert message in str(raised.value) and "--" not in str(raised.value)


def test_an_empty_id_is_an_error(ir_datasets) -> None:
    with pytest.raises(RetbenchError, match="no ir_datasets id after the prefix"):
        load_dataset("irds:")


def test_without_the_extra_an_irds_id_says_how_to_install_it(runner, monkeypatch, tmp_path: Path) -> None:
    import sys

    for loaded in [m for m in sys.modules if m == "ir_datasets" or m.startswith("ir_datasets.")]:
        monkeypatch.delitem(sys.modules, loaded)
    monkeypatch.setitem(sys.modules, "ir_datasets", None)
    with pytest.raises(RetbenchError, match=r'needs the ir_datasets package, which is not installed\. '
                                            r'Fix: pip install "retbench\[irds\]"'):
        load_dataset("irds:beir/scifact/test")
    result = runner.invoke(main, ["compare", "--corpus", "irds:beir/scifact/test", "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert 'Fix: pip install "retbench[irds]"' in result.output


def test_quiet_mutes_ir_datasets_progress_logs_but_not_the_results(ir_datasets, tmp_path: Path, capfd) -> None:
    """ir_datasets logs each file it opens at INFO through its own stderr handler; ``--quiet`` mutes them."""
    from click.testing import CliRunner

    dataset_id = _beir(ir_datasets, ARTICLE)
    shown = {}
    for quiet in (False, True):
        capfd.readouterr()
        result = CliRunner().invoke(main, ["compare", "--corpus", f"irds:{dataset_id}", "--systems", "bm25",
                                           "--metrics", "mrr", "--out", str(tmp_path / f"out-{quiet}"), "--no-cache",
                                           *(["--quiet"] if quiet else [])])
        assert result.exit_code == 0, result.output
        captured = capfd.readouterr()
        shown[quiet] = result.output + captured.err + captured.out
    assert "[INFO]" in shown[False]  # ir_datasets does log here: the check below can fail
    assert "[INFO]" not in shown[True]
    assert "bm25" in shown[True] and "0.821" in shown[True]  # the table still prints
