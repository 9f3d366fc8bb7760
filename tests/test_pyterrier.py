"""``PyTerrierRetriever``: a PyTerrier transformer benchmarked beside the baselines.

A fake with PyTerrier's interface (``transform(topics) -> results``) serves most tests, so they run
without PyTerrier; where PyTerrier is importable, real pipelines (pure-Python transformers and
PyTerrier's operators: no Java needed) are compared, and retbench's numbers for them are checked
against PyTerrier's own ``pt.Experiment``.
"""

from __future__ import annotations

import sys
import textwrap
import warnings
from pathlib import Path

import pandas as pd
import pytest

from corpora import Corpus, Queries, RetbenchError, load_dataset
from harness import compare, evaluate
from harness.cli import main
from retrievers import BM25, PyTerrierRetriever, build
from retrievers.output import as_run

ARTICLE = load_dataset("article")


class FakeTransformer:
    """PyTerrier's interface over fixed results: what ``pt.Transformer.from_df`` does, without PyTerrier."""

    def __init__(self, results: pd.DataFrame):
        self.results = results
        self.asked: list[pd.DataFrame] = []

    def transform(self, topics: pd.DataFrame) -> pd.DataFrame:
        self.asked.append(topics)
        return topics.merge(self.results, on="qid")


def _bm25_results(k: int = 20) -> pd.DataFrame:
    """BM25's rankings on the article corpus as a PyTerrier results frame (rank from 0)."""
    run = BM25().fit(ARTICLE.corpus).search(ARTICLE.queries, k)
    run = as_run(run, ARTICLE.corpus, ARTICLE.queries, "bm25")
    return run.to_dataframe()


def test_a_pipeline_is_compared_beside_the_baselines_with_the_numbers_its_results_give() -> None:
    fake = FakeTransformer(_bm25_results())
    result = compare({"bm25": BM25(), "terrier": PyTerrierRetriever(fake)}, ARTICLE, ["ndcg@5", "mrr", "recall@5"])
    rows = result.summary.set_index("system")
    assert rows.loc["terrier"].tolist() == rows.loc["bm25"].tolist()  # the same rankings, the same numbers
    asked, *latency = fake.asked  # the batch first, then the cost reading's single-query latency rounds
    assert asked.columns.tolist() == ["qid", "query"]
    assert asked.qid.tolist() == ARTICLE.queries.ids and asked["query"].tolist() == ARTICLE.queries.texts
    assert latency and all(len(single) == 1 and single.columns.tolist() == ["qid", "query"] for single in latency)


def test_results_are_ranked_as_pyterriers_evaluation_ranks_them_and_cut_at_k() -> None:
    """Ties by docno descending (trec_eval's rule, which pt.Experiment applies); PyTerrier's rank ignored."""
    results = pd.DataFrame({"qid": ["q1"] * 4 + ["q2"], "docno": ["a", "c", "b", "d", "a"],
                            "score": [1.0, 2.0, 2.0, 0.5, 3.0], "rank": [0, 1, 2, 3, 0]})
    corpus = Corpus(["a", "b", "c", "d"], ["", "", "", ""])
    retriever = PyTerrierRetriever(FakeTransformer(results)).fit(corpus)
    run = retriever.search(Queries(["q1", "q2"], ["x", "y"]), k=3)
    assert run.to_mapping() == {"q1": [("c", 2.0), ("b", 2.0), ("a", 1.0)], "q2": [("a", 3.0)]}


def test_a_function_is_called_with_the_corpus_to_build_the_pipeline() -> None:
    seen: list[Corpus] = []

    def make(corpus: Corpus) -> FakeTransformer:
        seen.append(corpus)
        return FakeTransformer(_bm25_results())

    result = compare({"bm25": BM25(), "made": PyTerrierRetriever(make)}, ARTICLE, ["ndcg@5"])
    assert seen == [ARTICLE.corpus]
    assert result.summary.set_index("system").loc["made", "ndcg@5"] == pytest.approx(0.691, abs=5e-4)


