"""Retrieval metrics: one pure function per measure, the specification of its batch path.

Conventions, pinned once (and printed in every manifest):

* ``ranking`` is a list of doc ids, best first, evaluated as given; ``qrels`` maps doc id -> grade.
* Binary measures (hit, recall, precision, reciprocal rank, AP, R-precision, bpref) count a document
  as relevant when ``grade >= rel_threshold`` (default 1). Negative grades are judged, never
  relevant, and (as in trec_eval, where they mean "pooled but unjudged") never non-relevant either.
* Graded measures (nDCG) use the grade itself, whatever ``rel_threshold``: linear gain ``g``
  (``ndcg``, = trec_eval ``ndcg`` / ``ndcg_cut``) or exponential gain ``2**g - 1`` (``ndcg_exp``,
  Burges); grades <= 0 gain nothing, in the ranking and in the ideal (as trec_eval's gains).
  The discount is ``1 / log2(rank + 1)``. The ideal DCG uses every judged document of the query,
  retrieved or not (the scikit-learn ``ndcg_score`` trap).
* Cutoff measures divide by k, not by the number retrieved (trec_eval ``P_k``).
* A query without relevant documents scores 0 everywhere (the harness excludes such queries).

A measure family is declared once, in :data:`METRICS`: its per-query function here (the
specification), its batch function in :mod:`harness.core.batch_metrics`, its gain, cutoff syntax,
aliases, trec_eval names and formula. Parsing (:func:`parse_metric` reads ``ndcg@5``, ``mrr``, ...),
error messages, the CLI's ``--metrics`` help (:func:`metrics_help`) and the results manifest read it,
and so do trec_eval's name of a metric (:func:`trec_eval_name`, what the manifest records) and where
trec_eval prints it (:func:`trec_eval_sort_key`, ``bench evaluate --format trec``); reading and
writing run and qrels files is :mod:`corpora.trec_io`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from corpora import ParameterError, RetbenchError, UnknownNameError
from harness.core import batch_metrics as batch
from harness.core.gains import GAINS, exp_gain_overflow
from harness.core.ranked_grades import RankedGrades

Ranking = Sequence[str]
Judgments = Mapping[str, int]


def _relevant(qrels: Judgments, rel_threshold: int) -> set[str]:
    """Judged ``grade >= rel_threshold``; a negative grade is never relevant, whatever the threshold."""
    from corpora import is_relevant  # the one definition of "relevant", shared with the evaluator

    return {d for d, g in qrels.items() if is_relevant(g, rel_threshold)}


def hit(ranking: Ranking, qrels: Judgments, k: int, rel_threshold: int = 1) -> float:
    """hit@k = 1 if any relevant document is in the top k, else 0 (also ``success@k``, trec_eval
    ``success_k``).

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


def dcg(grades: Sequence[int], gain: str = "linear") -> float:
    """DCG = sum_i gain(grade_i) / log2(i + 1), i the 1-based rank.

    With exponential gain a grade of 1024 or more, or a sum past the largest float (two grades of
    1023), raises :class:`RetbenchError` naming the grade: never a silent inf or nan.

    >>> round(dcg([2, 0, 3, 1], gain="exp"), 3)
    6.931
    """
    scalar = GAINS[gain].scalar
    total = sum(scalar(g) / math.log2(i + 1) for i, g in enumerate(grades, 1))
    if not math.isfinite(total):
        raise exp_gain_overflow(max(grades))
    return total


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


