"""Issue 42, item 3: the built-in readings reach the diagnosis, the reports, the store and the suites
through the registry (:mod:`harness.core.readings`), so an add-on reading gets what a built-in one
has: a failure check in the diagnosis (:class:`harness.core.diagnosis.FailureCheck`), its sections in
every report format, the whole collection in its compute step."""

from __future__ import annotations

import json
from importlib.util import find_spec

import pandas as pd
import pytest

import harness.readings  # noqa: F401 - the built-in readings, registered before a fixture copies the registry
from harness import compare
from harness.core.diagnosis import FailureCheck, categories_of, unavailable_without_texts
from harness.core.options import Statistics
from harness.core.readings import READINGS, Reading, failure_checks, register
from harness.store.read import open_results

FAST = Statistics(bootstrap_samples=50)



def _first_query_of_each_system(inputs) -> dict[str, pd.DataFrame]:
    """An add-on reading: flags every system's first evaluated query, with the corpus size as evidence
    (which only the whole collection, ``inputs.dataset``, can give)."""
    documents = len(inputs.dataset.corpus)
    rows = [{"system": s.label, "query_id": inputs.queries.ids[0], "documents": documents} for s in inputs.systems]
    return {"flagged_first": pd.DataFrame(rows, columns=["system", "query_id", "documents"])}


CHECK = FailureCheck(category="flagged first", meaning="the first query, flagged by a test reading",
                     clause={"text": "first-flag text clause", "md": "first-flag md clause",
                             "html": "first-flag html clause"},
                     tally="{count} flagged first",
                     evidence=lambda rows: "first flag: " + ", ".join(f"{r['documents']} documents" for r in rows))


def _section(format: str):
    return lambda frame, view: f"SECTION-{format}: {len(frame)} rows"


def _flagging_reading() -> Reading:
    return Reading("flagged_first", "flagged_first.csv", ("system", "query_id"), ("documents",),
                   columns="system, query_id, documents", compute=_first_query_of_each_system, fails=CHECK,
                   render={f: _section(f) for f in ("text", "md", "latex", "html")}, title="Flagged first",
                   order=5)  # before the near-duplicates: it wins a query both flag


def test_an_add_on_failure_check_fails_its_queries_in_the_diagnosis_and_every_report(registry, tmp_path):
    register(_flagging_reading())
    assert failure_checks()[0] == CHECK  # registry order: before the near-duplicates' check
    result = compare(["bm25"], "article", "mrr", statistics=FAST)
    first = result.query_ids[0]
    (failure,) = [f for f in result.failures if f.query_id == first]
    assert failure.category == "flagged first"
    assert [dict(row) for row in failure.evidence] == [{"documents": len(result.dataset.corpus)}]
    text = result.report()
    assert "or below rank 3, or first-flag text clause, or near-duplicate documents in the top 3):" in text
    assert f"first flag: {len(result.dataset.corpus)} documents" in text
    assert " 1 flagged first, 0 with duplicate versions in the top 3" in text
    assert "SECTION-text: 1 rows" in text
    markdown = result.report("md")
    assert "or first-flag md clause, or near-duplicates in the top 3" in markdown and "SECTION-md: 1 rows" in markdown
    assert "SECTION-latex: 1 rows" in result.report("latex")
    folder = result.write(tmp_path, command_line=["test"])
    manifest = json.loads((folder / "manifest.json").read_text())
    assert list(manifest["diagnosis"]["categories"])[:2] == ["flagged first", "duplicate versions"]
    assert categories_of(result.dataset.corpus, failure_checks()) == manifest["diagnosis"]["categories"]
    # the folder gives the same failure back: its evidence read from the reading's file
    from harness.report.view import ReportView

    (read_back,) = [f for f in ReportView(open_results(folder)).failures if f.query_id == first]
    assert read_back.category == "flagged first" and [dict(r) for r in read_back.evidence] == \
        [{"documents": len(result.dataset.corpus)}]
    if find_spec("matplotlib") is not None:  # the HTML report needs the report extra
        html = result.report("html")
        assert "or first-flag html clause, or when near-duplicate documents take two" in html
        assert "SECTION-html: 1 rows" in html and 'id="duplicates"' in html


def test_unavailable_lines_come_from_the_registered_checks(registry):
    register(Reading("textful", "textful.csv", ("system", "query_id"), fails=FailureCheck(
        "needs texts", "a test check", unavailable="textful check: unavailable"), order=200))
    lines = unavailable_without_texts(failure_checks())
    assert lines[1].startswith("near-duplicate check (duplicate versions)")
    assert lines[2] == "textful check: unavailable" and lines[-1].startswith("judging page")
    assert unavailable_without_texts() == [lines[0], lines[-1]]  # no check given: the core's own lines only


