"""Review of issue 42 item 3 (the readings registry): every report honours a reading's own sections,
as docs/adding-a-reading.md promises for every format, and bench serve finds the per-result objects
through one helper of the registry."""

from __future__ import annotations

from importlib.util import find_spec

import pandas as pd
import pytest

import harness.readings  # noqa: F401 - the built-in readings, registered before a fixture copies the registry
from harness import compare
from harness.core.options import Statistics
from harness.core.readings import READINGS, Reading, reading_frames, register

FAST = Statistics(bootstrap_samples=50)
FORMATS = ("text", "md", "latex", "html")



def _count(record) -> pd.DataFrame:
    return pd.DataFrame({"system": list(record.summary["system"]), "n": [1] * len(record.summary)})


def _own(format: str):
    return lambda frame, view: f"OWN-{format} heading and body: {len(frame)} rows"


def test_an_add_on_with_only_its_own_sections_reaches_every_report(registry):
    register(Reading("own_sections", "own_sections.csv", ("system",), ("n",), columns="system, n", frame=_count,
                     sections={f: _own(f) for f in FORMATS}, title="Never printed"))
    result = compare(["bm25", "lsa"], "article", ["mrr"], statistics=FAST)
    for format in FORMATS if find_spec("matplotlib") is not None else ("text", "md", "latex"):
        report = result.report(format)
        assert f"OWN-{format} heading and body: 2 rows" in report, format
        assert ("<h2>Never printed" if format == "html" else "Never printed") not in report, format  # its own
        # section carries its heading (the HTML page's navigation names it by its title)


def test_an_empty_own_section_leaves_the_reading_out_of_every_report(registry):
    register(Reading("empty_sections", "empty_sections.csv", ("system",), ("n",), columns="system, n", frame=_count,
                     sections={f: (lambda frame, view: "") for f in FORMATS}, title="Empty heading"))
    result = compare(["bm25"], "article", ["mrr"], statistics=FAST)
    assert len(reading_frames(result)["empty_sections"]) == 1  # the reading is there, its sections are empty
    reports = {format: result.report(format) for format in ("text", "md", "latex")}
    READINGS.pop("empty_sections")  # reports read the registry when they are made
    for format, report in reports.items():
        assert report == result.report(format), format
        assert "Empty heading" not in report, format


def test_the_served_per_result_objects_are_the_registrys_and_the_schemas():
    from harness.core.readings import served, served_results

    first = next(r.serve.results for r in served() if r.serve.results is not None)
    assert served_results() is first and first.columns  # the metrics card's, with its number columns
    pytest.importorskip("pydantic", reason="bench serve's schema needs the serve extra: pip install 'retbench[serve]'")
    from harness.serve.schema import Result

    assert Result is first.model()


def test_a_record_in_an_entry_the_writer_never_fills_is_refused_at_declaration():
    from harness.core.readings import RECORD_IN

    for entry in RECORD_IN:
        assert Reading("somewhere", "somewhere.csv", ("system",), record_in=entry).record_in == entry
    with pytest.raises(ValueError, match=r"record_in 'provenance' is not one of '', 'statistics', 'diagnosis'"):
        Reading("lost_record", "lost_record.csv", ("system",), record_in="provenance")


def test_the_leaderboards_html_notes_name_the_tukey_hsd_p_of_a_tukey_run(tmp_path):
    pytest.importorskip("matplotlib", reason="the HTML reports' charts need the report extra: pip install "
                                             "'retbench[report]'")
    from harness import compare_suite
    from harness.core.options import RunOptions
    from harness.suite.report import render_suite_report
    from harness.suite.store import open_suite

    tukey = Statistics(bootstrap_samples=50, permutations=50, family="tukey")
    html = compare(["bm25", "lsa", "rrf(bm25,lsa)"], "article", ["mrr"], statistics=tukey).report("html")
    board = html[html.index('<section id="leaderboard">'):]
    board = board[:board.index("</section>")]
    assert "Tukey HSD p &le;" in board and "Holm" not in board
    from tests.test_suite import small_collection

    fruit = small_collection(tmp_path / "fruit", seed=1)
    suite = compare_suite("bm25,lsa", ["article", str(fruit)], ["mrr"], statistics=tukey, run=RunOptions(cache=False))
    page = render_suite_report(open_suite(suite.write(tmp_path / "out", command_line=["test"])), "html")[1]
    board = page[page.index('<section id="leaderboard">'):]
    board = board[:board.index("</section>")]
    assert "Tukey HSD p &le;" in board and "Holm" not in board


def test_a_suite_step_without_title_or_anchor_takes_the_readings():
    from harness.core.readings import SuiteStep

    bare = Reading("query_counts", "query_counts.csv", ("system",), title="Queries",
                   suite=SuiteStep("suite_query_counts.csv", lambda inputs: pd.DataFrame()))
    assert (bare.suite.title, bare.suite.anchor) == ("Queries", "suite-reading-query-counts")
    named = Reading("query_counts", "query_counts.csv", ("system",),
                    suite=SuiteStep("suite_query_counts.csv", lambda inputs: pd.DataFrame(), title="T", anchor="a"))
    assert (named.suite.title, named.suite.anchor) == ("T", "a")
    assert READINGS["leaderboard"].suite.anchor == "leaderboard"  # the built-in one keeps its own


def test_the_guide_lists_every_field_of_the_registrys_declarations():
    import dataclasses
    import re
    from pathlib import Path

    from harness.core.readings import FailureCheck, RollUp, ServeResults, ServeView, SuiteStep

    guide = (Path(__file__).resolve().parents[1] / "docs" / "adding-a-reading.md").read_text(encoding="utf-8")
    fields = guide[guide.index("```text\n"):guide.index("```", guide.index("```text\n") + 7)]
    listed = re.search(r"Reading\(([^)]*)\)", fields)[1]
    assert [name.strip() for name in listed.split(",")] == [f.name for f in dataclasses.fields(Reading)]
    for declaration in (ServeView, ServeResults, SuiteStep, FailureCheck, RollUp):
        missing = [f.name for f in dataclasses.fields(declaration) if not re.search(rf"\b{f.name}\b", fields)]
        assert not missing, f"docs/adding-a-reading.md does not say what {declaration.__name__}'s {missing} are"