def bpref(ranking: Ranking, qrels: Judgments, rel_threshold: int = 1) -> float:
    """bpref = (1/R) * sum over relevant retrieved d of (1 - min(n_d, R) / min(N, R)).

    R = |relevant|, N = |judged non-relevant| (``0 <= grade < rel_threshold``), n_d = judged
    non-relevant documents ranked above d; unjudged and negative-grade documents are skipped
    (Buckley & Voorhees 2004, as trec_eval computes it: a term is 1 when n_d = 0).

    >>> bpref(["n1", "a", "u", "n2", "b"], {"a": 1, "b": 2, "c": 1, "n1": 0, "n2": 0, "n3": 0})
    0.3333333333333333
    """
    relevant = _relevant(qrels, rel_threshold)
    if not relevant:
        return 0.0
    n_relevant = len(relevant)
    n_nonrelevant = sum(1 for d, g in qrels.items() if g >= 0 and d not in relevant)
    cap = min(n_nonrelevant, n_relevant)
    above, total = 0, 0.0
    for d in ranking:
        if d in relevant:
            total += 1.0 - min(above, n_relevant) / cap if above > 0 else 1.0
        elif d in qrels and qrels[d] >= 0:
            above += 1
    return total / n_relevant


def judged(ranking: Ranking, qrels: Judgments, k: int) -> float:
    """judged@k = |top-k documents with a judgment (any grade)| / k: how much of the top is known.

    >>> judged(["a", "x", "b", "y"], {"a": 1, "b": 0, "c": 2}, 4)
    0.5
    """
    return sum(d in qrels for d in ranking[:k]) / k


def first_relevant_rank(ranking: Ranking, qrels: Judgments, rel_threshold: int = 1) -> int | None:
    """1-based rank of the first relevant document, or None.

    >>> first_relevant_rank(["x", "a"], {"a": 1}), first_relevant_rank(["x"], {"a": 1})
    (2, None)
    """
    relevant = _relevant(qrels, rel_threshold)
    return next((i for i, d in enumerate(ranking, 1) if d in relevant), None)


# ----- the registry ---------------------------------------------------------------------------

PerQuery = Callable[[Ranking, Judgments, "int | None", int], float]
Batch = Callable[[RankedGrades, "int | None"], np.ndarray]


@dataclass(frozen=True)
class MetricDef:
    """A measure family, declared once: parsing, CLI help, error messages, the evaluator and the
    results manifest all read it.

    ``per_query(ranking, qrels, k, rel_threshold)`` is the specification; ``batch(data, k)`` the
    vectorised path over a :class:`~harness.core.ranked_grades.RankedGrades` (one value per row), tested
    equal to it. ``cutoff`` is "required", "optional" or "none"; ``gain`` names the gain of a graded
    measure (a key of :data:`~harness.core.gains.GAINS`; None for binary ones); ``aliases`` are other
    names with the same syntax (``success@k``); ``trec_eval`` is trec_eval's name without cutoff
    (``recip_rank``) and ``trec_eval_cut`` its name before ``_K`` (``P`` in ``P_10``), accepted as
    aliases; ``formula`` is what the manifest and ``bench evaluate --format json`` print.
    """

    base: str
    cutoff: str
    per_query: PerQuery
    batch: Batch
    formula: str
    gain: str | None = None
    aliases: tuple[str, ...] = ()
    trec_eval: str | None = None
    trec_eval_cut: str | None = None

    @property
    def graded(self) -> bool:
        """Whether the measure uses the grades themselves (it has a gain), not ``rel_threshold``."""
        return self.gain is not None

    @property
    def gain_description(self) -> str | None:
        """What the manifest records as the gain: ``linear (grade)``, ...; None for binary measures."""
        return GAINS[self.gain].description if self.gain is not None else None

    def syntax(self) -> list[str]:
        """How users write this family: ``hit@k``, ``mrr``/``mrr@k``, ``rprec``, aliases after."""
        names = []
        for family in (self.base, *self.aliases):
            if self.cutoff in ("none", "optional"):
                names.append(family)
            if self.cutoff in ("required", "optional"):
                names.append(f"{family}@k")
        return names

    def trec_eval_syntax(self) -> list[str]:
        """trec_eval's spellings of this family: ``recip_rank``, ``P_K``, ..."""
        return [name for name in (self.trec_eval, f"{self.trec_eval_cut}_K" if self.trec_eval_cut else None) if name]