def test_the_near_duplicates_are_a_registered_reading_with_a_failure_check():
    reading = READINGS["duplicates"]
    assert reading.compute is not None and reading.fails is not None and reading.record_in == "diagnosis"
    assert reading.fails.category == "duplicate versions" and "html" in reading.render
    from harness.readings import near_duplicates

    assert reading.compute is near_duplicates.compute


# ----- a reading's part of a suite: its macro table, stored, reported, served ------------------------


def _queries_per_system(inputs) -> dict[str, pd.DataFrame]:
    """An add-on reading with a per-collection table (as a cost reading has): each system's query count."""
    counts = inputs.per_query.groupby("system", sort=False).size()
    return {"query_counts": pd.DataFrame({"system": counts.index, "queries": counts.to_numpy()})}


def _macro_row(inputs) -> pd.DataFrame:
    """Its macro row, read from each collection's own table in its results folder, beside the macro means."""
    totals = {s: 0 for s in inputs.systems}
    for collection in inputs.collections:
        for row in open_results(collection.folder).table("query_counts").itertuples():
            totals[row.system] += int(row.queries)
    first = inputs.metrics[0]
    return pd.DataFrame({"system": list(inputs.systems), "queries": [totals[s] for s in inputs.systems],
                         "macro_first": inputs.means[first],
                         "resamples": [len(inputs.resampled[first])] * len(inputs.systems)})


def _counting_reading() -> Reading:
    from harness.core.readings import SuiteStep

    suite = SuiteStep("suite_query_counts.csv", _macro_row, record={"query_counts": "queries summed over collections"},
                      title="Queries (all collections)", anchor="query-counts",
                      render={"text": lambda frame, view, metric: f"QUERIES-TEXT {metric}: {int(frame['queries'].sum())}",
                              "md": lambda frame, view: f"QUERIES-MD {int(frame['queries'].sum())}",
                              "html": lambda frame, view: f"<p>QUERIES-HTML {int(frame['queries'].sum())}</p>"},
                      key="queryCounts")
    return Reading("query_counts", "query_counts.csv", ("system",), ("queries",), columns="system, queries",
                   compute=_queries_per_system, order=150, suite=suite)


@pytest.fixture(scope="module")
def fruit(tmp_path_factory):
    from tests.test_suite import small_collection

    return small_collection(tmp_path_factory.mktemp("fruit") / "fruit", seed=1)


def test_a_suite_step_of_an_add_on_reading_is_stored_reported_and_served(registry, fruit, tmp_path):
    from harness import compare_suite
    from harness.core.options import RunOptions
    from harness.suite.report import render_suite_report
    from harness.suite.store import open_suite

    register(_counting_reading())
    suite = compare_suite("bm25", ["article", str(fruit)], ["mrr", "ndcg@10"],
                          statistics=Statistics(bootstrap_samples=40, permutations=40), run=RunOptions(cache=False))
    table = suite.table("query_counts")
    assert table is suite.query_counts and suite.leaderboard is suite.table("leaderboard")
    assert table["queries"].tolist() == [14 + 8] and table["resamples"].tolist() == [40]
    assert table["macro_first"].tolist() == suite.leaderboard.query("metric == 'mrr'")["mean"].tolist()
    text = suite.report()
    assert "QUERIES-TEXT mrr: 22" in text and "QUERIES-TEXT ndcg@10: 22" in text
    assert text.index("leaderboard, mrr (macro)") < text.index("QUERIES-TEXT mrr") < text.index("mrr per collection")
    folder = suite.write(tmp_path, command_line=["test"], reports="md")
    manifest = json.loads((folder / "manifest.json").read_text())
    assert "suite_query_counts.csv" in manifest["files"] and "suite_leaderboard.csv" in manifest["files"]
    keys = list(manifest["statistics"])
    assert keys.index("leaderboard") < keys.index("query_counts") < keys.index("tally")
    stored = open_suite(folder)
    assert stored.table("query_counts")["queries"].tolist() == [22]
    markdown = (folder / "report.md").read_text()
    assert "## Queries (all collections)\n\nQUERIES-MD 22" in markdown
    assert "[Queries (all collections)](#queries-all-collections)" in markdown
    assert markdown.index("## Leaderboard (macro)") < markdown.index("## Queries") < markdown.index("## Means per")
    if find_spec("matplotlib") is not None:
        html = render_suite_report(stored, "html")[1]
        assert '<section id="query-counts">' in html and "QUERIES-HTML 22" in html
        assert '<a href="#query-counts">Queries (all collections)</a>' in html
    if find_spec("fastapi") is not None:  # bench serve's suite answer has its rows under its key
        from harness.serve.store import RunStore

        detail = RunStore(folder.parent).suite(folder.name)
        assert [row["queries"] for row in detail["queryCounts"]] == [22] and "leaderboard" in detail
