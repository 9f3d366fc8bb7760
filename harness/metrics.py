"""Retrieval metrics: one pure function per measure, the specification of its batch path.

Conventions, pinned once (and printed in every manifest):

* ``ranking`` is a list of doc ids, best first, evaluated as given; ``qrels`` maps doc id -> grade.
* Binary measures (hit, recall, precision, reciprocal rank, AP, R-precision) count a document as
  relevant when ``grade >= rel_threshold`` (default 1). Negative grades are judged, never relevant.
* Graded measures (nDCG) use the grade itself: linear gain ``g`` (``ndcg``, = trec_eval
  ``ndcg_cut``) or exponential gain ``2**g - 1`` (``ndcg_exp``, Burges); grades <= 0 gain nothing.
  The discount is ``1 / log2(rank + 1)``. The ideal DCG uses every judged document of the query,
  retrieved or not (the scikit-learn ``ndcg_score`` trap).
* A query without relevant documents scores 0 everywhere (the harness excludes such queries).

Names are declared once in :data:`METRICS`; :func:`parse_metric` reads ``ndcg@5``, ``mrr``, ...
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from corpora import ParameterError, UnknownNameError

Ranking = Sequence[str]
Judgments = Mapping[str, int]


def _relevant(qrels: Judgments, rel_threshold: int) -> set[str]:
    return {d for d, g in qrels.items() if g >= rel_threshold}


def hit(ranking: Ranking, qrels: Judgments, k: int, rel_threshold: int = 1) -> float:
    """hit@k = 1 if any relevant document is in the top k, else 0.

    >>> hit(["x", "y", "a"], {"a": 2}, 3), hit(["x", "y", "a"], {"a": 2}, 2)
    (1.0, 0.0)
    """
    relevant = _relevant(qrels, rel_threshold)
    return float(any(d in relevant for d in ranking[:k]))


def recall(ranking: Ranking, qrels: Judgments, k: int, rel_threshold: int = 1) -> float:
    """recall@k = |relevant in top k| / |relevant|.

    >>> round(recall(["a", "x", "y", "b", "z"], {"a": 2, "b": 1, "c": 1}, 5), 2)
    0.67
    """
    relevant = _relevant(qrels, rel_threshold)
    if not relevant:
        return 0.0
    return sum(d in relevant for d in ranking[:k]) / len(relevant)


def precision(ranking: Ranking, qrels: Judgments, k: int, rel_threshold: int = 1) -> float:
    """precision@k = |relevant in top k| / k (k, not the number retrieved: trec_eval ``P_k``).

    >>> precision(["B", "X", "A", "C"], {"A": 3, "B": 2, "C": 1}, 4)
    0.75
    """
    relevant = _relevant(qrels, rel_threshold)
    return sum(d in relevant for d in ranking[:k]) / k


def reciprocal_rank(ranking: Ranking, qrels: Judgments, k: int | None = None, rel_threshold: int = 1) -> float:
    """RR = 1 / rank of the first relevant document (0 if none in the top k); its mean is MRR.

    >>> reciprocal_rank(["x", "y", "a"], {"a": 2}), reciprocal_rank(["x", "y", "a"], {"a": 2}, k=2)
    (0.3333333333333333, 0.0)
    """
    relevant = _relevant(qrels, rel_threshold)
    for rank, d in enumerate(ranking[:k] if k is not None else ranking, 1):
        if d in relevant:
            return 1.0 / rank
    return 0.0


def _gain(grade: int, gain: str) -> float:
    if grade <= 0:
        return 0.0
    return float(grade) if gain == "linear" else float(2**grade - 1)


def dcg(grades: Sequence[int], gain: str = "linear") -> float:
    """DCG = sum_i gain(grade_i) / log2(i + 1), i the 1-based rank.

    >>> round(dcg([2, 0, 3, 1], gain="exp"), 3)
    6.931
    """
    return sum(_gain(g, gain) / math.log2(i + 1) for i, g in enumerate(grades, 1))


def ndcg(ranking: Ranking, qrels: Judgments, k: int | None = None, gain: str = "linear") -> float:
    """nDCG@k = DCG@k / ideal DCG@k; the ideal sorts every judged grade of the query, descending.

    Linear gain (the article's, trec_eval ``ndcg_cut``) by default; ``gain="exp"`` uses 2^g - 1.

    >>> qrels = {"a": 2, "b": 1, "c": 1}
    >>> round(ndcg(["a", "x", "y", "b", "z"], qrels, 5), 3), round(ndcg(["x", "y", "a", "b", "z"], qrels, 5), 3)
    (0.776, 0.457)
    >>> round(ndcg(["B", "X", "A", "C"], {"A": 3, "B": 2, "C": 1}, 4, gain="exp"), 3)
    0.738
    """
    top = ranking[:k] if k is not None else ranking
    actual = dcg([qrels.get(d, 0) for d in top], gain)
    ideal_grades = sorted((g for g in qrels.values() if g > 0), reverse=True)
    ideal = dcg(ideal_grades[:k] if k is not None else ideal_grades, gain)
    return actual / ideal if ideal > 0 else 0.0


def average_precision(ranking: Ranking, qrels: Judgments, k: int | None = None, rel_threshold: int = 1) -> float:
    """AP@k = (sum over relevant d at rank i <= k of precision@i) / |relevant|.

    >>> average_precision(["a", "x", "b"], {"a": 1, "b": 1, "c": 1})
    0.5555555555555555
    """
    relevant = _relevant(qrels, rel_threshold)
    if not relevant:
        return 0.0
    found, total = 0, 0.0
    for rank, d in enumerate(ranking[:k] if k is not None else ranking, 1):
        if d in relevant:
            found += 1
            total += found / rank
    return total / len(relevant)


def r_precision(ranking: Ranking, qrels: Judgments, rel_threshold: int = 1) -> float:
    """R-precision = |relevant in top R| / R, R = |relevant|.

    >>> r_precision(["a", "x", "b"], {"a": 1, "b": 1})
    0.5
    """
    relevant = _relevant(qrels, rel_threshold)
    if not relevant:
        return 0.0
    return sum(d in relevant for d in ranking[: len(relevant)]) / len(relevant)


def first_relevant_rank(ranking: Ranking, qrels: Judgments, rel_threshold: int = 1) -> int | None:
    """1-based rank of the first relevant document, or None.

    >>> first_relevant_rank(["x", "a"], {"a": 1}), first_relevant_rank(["x"], {"a": 1})
    (2, None)
    """
    relevant = _relevant(qrels, rel_threshold)
    return next((i for i, d in enumerate(ranking, 1) if d in relevant), None)


# ----- the registry ---------------------------------------------------------------------------

PerQuery = Callable[[Ranking, Judgments, "int | None", int], float]


@dataclass(frozen=True)
class MetricDef:
    """A measure family: its base name, whether it takes ``@k``, and its per-query function."""

    base: str
    cutoff: str  # "required", "optional" or "none"
    per_query: PerQuery
    formula: str
    graded: bool = False


METRICS: dict[str, MetricDef] = {
    m.base: m
    for m in (
        MetricDef("hit", "required", lambda r, q, k, t: hit(r, q, k, t), "1 if a relevant doc is in the top k"),
        MetricDef("recall", "required", lambda r, q, k, t: recall(r, q, k, t), "|rel in top k| / |rel|"),
        MetricDef("precision", "required", lambda r, q, k, t: precision(r, q, k, t), "|rel in top k| / k"),
        MetricDef("mrr", "optional", lambda r, q, k, t: reciprocal_rank(r, q, k, t),
                  "1 / rank of the first relevant doc (0 past k), averaged"),
        MetricDef("ndcg", "optional", lambda r, q, k, t: ndcg(r, q, k, "linear"),
                  "DCG@k / ideal DCG@k, gain = grade, discount 1/log2(rank+1)", graded=True),
        MetricDef("ndcg_exp", "optional", lambda r, q, k, t: ndcg(r, q, k, "exp"),
                  "DCG@k / ideal DCG@k, gain = 2^grade - 1, discount 1/log2(rank+1)", graded=True),
        MetricDef("map", "optional", lambda r, q, k, t: average_precision(r, q, k, t),
                  "mean over relevant docs in the top k of precision at their rank, / |rel|"),
        MetricDef("rprec", "none", lambda r, q, k, t: r_precision(r, q, t), "|rel in top R| / R, R = |rel|"),
    )
}

# trec_eval spellings, accepted as aliases and printed back exactly as requested.
_ALIASES: dict[str, tuple[str, bool]] = {
    "P": ("precision", True), "recall": ("recall", True), "ndcg_cut": ("ndcg", True), "map_cut": ("map", True),
    "success": ("hit", True), "recip_rank": ("mrr", False), "Rprec": ("rprec", False),
}
_NAME = re.compile(r"^(?P<base>[A-Za-z_]+?)(?:@(?P<k>[^@]*))?$")
_TREC_NAME = re.compile(r"^(?P<base>[A-Za-z]+(?:_[A-Za-z]+)*)_(?P<k>-?\d+)$")


@dataclass(frozen=True)
class Metric:
    """A parsed measure: the name as requested, the family and the cutoff."""

    name: str
    base: str
    k: int | None

    @property
    def definition(self) -> MetricDef:
        return METRICS[self.base]

    def per_query(self, ranking: Ranking, qrels: Judgments, rel_threshold: int = 1) -> float:
        return self.definition.per_query(ranking, qrels, self.k, rel_threshold)

    def describe(self) -> str:
        cutoff = f", cutoff {self.k}" if self.k is not None else ""
        return f"{self.definition.formula}{cutoff}"


def metric_names() -> list[str]:
    """Every family as users write it: ``hit@k``, ``mrr``, ``mrr@k``, ..."""
    names = []
    for m in METRICS.values():
        if m.cutoff in ("none", "optional"):
            names.append(m.base)
        if m.cutoff in ("required", "optional"):
            names.append(f"{m.base}@k")
    return names


def parse_metric(name: str) -> Metric:
    """Parse ``ndcg@5``, ``mrr``, ``P_10``, ``recip_rank`` ... into a :class:`Metric`.

    >>> parse_metric("ndcg@5"), parse_metric("P_10")
    (Metric(name='ndcg@5', base='ndcg', k=5), Metric(name='P_10', base='precision', k=10))
    """
    text = name.strip()
    trec = _TREC_NAME.match(text)
    if trec and trec.group("base") in _ALIASES and _ALIASES[trec.group("base")][1]:
        base, raw_k = _ALIASES[trec.group("base")][0], trec.group("k")
    elif text in _ALIASES and not _ALIASES[text][1]:
        base, raw_k = _ALIASES[text][0], None
    else:
        match = _NAME.match(text)
        if not match or match.group("base") not in METRICS:
            raise UnknownNameError("metric", text, metric_names())
        base, raw_k = match.group("base"), match.group("k")
    definition = METRICS[base]
    if raw_k is None:
        if definition.cutoff == "required":
            raise ParameterError("k", f"{base}@k", "an int >= 1 (write e.g. " + f"{base}@10)", None)
        return Metric(text, base, None)
    if definition.cutoff == "none":
        raise ParameterError("k", base, "absent (this metric takes no cutoff)", raw_k)
    try:
        k = int(raw_k)
    except ValueError:
        raise ParameterError("k", f"{base}@k", "an int >= 1", raw_k) from None
    if k < 1:
        raise ParameterError("k", f"{base}@k", "an int >= 1", k)
    return Metric(text, base, k)


def parse_metrics(text: str | Sequence[str]) -> list[Metric]:
    """Parse a comma-separated list; every bad name is reported at once."""
    names = [n.strip() for n in (text.split(",") if isinstance(text, str) else text) if n.strip()]
    if not names:
        raise ParameterError("metrics", "bench", "a non-empty comma-separated list", text)
    metrics, problems = [], []
    for n in names:
        try:
            metrics.append(parse_metric(n))
        except (UnknownNameError, ParameterError) as exc:
            problems.append(str(exc))
    if problems:
        from corpora import RetbenchError

        raise RetbenchError("; ".join(problems))
    seen: set[str] = set()
    return [m for m in metrics if not (m.name in seen or seen.add(m.name))]
