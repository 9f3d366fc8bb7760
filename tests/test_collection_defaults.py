"""Defaults chosen for the collection (``retrievers.defaults``): the bundled article runs its own
experiment's parameters, every other corpus a practitioner's (LSA dimensions from its size, fusions
as deep as the run), a given parameter always wins, and the systems line and manifest say what ran."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.feature_extraction.text import CountVectorizer

from corpora import Corpus, Queries, get_analyzer, load_dataset
from corpora.bundled import bundled_path
from harness.cli import main
from retrievers import BM25, LSA, RRF, Weighted
from retrievers.defaults import chosen

FAST = ["--bootstrap-samples", "50", "--permutations", "50"]
WORDS = ("refund invoice billing plan export notebook password login backup restore sync offline team admin "
         "share folder upload limit storage archive").split()


def write_corpus(folder: Path, documents: int = 60) -> tuple[list[str], list[str]]:
    """A BEIR folder of ``documents`` documents of 6 words each and 4 queries; returns (ids, texts)."""
    rng = np.random.default_rng(7)
    ids = [f"d{i}" for i in range(documents)]
    texts = [" ".join(rng.choice(WORDS, 6)) for _ in ids]
    folder.mkdir()
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "title": "", "text": t}) + "\n"
                                                 for d, t in zip(ids, texts)))
    queries = {"q1": "refund billing", "q2": "export notebook", "q3": "password login", "q4": "backup restore"}
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in queries.items()))
    (folder / "qrels").mkdir()
    lines = ["query-id\tcorpus-id\tscore"]
    for q, text in queries.items():
        first = text.split()[0]
        lines += [f"{q}\t{d}\t1" for d, t in zip(ids, texts) if first in t.split()][:5]
    (folder / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n")
    return ids, texts


def manifest_of(out: Path) -> dict:
    (folder,) = [p for p in out.iterdir() if p.is_dir()]
    return json.loads((folder / "manifest.json").read_text())


def test_a_corpus_of_its_own_gets_the_practitioners_defaults_shown_and_recorded(runner, tmp_path):
    _, texts = write_corpus(tmp_path / "mine")
    terms = len(CountVectorizer(analyzer=get_analyzer("article")).fit(texts).vocabulary_)
    dims = min(100, (min(60, terms) - 1) // 2)  # the rule, from scikit-learn's count of the terms
    assert dims == (min(60, terms) - 1) // 2 < 100  # a small corpus: half its rank, not 100
    result = runner.invoke(main, ["compare", "--corpus", str(tmp_path / "mine"), "--systems", "bm25,lsa,rrf",
                                  "--metrics", "ndcg@10,recall@50", "--depth", "50", "--out", str(tmp_path / "out"),
                                  *FAST])
    assert result.exit_code == 0, result.output
    assert (f"systems: bm25, lsa [lsa(dims={dims})], rrf [rrf(bm25,lsa(dims={dims}),depth=50)]; "
            "analyzer article; depth 50") in result.output
    assert "fuses to depth" not in result.output  # as deep as the run: no cut to warn about
    systems = {s["label"]: s for s in manifest_of(tmp_path / "out")["systems"]}
    assert systems["lsa"]["parameters"] == {"dims": dims, "seed": 0, "analyzer": "article"}
    assert systems["lsa"]["chosen_for_corpus"] == ["dims"] and systems["lsa"]["as_run"] == f"lsa(dims={dims})"
    assert systems["rrf"]["parameters"] == {"k": 60, "depth": 50}
    assert systems["rrf"]["as_run"] == f"rrf(bm25,lsa(dims={dims}),depth=50)"
    assert systems["bm25"]["chosen_for_corpus"] == [] and systems["bm25"]["as_run"] == "bm25"


def test_a_parameter_given_wins_over_the_corpus_and_the_rule(runner, tmp_path):
    result = runner.invoke(main, ["compare", "--systems", "lsa(dims=3),rrf(depth=5),weighted(depth=7)",
                                  "--metrics", "ndcg@5", "--out", str(tmp_path / "out"), *FAST])
    assert result.exit_code == 0, result.output
    # the children left unset still take the article's own 6 dimensions
    assert ("systems: lsa(dims=3), rrf(depth=5) [rrf(bm25,lsa(dims=6),depth=5)], "
            "weighted(depth=7) [weighted(bm25,lsa(dims=6),depth=7)];") in result.output
    systems = {s["label"]: s for s in manifest_of(tmp_path / "out")["systems"]}
    assert systems["lsa(dims=3)"]["parameters"]["dims"] == 3 and systems["lsa(dims=3)"]["chosen_for_corpus"] == []
    assert systems["rrf(depth=5)"]["parameters"]["depth"] == 5


def test_the_bundled_article_carries_its_experiments_parameters_by_name_and_by_path():
    for name in ("article", str(bundled_path("article"))):
        corpus = load_dataset(name).corpus
        assert corpus.retriever_defaults == {"lsa": {"dims": 6}, "rrf": {"depth": 10}, "weighted": {"depth": 10}}
        lsa = LSA().fit(corpus)
        assert chosen(lsa) == {"dims": 6} and lsa.label == "lsa"
    # the carried parameters are not the corpus's identity
    same = Corpus(corpus.ids, corpus.texts, corpus.titles, corpus.metadata, corpus.name, corpus.source)
    assert same == corpus and same.content_hash() == corpus.content_hash()
    assert chosen(LSA().fit(same)) == {"dims": (28 - 1) // 2}  # without them: the rule


def test_a_fusion_not_given_a_depth_fuses_as_deep_as_it_is_asked():
    corpus = Corpus([f"d{i}" for i in range(12)], [f"apple pear {'plum ' * i}kiwi{i}" for i in range(12)])
    queries = Queries(["q"], ["apple plum"])
    for make in (lambda **kw: RRF(BM25(), BM25(k1=0.5), **kw), lambda **kw: Weighted(BM25(), LSA(dims=2), **kw)):
        fusion = make().fit(corpus)
        run = fusion.search(queries, 9)
        assert chosen(fusion) == {"depth": 9}
        explicit = make(depth=9).fit(corpus).search(queries, 9)
        assert run.ranking("q") == explicit.ranking("q") and len(run.ranking("q")) == 9
        assert "depth" not in fusion.label  # the label says what was asked, not what was chosen


def test_a_carried_value_is_checked_like_a_given_one():
    corpus = Corpus(["a", "b", "c", "d"], ["red apple", "green pear", "blue plum", "red plum"],
                    retriever_defaults={"lsa": {"dims": 0}})
    with pytest.raises(Exception, match="The 'dims' parameter of lsa must be an int >= 1. Got 0"):
        LSA().fit(corpus)


@pytest.mark.slow
def test_cranfield_defaults_are_a_practitioners(shared_data):
    """Issue 29's acceptance: the default lsa and rrf on Cranfield are not the article's toy settings."""
    from harness.core.api import evaluate

    data = load_dataset(str(shared_data / "cranfield"))
    lsa = evaluate(LSA().fit(data.corpus).search(data.queries, 1000), data.qrels, ["ndcg@10"])["ndcg@10"].mean()
    rrf = RRF().fit(data.corpus)
    recall = evaluate(rrf.search(data.queries, 1000), data.qrels, ["recall@100"])["recall@100"].mean()
    assert chosen(rrf) == {"depth": 1000} and chosen(rrf.children[1]) == {"dims": 100}
    assert lsa >= 0.30 and recall >= 0.70  # the article's 6 dimensions and depth 10: 0.130 and 0.424