def test_the_cli_names_a_pipeline_by_import_path(runner, tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "my_pipelines.py").write_text(textwrap.dedent("""
        import pandas as pd

        class Echo:
            '''Every query's docs from a fixed table: PyTerrier's interface, no PyTerrier.'''
            def transform(self, topics):
                table = pd.DataFrame({"qid": ["q01", "q01"], "docno": ["pricing2", "pricing1"], "score": [2.0, 1.0]})
                return topics.merge(table, on="qid")

        def make(corpus):
            assert len(corpus) == 28
            return Echo()

        ECHO = Echo()
        NOT_A_PIPELINE = 42
    """), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    result = runner.invoke(main, ["compare", "--systems", "bm25,mine=pyterrier(pipeline=my_pipelines:make),"
                                  "pyterrier(pipeline=my_pipelines:ECHO)", "--metrics", "mrr",
                                  "--out", str(tmp_path / "out"), "--quiet"])
    assert result.exit_code == 0, result.output
    assert "mine" in result.stdout and "pyterrier(pipeline=my_pipelines:ECHO)" in result.stdout
    for spec, message in (("pyterrier", "pyterrier needs a pipeline"),
                          ("pyterrier(pipeline=my_pipelines:NOT_A_PIPELINE)", "is a int, neither a transformer"),
                          ("pyterrier(pipeline=my_pipelines:missing)", "has no attribute 'missing'"),
                          ("pyterrier(pipeline=no_such_module:x)", "cannot import module 'no_such_module'"),
                          ("pyterrier(pipeline=my_pipelines)", "expected module:attribute")):
        failed = runner.invoke(main, ["compare", "--systems", spec, "--out", str(tmp_path / "bad"), "--quiet"])
        assert failed.exit_code == 2, spec
        assert message in failed.output and "Fix: " in failed.output, spec
    assert not (tmp_path / "bad").exists()


def test_a_pipeline_object_is_labelled_by_its_class_and_recorded_without_an_address() -> None:
    retriever = PyTerrierRetriever(FakeTransformer(_bm25_results()))
    assert retriever.label == f"pyterrier(pipeline={FakeTransformer.__module__}.FakeTransformer)"
    assert " at 0x" not in str(retriever.get_params())
    assert build("pyterrier(pipeline=json:loads)").label == "pyterrier(pipeline=json:loads)"


@pytest.mark.parametrize(("returned", "message"), [
    ([1, 2], "the pipeline's results are a list, not a DataFrame"),
    (pd.DataFrame({"qid": ["q01"], "docid": ["pricing1"], "score": [1.0]}),
     "rankings need the columns qid, docno, score"),
    (pd.DataFrame({"qid": ["q01"], "docno": ["nowhere"], "score": [1.0]}), "doc id 'nowhere' is not in the corpus"),
    (pd.DataFrame({"qid": ["q01"], "docno": ["pricing1"], "score": [float("nan")]}), "the score is NaN"),
])
def test_results_a_benchmark_cannot_use_are_an_error_naming_the_system(returned, message) -> None:
    class Broken:
        def transform(self, topics):
            return returned

    with pytest.raises(RetbenchError) as raised:
        compare({"broken": PyTerrierRetriever(Broken())}, ARTICLE, ["mrr"])
    assert "'broken'" in str(raised.value) and message in str(raised.value)


def test_a_factory_that_returns_no_transformer_is_an_error() -> None:
    with pytest.raises(RetbenchError, match="the function returned a str, not a transformer"):
        compare({"x": PyTerrierRetriever(lambda corpus: "nope")}, ARTICLE, ["mrr"])


def test_importing_the_adapter_does_not_import_pyterrier() -> None:
    import subprocess

    code = ("import sys\nfrom retrievers import PyTerrierRetriever\nfrom retrievers.registry import get_class\n"
            "get_class('pyterrier')\nprint('pyterrier' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


# ----- real PyTerrier ------------------------------------------------------------------------------


@pytest.fixture
def pt():
    module = pytest.importorskip("pyterrier", reason="PyTerrier is not installed (pip install \"retbench[pyterrier]\"); "
                                                     "the fake transformer tests above cover the adapter")
    warnings.filterwarnings("ignore", module="pyterrier")
    return module


def test_real_pyterrier_pipelines_score_as_pt_experiment_scores_them(pt) -> None:
    """Pure-Python PyTerrier transformers and operators (no Java): a fixed result set, a rank
    cutoff (``%``) and a re-scoring stage (``>>``), compared beside BM25; every number equals
    PyTerrier's own evaluation of the same pipelines."""
    results = pt.model.add_ranks(_bm25_results(20).drop(columns="rank"))
    source = pt.Transformer.from_df(results)
    pipelines = {"first": source % 3,
                 "rescored": source >> pt.apply.doc_score(lambda row: float(len(row["docno"])) + row["score"])}
    metrics = ["ndcg@5", "mrr", "map"]
    result = compare({"bm25": BM25(), **{name: PyTerrierRetriever(p) for name, p in pipelines.items()}},
                     ARTICLE, metrics)
    ours = result.summary.set_index("system")
    topics = pd.DataFrame({"qid": ARTICLE.queries.ids, "query": ARTICLE.queries.texts})
    theirs = pt.Experiment(list(pipelines.values()), topics, ARTICLE.qrels.to_dataframe(),
                           eval_metrics=["ndcg_cut_5", "recip_rank", "map"], names=list(pipelines),
                           validate="ignore").set_index("name")
    for name in pipelines:
        assert ours.loc[name, "ndcg@5"] == pytest.approx(theirs.loc[name, "ndcg_cut_5"], abs=1e-9)
        assert ours.loc[name, "mrr"] == pytest.approx(theirs.loc[name, "recip_rank"], abs=1e-9)
        assert ours.loc[name, "map"] == pytest.approx(theirs.loc[name, "map"], abs=1e-9)
    assert ours.loc["first", "mrr"] == pytest.approx(ours.loc["bm25", "mrr"], abs=1e-12)  # top 3 hold the first hit


def test_a_pyterrier_results_frame_becomes_a_run_and_back(pt) -> None:
    results = pt.model.add_ranks(pd.DataFrame({"qid": ["q1", "q1", "q2"], "docno": ["a", "b", "c"],
                                               "score": [1.0, 2.0, 0.5]}))
    from corpora import Run

    run = Run.from_dataframe(results)
    assert run.to_mapping() == {"q1": [("b", 2.0), ("a", 1.0)], "q2": [("c", 0.5)]}
    frame = run.to_dataframe()
    assert pt.model.add_ranks(frame.drop(columns="rank")).sort_values(["qid", "rank"]).reset_index(drop=True) \
        .equals(frame)  # PyTerrier ranks it as retbench does
    per_query = evaluate(run, {"q1": {"b": 1}, "q2": {"c": 1}}, ["mrr"])
    assert per_query["mrr"].tolist() == [1.0, 1.0]
