"""trec_eval's side of evaluation reporting: its measure names and the order it prints them.

Reading and writing run and qrels files is :mod:`corpora.trec_io`; this module only says how a
retbench metric is called, and where it stands, in trec_eval's output (``bench evaluate --format
trec``, and the ``trec_eval`` names a results manifest records).
"""

from __future__ import annotations

from harness.core.metrics import Metric

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

    >>> from harness.core.metrics import parse_metric
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
