"""LSA on small corpora computes the article's scikit-learn pipeline without scikit-learn, and must
equal it bit for bit (both on one BLAS thread, as LSA always runs): the article's rank table depends
on near-ties between cosine scores."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import TfidfVectorizer
from threadpoolctl import threadpool_limits

from corpora import Corpus, Queries, RetbenchError, get_analyzer, load_dataset
from retrievers.defaults import chosen
from retrievers.lsa import LSA


def _sklearn_scores(corpus: Corpus, queries: Queries, dims: int, seed: int, analyzer: str) -> np.ndarray:
    """The article's listing: TfidfVectorizer -> TruncatedSVD(arpack) -> cosine, on one BLAS thread."""
    with threadpool_limits(limits=1, user_api="blas"):
        return _sklearn_pipeline(corpus, queries, dims, seed, analyzer)


def _sklearn_pipeline(corpus: Corpus, queries: Queries, dims: int, seed: int, analyzer: str) -> np.ndarray:
    tfidf = TfidfVectorizer(tokenizer=get_analyzer(analyzer), lowercase=False, token_pattern=None)
    svd = TruncatedSVD(n_components=dims, random_state=seed, algorithm="arpack")
    docs = svd.fit_transform(tfidf.fit_transform(corpus.full_texts))
    queries_reduced = svd.transform(tfidf.transform(queries.texts))

    def unit(m: np.ndarray) -> np.ndarray:
        norms = np.linalg.norm(m, axis=1, keepdims=True)
        return np.divide(m, norms, out=np.zeros_like(m), where=norms > 1e-12)

    return unit(queries_reduced) @ unit(docs).T


def test_bundled_corpus_scores_equal_scikit_learn_exactly():
    data = load_dataset("article")
    ours = LSA().fit(data.corpus).score(data.queries)
    np.testing.assert_array_equal(ours, _sklearn_scores(data.corpus, data.queries, 6, 0, "article"))


@pytest.mark.parametrize("dims,seed,analyzer", [(2, 0, "article"), (6, 7, "article"), (10, 3, "english")])
def test_other_parameters_equal_scikit_learn_exactly(dims, seed, analyzer):
    data = load_dataset("article")
    ours = LSA(dims=dims, seed=seed, analyzer=analyzer).fit(data.corpus).score(data.queries)
    np.testing.assert_array_equal(ours, _sklearn_scores(data.corpus, data.queries, dims, seed, analyzer))


def test_repeated_words_unknown_words_and_empty_queries():
    corpus = Corpus(["d1", "d2", "d3", "d4"],
                    ["zebra apple apple pear", "pear pear plum zebra", "kiwi apple", "plum kiwi kiwi fig zebra"])
    queries = Queries(["q1", "q2", "q3"], ["apple apple zebra unknown", "nothing known here", "fig plum"])
    ours = LSA(dims=2).fit(corpus).score(queries)
    np.testing.assert_array_equal(ours, _sklearn_scores(corpus, queries, 2, 0, "article"))
    assert not ours[1].any()  # a query with no known word scores nothing


def test_a_real_collection_equals_scikit_learn_exactly(shared_data):
    data = load_dataset(str(shared_data / "med"))
    lsa = LSA()
    ours = lsa.fit(data.corpus).score(data.queries)
    assert chosen(lsa) == {"dims": 100}  # MED's 1,033 documents: the rule's 100 dimensions
    np.testing.assert_array_equal(ours, _sklearn_scores(data.corpus, data.queries, 100, 0, "article"))


@pytest.mark.parametrize("randomized", [False, True])
def test_scores_are_the_same_bits_whatever_blas_thread_count_the_caller_set(shared_data, randomized):
    """A 2-core machine and a Dask worker (one BLAS thread) write the same run files: on MED two
    BLAS threads change some scores' last bits unless LSA runs its products on one."""
    data = load_dataset(str(shared_data / "med"))
    scores = []
    for threads in (1, 2):
        lsa = LSA(dims=50)
        if randomized:  # the large corpora's path: tokenizer and randomized SVD
            lsa.randomized_above = 100
        with threadpool_limits(limits=threads, user_api="blas"):
            scores.append(lsa.fit(data.corpus).score(data.queries))
    np.testing.assert_array_equal(scores[0], scores[1])


def test_bench_compare_on_the_bundled_corpus_does_not_import_scikit_learn(tmp_path):
    code = ("import sys; from harness.cli import main\n"
            "try:\n    main(['compare', '--systems', 'bm25,lsa,weighted,rrf', '--out', sys.argv[1]])\n"
            "except SystemExit as exit:\n    print('exit', exit.code)\n"
            "print('sklearn imported:', 'sklearn' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True)
    lines = out.stdout.strip().splitlines()
    assert lines[-2:] == ["exit 0", "sklearn imported: False"], out.stdout[-2000:] + out.stderr[-2000:]
    assert len(list(tmp_path.iterdir())) == 1  # the comparison ran through to its results folder


@pytest.mark.parametrize("texts,message", [
    (["the of", "and"], "lsa found no terms in the corpus: every one of its 2 documents is empty"),
    (["apple", "apple apple"], "lsa needs at least 2 documents and 2 distinct terms"),
    (["red apple", "green pear", "blue plum"], "lsa\\(dims=6\\) needs more dimensions than the corpus has"),
])
def test_corpora_too_small_for_lsa_get_a_clear_error(texts, message):
    corpus = Corpus([f"d{i}" for i in range(len(texts))], texts)
    with pytest.raises(RetbenchError, match=message):
        LSA(dims=6).fit(corpus)


def test_dimensions_not_given_fit_a_small_corpus():
    """The rule chooses what the collection allows where a given dims=6 is an error (above)."""
    corpus = Corpus(["d0", "d1", "d2"], ["red apple", "green pear", "blue plum"])
    lsa = LSA().fit(corpus)
    assert chosen(lsa) == {"dims": 1} and lsa.label == "lsa"  # (min(3 documents, 6 terms) - 1) // 2
