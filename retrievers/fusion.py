"""Fusions: retrievers built from other retrievers (any of them).

``weighted``: ``alpha * minmax(first) + (1 - alpha) * minmax(second)``, the article's weighted sum
of min-max normalised scores, over exactly two children (a weighted sum of more would need a weight
per child; nest it, ``weighted(weighted(a,b),c)``, or use ``rrf``, which takes any number). Min-max
runs over every document of the corpus; a query for which no child has a positive score gets no
results; a document whose fused score is 0 (at the minimum of every weighted child) is not a result;
the top ``depth`` fused documents are returned. The article lists the top 10 with zero fused scores
included (``threshold=-1``), but there LSA scores every document of a query that has a known word, so
only its single lowest document can fuse to 0 and 27 of the 28 score above it: leaving zeros out
changes none of its numbers.

``rrf``: Reciprocal Rank Fusion, sum over children of 1 / (k + rank) over each child's top
``depth`` (k = 60, Elasticsearch's ``rank_constant``), so it returns at most ``depth`` documents per
child. Ties break by doc id ascending.

``combsum`` and ``combmnz`` (Fox and Shaw's CombSUM and CombMNZ, as ranx defines them): each child's
top ``depth`` of a query is normalised over its own scores (``norm=min-max``, the default, or
``z-score``); a document's fused score is the sum of its normalised scores over the children that rank
it (``combmnz``: times the number of those children). Any number of children; every document a child
ranks is a result (a fused score of 0 or below too); ties break by doc id ascending.

``depth`` is how deep a fusion looks. Not given, it is chosen for the collection
(:mod:`retrievers.defaults`): the corpus's own (the bundled article carries its experiment's 10),
else as deep as the run, the ``k`` its search is asked for (``--depth``, 1000 by default), as a
practitioner fuses. A metric that cuts deeper than a depth given (``recall@100`` on
``rrf(depth=10)`` counts at most 20 documents) measures the cut, not the fusion; the harness warns
when that happens (:func:`fusions_in`).

Min-max over every document is the article's, and kept on every collection: it is each child's
exact range for the query, which an engine that sees only its top k can only approximate. A child
that leaves documents unscored (``-inf``: a run, :class:`~retrievers.run_file.RunSystem`, scores
only the documents it ranks) is normalised over the documents it scores and gives every other
document 0 (ranx's min-max and wsum), and it matches a query when it scores any document, whatever
the sign of its scores.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from corpora import Corpus, Queries, RetbenchError, Run
from retrievers.base import Retriever, ScoreRetriever, fit_retriever, score_retriever, search_retriever
from retrievers.defaults import choose
from retrievers.output import as_run
from retrievers.ranking import doc_id_order, rank_sparse_rows
from retrievers.run_file import RunSystem, as_system
from retrievers.validation import check_float, check_int

DEFAULT_CHILDREN = ("bm25", "lsa")


def _default_children(children: tuple[object, ...], owner: str) -> tuple[Retriever, ...]:
    """The children as retrievers: a run given in Python (a :class:`corpora.Run`, a ranx ``Run``, a
    PyTerrier DataFrame) becomes a :class:`~retrievers.run_file.RunSystem`; none: the defaults."""
    if children:
        systems = []
        for child in children:
            system = as_system(child)
            if system is None:
                raise RetbenchError(f"{owner}: children must be retrievers or runs, got {child!r}")
            systems.append(system)
        return tuple(systems)
    from retrievers.spec import build

    return tuple(build(name) for name in DEFAULT_CHILDREN)


def _scored_runs(fusion: Weighted) -> list[RunSystem]:
    """The run files whose scores ``fusion`` reads through ``score()``: its children, and theirs
    down a chain of ``weighted`` (a nested weighted's own search is not called)."""
    found = []
    for child in fusion.children:
        if isinstance(child, RunSystem):
            found.append(child)
        elif isinstance(child, Weighted):
            found.extend(_scored_runs(child))
    return found


class Fusion(Retriever):
    """Common parts of fusions: children, fitting, labels that show the children, depth."""

    children: tuple[Retriever, ...]
    depth: int

    def depth_for(self, corpus: Corpus | None, k: int) -> int:
        """How deep this fusion reads when its search is asked for ``k`` results on ``corpus``:
        ``depth`` given, else the corpus's, else ``k`` (:func:`retrievers.defaults.choose`)."""
        depth = choose(self, "depth", corpus, lambda: k)
        check_int(depth, "depth", self.name, low=1, default=1000)  # a corpus's carried value is checked too
        return depth

    def max_results(self, corpus: Corpus | None, k: int) -> int:
        """The most documents this fusion ranks for one query when asked for ``k`` on ``corpus``."""
        return self.depth_for(corpus, k)

    def fit(self, corpus: Corpus) -> Fusion:
        super().fit(corpus)
        for child in self.children:
            fit_retriever(child, corpus, self.run_context)
        self._tie_rank = doc_id_order(corpus.ids)
        return self

    def default_label(self) -> str:
        """The name, the children's labels (left out when they are the defaults), the parameters."""
        params = self.non_default_params()
        children = [c.label for c in self.children]
        if [c.name for c in self.children] == list(DEFAULT_CHILDREN) and children == list(DEFAULT_CHILDREN):
            children = []
        parts = children + [f"{k}={v!r}" if isinstance(v, float) else f"{k}={v}" for k, v in params.items()]
        return f"{self.name}({','.join(parts)})" if parts else self.name


class Weighted(Fusion, ScoreRetriever):
    """alpha * minmax(first) + (1 - alpha) * minmax(second); top ``depth`` (None: chosen for the collection).

    ``depth`` not given: the corpus's own (the article's 10), else as deep as the run (:mod:`retrievers.defaults`).

    A document whose fused score is 0 (at the minimum of every child with a weight) is not a result.
    """

    name = "weighted"
    min_score = 0.0  # a fused score of 0 is no match (the article's "zero scores are not results")
    batch_cells = 1 << 22  # query x doc cells per batch: two dense batches of 32 MB at most

    def __init__(self, *children: Retriever, alpha: float = 0.5, depth: int | None = None):
        check_float(alpha, "alpha", "weighted", low=0.0, high=1.0, default=0.5)
        if depth is not None:  # None: chosen for the collection (retrievers.defaults)
            check_int(depth, "depth", "weighted", low=1, default=1000)
        self.children = _default_children(children, "weighted")
        if len(self.children) != 2:
            fix = ("name two, e.g. weighted(bm25,lsa), or run the one retriever on its own"
                   if len(self.children) < 2 else
                   "nest it, e.g. weighted(weighted(bm25,lsa),dense,alpha=0.7), or use rrf, which fuses any number")
            raise RetbenchError(
                f"weighted fuses exactly two retrievers (alpha * first + (1 - alpha) * second), got "
                f"{len(self.children)}: {', '.join(c.label for c in self.children)}. Fix: {fix}."
            )
        for child in self.children:
            if not isinstance(child, ScoreRetriever):
                raise RetbenchError(
                    f"weighted: child {child.label!r} has no score matrix to normalise. "
                    "Fix: fuse it with rrf, which needs only rankings."
                )
        self.alpha = alpha
        self.depth = depth

    def fit(self, corpus: Corpus) -> Weighted:
        Fusion.fit(self, corpus)
        return self

    def weights(self) -> list[float]:
        """The weight of each child: alpha and 1 - alpha."""
        return [self.alpha, 1.0 - self.alpha]

    def score(self, queries: Queries) -> np.ndarray:
        # In place on one private copy per child: the same operations as the textbook form
        # (hence the same numbers), at two dense batches of memory instead of five.
        fused = None
        any_positive = np.zeros(len(queries), dtype=bool)
        for weight, child in zip(self.weights(), self.children):
            matrix = score_retriever(child, queries, self.run_context)
            dense = matrix.toarray() if sp.issparse(matrix) else np.array(matrix, dtype=np.float64)
            scored = dense > -np.inf  # -inf: unscored (a run's unranked documents)
            high = dense.max(axis=1, keepdims=True)
            low = np.min(dense, axis=1, keepdims=True, where=scored, initial=np.inf)
            partial = ~scored.all(axis=1)
            any_positive |= (high[:, 0] > 0) | (partial & scored.any(axis=1))
            span = high - low
            dense -= low
            np.divide(dense, span, out=dense, where=span > 0)
            dense[~(span[:, 0] > 0)] = 0.0
            if partial.any():
                dense[~scored] = 0.0
            dense *= weight
            if fused is None:
                fused = dense
            else:
                fused += dense
        fused[~any_positive] = -np.inf
        return fused

    def search(self, queries: Queries, k: int) -> Run:
        # The scores are read a batch of queries at a time (ScoreRetriever.search): a run file read
        # through score() is checked against the whole comparison's queries once, here.
        for run in _scored_runs(self):
            run.check_queries(queries)
        return ScoreRetriever.search(self, queries, min(k, self.depth_for(self.corpus, k)))


class RRF(Fusion):
    """Reciprocal Rank Fusion: sum of 1 / (k + rank) over each child's top ``depth`` (None: chosen for the collection).

    ``depth`` not given: the corpus's own (the article's 10), else as deep as the run (:mod:`retrievers.defaults`).

    It returns at most ``depth`` documents per child (fewer when a child is itself a shallower fusion).
    """

    name = "rrf"

    def __init__(self, *children: Retriever, k: int = 60, depth: int | None = None):
        check_int(k, "k", "rrf", low=0, default=60)
        if depth is not None:  # None: chosen for the collection (retrievers.defaults)
            check_int(depth, "depth", "rrf", low=1, default=1000)
        self.children = _default_children(children, "rrf")
        self.k = k
        self.depth = depth

    def max_results(self, corpus: Corpus | None, k: int) -> int:
        return _union_of_children(self, corpus, k)

    def search(self, queries: Queries, k: int) -> Run:
        corpus: Corpus = self.corpus
        n_queries = len(queries)
        fused = sp.csr_matrix((n_queries, len(corpus)))
        depth = self.depth_for(corpus, k)
        for child in self.children:
            run = as_run(search_retriever(child, queries, depth, self.run_context), corpus, queries, child.label, depth)
            lengths = run.lengths()
            rows = np.repeat(np.arange(n_queries), lengths)
            ranks = np.arange(len(run.doc_index)) - np.repeat(run.offsets[:-1], lengths) + 1
            keep = ranks <= depth
            points = 1.0 / (self.k + ranks[keep])
            fused = fused + sp.csr_matrix((points, (rows[keep], run.doc_index[keep])), shape=fused.shape)
        return rank_sparse_rows(fused.tocsr(), k, self._tie_rank, queries.ids, corpus.ids)


def _union_of_children(fusion: Fusion, corpus: Corpus | None, k: int) -> int:
    """The most documents a fusion of its children's top ``depth`` ranks for one query."""
    depth = fusion.depth_for(corpus, k)
    return sum(min(depth, c.max_results(corpus, depth)) if isinstance(c, Fusion) else depth
               for c in fusion.children)


def min_max(scores: np.ndarray) -> np.ndarray:
    """``(x - min) / (max - min)`` over one ranking's scores; all 0 when they are all equal."""
    low, span = scores.min(), scores.max() - scores.min()
    return (scores - low) / span if span > 0 else np.zeros_like(scores)


def z_score(scores: np.ndarray) -> np.ndarray:
    """``(x - mean) / std`` over one ranking's scores (the population standard deviation); all 0 when
    they are all equal."""
    mean, spread = scores.mean(), scores.std()
    return (scores - mean) / spread if spread > 0 else np.zeros_like(scores)


#: How ``combsum`` and ``combmnz`` normalise each child's scores for one query, over its own ranking.
NORMALISATIONS = {"min-max": min_max, "z-score": z_score}


class CombSUM(Fusion):
    """CombSUM (Fox and Shaw): a document's fused score is the sum, over the children that rank it in
    their top ``depth``, of its normalised score (``norm``: :data:`NORMALISATIONS`, over that child's
    ranking of the query); every document some child ranks is a result, ties by doc id ascending.
    ranx's ``fuse(method="sum")`` over runs of that depth."""

    name = "combsum"

    def __init__(self, *children: Retriever, norm: str = "min-max", depth: int | None = None):
        if norm not in NORMALISATIONS:
            raise RetbenchError(f"{self.name}: norm {norm!r} is not one of {', '.join(NORMALISATIONS)}. "
                                f"Fix: write e.g. {self.name}(bm25,lsa,norm=z-score)")
        if depth is not None:  # None: chosen for the collection (retrievers.defaults)
            check_int(depth, "depth", self.name, low=1, default=1000)
        self.children = _default_children(children, self.name)
        self.norm = norm
        self.depth = depth

    def max_results(self, corpus: Corpus | None, k: int) -> int:
        return _union_of_children(self, corpus, k)

    @staticmethod
    def combine(summed: np.ndarray, rankers: np.ndarray) -> np.ndarray:
        """The fused score of each document from the sum of its normalised scores and the number of
        children that rank it: the sum."""
        return summed

    def search(self, queries: Queries, k: int) -> Run:
        corpus: Corpus = self.corpus
        depth = self.depth_for(corpus, k)
        normalise = NORMALISATIONS[self.norm]
        rows, columns, values = [], [], []
        for child in self.children:
            run = as_run(search_retriever(child, queries, depth, self.run_context), corpus, queries, child.label, depth)
            for row in range(len(queries)):
                entries = slice(int(run.offsets[row]), int(run.offsets[row + 1]))
                if entries.stop > entries.start:
                    rows.append(np.full(entries.stop - entries.start, row))
                    columns.append(run.doc_index[entries].astype(np.int64))
                    values.append(normalise(run.scores[entries]))
        if not rows:
            return rank_sparse_rows(sp.csr_matrix((len(queries), len(corpus))), k, self._tie_rank, queries.ids,
                                    corpus.ids)
        row, column, value = np.concatenate(rows), np.concatenate(columns), np.concatenate(values)
        order = np.lexsort((column, row))  # stable: each document's scores stay in the children's order
        row, column, value = row[order], column[order], value[order]
        first = np.flatnonzero(np.r_[True, (row[1:] != row[:-1]) | (column[1:] != column[:-1])])
        summed = np.add.reduceat(value, first)  # left to right, child by child
        rankers = np.diff(np.r_[first, len(row)])
        fused = sp.csr_matrix((self.combine(summed, rankers), (row[first], column[first])),
                              shape=(len(queries), len(corpus)))
        return rank_sparse_rows(fused, k, self._tie_rank, queries.ids, corpus.ids)


class CombMNZ(CombSUM):
    """CombMNZ (Fox and Shaw): CombSUM's sum times the number of children that rank the document in
    their top ``depth``. ranx's ``fuse(method="mnz")`` over runs of that depth."""

    name = "combmnz"

    @staticmethod
    def combine(summed: np.ndarray, rankers: np.ndarray) -> np.ndarray:
        """The sum times the number of children that rank the document."""
        return summed * rankers


def fusions_in(retriever: Retriever) -> list[Fusion]:
    """Every fusion in ``retriever``'s tree (itself first, then its children's, depth first).

    Walked with an explicit stack, so a deep tree cannot exhaust Python's recursion limit.
    """
    found: list[Fusion] = []
    stack = [retriever]
    while stack:
        node = stack.pop()
        if isinstance(node, Fusion):
            found.append(node)
            stack.extend(reversed(node.children))
    return found