METRICS: dict[str, MetricDef] = {
    m.base: m
    for m in (
        MetricDef("hit", "required", lambda r, q, k, t: hit(r, q, k, t), batch.hit,
                  "1 if a relevant doc is in the top k", aliases=("success",), trec_eval_cut="success"),
        MetricDef("recall", "required", lambda r, q, k, t: recall(r, q, k, t), batch.recall,
                  "|rel in top k| / |rel|", trec_eval_cut="recall"),
        MetricDef("precision", "required", lambda r, q, k, t: precision(r, q, k, t), batch.precision,
                  "|rel in top k| / k", aliases=("P",), trec_eval_cut="P"),
        MetricDef("judged", "required", lambda r, q, k, t: judged(r, q, k), batch.judged, "|judged in top k| / k"),
        MetricDef("mrr", "optional", lambda r, q, k, t: reciprocal_rank(r, q, k, t), batch.reciprocal_rank,
                  "1 / rank of the first relevant doc (0 past k), averaged", trec_eval="recip_rank"),
        MetricDef("ndcg", "optional", lambda r, q, k, t: ndcg(r, q, k, "linear"),
                  lambda data, k: batch.ndcg(data, k, "linear"),
                  "DCG@k / ideal DCG@k, gain = grade, discount 1/log2(rank+1)", gain="linear",
                  trec_eval="ndcg", trec_eval_cut="ndcg_cut"),
        MetricDef("ndcg_exp", "optional", lambda r, q, k, t: ndcg(r, q, k, "exp"),
                  lambda data, k: batch.ndcg(data, k, "exp"),
                  "DCG@k / ideal DCG@k, gain = 2^grade - 1, discount 1/log2(rank+1)", gain="exp"),
        MetricDef("map", "optional", lambda r, q, k, t: average_precision(r, q, k, t), batch.average_precision,
                  "mean over relevant docs in the top k of precision at their rank, / |rel|",
                  trec_eval="map", trec_eval_cut="map_cut"),
        MetricDef("rprec", "none", lambda r, q, k, t: r_precision(r, q, t), lambda data, k: batch.r_precision(data),
                  "|rel in top R| / R, R = |rel|", trec_eval="Rprec"),
        MetricDef("bpref", "none", lambda r, q, k, t: bpref(r, q, t), lambda data, k: batch.bpref(data),
                  "(1/R) sum over relevant retrieved of 1 - min(nonrel above, R) / min(N, R)", trec_eval="bpref"),
    )
}

_FAMILY: dict[str, str] = {name: m.base for m in METRICS.values() for name in (m.base, *m.aliases)}
_TREC_PLAIN: dict[str, str] = {m.trec_eval: m.base for m in METRICS.values() if m.trec_eval}
_TREC_CUT: dict[str, str] = {m.trec_eval_cut: m.base for m in METRICS.values() if m.trec_eval_cut}
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
        """This measure of one ranking (the specification)."""
        return self.definition.per_query(ranking, qrels, self.k, rel_threshold)

    def batch(self, data: RankedGrades) -> np.ndarray:
        """This measure of every row of ``data`` at once (float64, one per query)."""
        return self.definition.batch(data, self.k)

    def describe(self) -> str:
        cutoff = f", cutoff {self.k}" if self.k is not None else ""
        return f"{self.definition.formula}{cutoff}"


def batch_metric(metric: Metric, data: RankedGrades) -> np.ndarray:
    """The per-query values of ``metric`` for every row of ``data`` (float64, one per query)."""
    return metric.batch(data)


def metric_names() -> list[str]:
    """Every name users may write, read from :data:`METRICS`: ``hit@k``, ``mrr``, ..., then the
    trec_eval spellings (``P_K``, ``recip_rank``, ...)."""
    names = [name for m in METRICS.values() for name in m.syntax()]
    for m in METRICS.values():
        names.extend(name for name in m.trec_eval_syntax() if name not in names)
    return names


