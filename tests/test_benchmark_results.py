"""benchmarks/RESULTS.md is written by the benchmarks: each replaces its own section, between its
markers, and leaves every other byte of the page as it was."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import common  # noqa: E402

ARGV = [str(BENCHMARKS / "speed_paths.py"), "--only", "top_k", "--repeats", "3"]
PAGE = """# Benchmark results

Some prose the writer never touches.

<!-- alpha -->
### alpha

old alpha numbers
<!-- /alpha -->

Between the sections.

<!-- beta -->
### beta

| a | b |
|---|---|
| 1 | 2 |
<!-- /beta -->
"""


def test_a_section_is_replaced_between_its_markers_and_nothing_else_moves(tmp_path: Path) -> None:
    page = tmp_path / "RESULTS.md"
    page.write_text(PAGE, encoding="utf-8")
    common.record_results("alpha", "| x |\n|---|\n| 3 |", "medians of 3", results=page, argv=ARGV)
    text = page.read_text(encoding="utf-8")
    assert "old alpha numbers" not in text and "| 3 |" in text
    before, after = PAGE.split("<!-- alpha -->")[0], PAGE.split("<!-- /alpha -->")[1]
    assert text.startswith(before) and text.endswith(after)
    section = text[len(before):len(text) - len(after)]
    assert section.startswith("<!-- alpha -->\n### alpha\n") and section.endswith("<!-- /alpha -->")
    line = re.search(r"^`(.*)`, run (\d{4}-\d\d-\d\d); medians of 3\.$", section, re.M)
    assert line is not None
    assert line.group(1) == "python benchmarks/speed_paths.py --only top_k --repeats 3"


def test_a_new_section_goes_at_the_end_and_a_missing_page_is_started(tmp_path: Path) -> None:
    page = tmp_path / "RESULTS.md"
    common.record_results("first", "one", results=page, argv=ARGV)
    common.record_results("second.case", "two", results=page, argv=ARGV)
    common.record_results("first", "one again", results=page, argv=ARGV)
    text = page.read_text(encoding="utf-8")
    assert text.startswith("# Benchmark results\n")
    assert text.index("<!-- first -->") < text.index("<!-- second.case -->")
    assert text.count("<!-- first -->") == 1 and "one again" in text and "\none\n" not in text


@pytest.mark.parametrize("broken", [
    PAGE.replace("<!-- /alpha -->", ""),  # no end
    PAGE + "\n<!-- alpha -->\n",  # two beginnings
    PAGE.replace("<!-- alpha -->", "@").replace("<!-- /alpha -->", "<!-- alpha -->").replace("@", "<!-- /alpha -->"),
])
def test_markers_that_are_not_one_pair_are_refused_and_the_page_is_kept(tmp_path: Path, broken: str) -> None:
    page = tmp_path / "RESULTS.md"
    page.write_text(broken, encoding="utf-8")
    with pytest.raises(ValueError, match="alpha"):
        common.record_results("alpha", "new", results=page, argv=ARGV)
    assert page.read_text(encoding="utf-8") == broken


def test_the_repository_page_has_one_pair_of_markers_per_section() -> None:
    text = (BENCHMARKS / "RESULTS.md").read_text(encoding="utf-8")
    begins = re.findall(r"<!-- ([A-Za-z0-9_.-]+) -->", text)
    ends = re.findall(r"<!-- /([A-Za-z0-9_.-]+) -->", text)
    assert begins and begins == ends and len(set(begins)) == len(begins)
    for name in begins:
        assert text.index(f"<!-- {name} -->") < text.index(f"<!-- /{name} -->")
