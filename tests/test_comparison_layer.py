"""harness.compare returns one type, a CompareResult, made in the layer above the store and the
reports (harness.comparison) from the plain record the core computes; a suite goes through
compare_suite only (issue 42)."""

from __future__ import annotations

import pytest

from corpora import RetbenchError
from harness import CompareResult, Statistics, compare
from harness.core.api import compute_comparison
from harness.core.record import CompareRecord

FAST = {"statistics": Statistics(bootstrap_samples=50, permutations=50)}


@pytest.mark.parametrize("datasets", [["article", "article"], ("article",)])
def test_compare_refuses_a_list_of_datasets_in_one_line_naming_compare_suite(datasets: object) -> None:
    with pytest.raises(RetbenchError) as refused:
        compare("bm25", datasets, "mrr", **FAST)  # type: ignore[arg-type]
    message = str(refused.value)
    assert "\n" not in message and "Fix: call compare_suite(systems, datasets, metrics)" in message


def test_the_core_returns_the_record_and_compare_the_result_that_holds_it() -> None:
    record = compute_comparison("bm25", "article", "mrr", **FAST)
    assert type(record) is CompareRecord  # the core renders and stores nothing
    result = compare("bm25", "article", "mrr", **FAST)
    assert type(result) is CompareResult and isinstance(result, CompareRecord)
    assert result.summary.equals(record.summary) and result.per_query.equals(record.per_query)
    again = CompareResult.of(record)
    assert again.per_query is record.per_query and again.report() == result.report()