def metrics_help() -> str:
    """The ``--metrics`` help of every command, read from :data:`METRICS` (never typed by hand)."""
    families = ", ".join(" or ".join(m.syntax()) for m in METRICS.values())
    trec = ", ".join(name for m in METRICS.values() for name in m.trec_eval_syntax())
    return (f"Comma-separated metrics (k an int >= 1): {families}; trec_eval names are accepted too: {trec} "
            "(K a cutoff, e.g. P_10).")


def parse_metric(name: str) -> Metric:
    """Parse ``ndcg@5``, ``mrr``, ``success@3``, ``P_10``, ``recip_rank`` ... into a :class:`Metric`.

    The name is kept exactly as requested (it labels columns and trec_eval lines).

    >>> parse_metric("ndcg@5"), parse_metric("P_10")
    (Metric(name='ndcg@5', base='ndcg', k=5), Metric(name='P_10', base='precision', k=10))
    >>> parse_metric("success_5"), parse_metric("Rprec")
    (Metric(name='success_5', base='hit', k=5), Metric(name='Rprec', base='rprec', k=None))
    """
    text = name.strip()
    trec = _TREC_NAME.match(text)
    if text in _TREC_PLAIN:
        base, raw_k = _TREC_PLAIN[text], None
    elif trec and trec.group("base") in _TREC_CUT:
        base, raw_k = _TREC_CUT[trec.group("base")], trec.group("k")
    else:
        match = _NAME.match(text)
        if not match or match.group("base") not in _FAMILY:
            raise UnknownNameError("metric", text, metric_names())
        base, raw_k = _FAMILY[match.group("base")], match.group("k")
    definition = METRICS[base]
    if raw_k is None:
        if definition.cutoff == "required":
            raise ParameterError("k", f"{base}@k", f"an int >= 1 (write e.g. {base}@10)", None)
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
    """Parse a comma-separated list; every bad name is reported at once; repeats are dropped."""
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
        raise RetbenchError("; ".join(problems))
    seen: set[str] = set()
    return [m for m in metrics if not (m.name in seen or seen.add(m.name))]


# ----- trec_eval's side: its measure names and the order it prints them -----------------------------

#: trec_eval's measure families in the order it prints them (``te_trec_measures`` in its
#: ``measures.c``), from ``runid`` to ``success``; measures without a retbench metric are listed
#: too, so that the relative order of those with one is trec_eval's.
TREC_EVAL_PRINT_ORDER: tuple[str, ...] = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref", "Rprec_mult", "utility", "11pt_avg",
    "binG", "G", "dcg", "ideal_dcg", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success",
)


def trec_eval_name(metric: Metric) -> str | None:
    """trec_eval's name for ``metric`` (``ndcg@10`` -> ``ndcg_cut_10``, ``hit@5`` -> ``success_5``,
    ``mrr`` -> ``recip_rank``), read from the metric registry; None when trec_eval has no such
    measure (``mrr@10``, ``ndcg_exp@10``, ``judged@10``).

    >>> [trec_eval_name(parse_metric(n)) for n in ("ndcg@10", "precision@5", "map", "mrr@10")]
    ['ndcg_cut_10', 'P_5', 'map', None]
    """
    definition = metric.definition
    if metric.k is None:
        return definition.trec_eval
    return f"{definition.trec_eval_cut}_{metric.k}" if definition.trec_eval_cut else None


def trec_eval_sort_key(name: str) -> tuple[int, int]:
    """Where trec_eval prints measure ``name``: its family's place, then the cutoff ascending."""
    family, _, cutoff = name.rpartition("_")
    if family in TREC_EVAL_PRINT_ORDER and cutoff.isdigit():
        return TREC_EVAL_PRINT_ORDER.index(family), int(cutoff)
    return TREC_EVAL_PRINT_ORDER.index(name), 0
