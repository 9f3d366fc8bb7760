"""How many product files name each built-in reading in their code (issue 42: a reading lives in one file).

A reading written through the registry (:mod:`harness.core.readings`) is named by its own module
(``harness/readings/<name>.py``), by the registration that imports it (``harness/readings/__init__.py``)
and at most one more file (for risk–coverage: the option group that sets its risk metric and
confidence); the reports, the store and ``bench serve`` loop over the registry and never name it.

A file *names* a reading when its code -- every token but comments and docstrings, read with
:mod:`tokenize` and :mod:`ast` -- matches one of the reading's identifiers (:data:`IDENTIFIERS`,
case-insensitive): its table names, its file names, its module, its classes and its JSON keys,
whether they stand as a name, an attribute, an import or inside a string. (The facet rollup's
identifiers are its own functions, module and files: an attribute or a key ``facets`` may as well be
the queries' facets or the option that picks them, so it is not counted.) Prose about a reading in
a docstring or a comment is not a use of it. Run ``python tests/test_reading_footprint.py`` for the
table.

Each reading moved to the registry is held to :data:`AT_MOST` files; a reading not moved yet, or
registered but still named by its other users, is held to the count it had when this test was
written (:data:`NOT_MOVED_YET`), so that its footprint can only shrink until it is within the limit.
(The facet rollup's cells are the queries' own, :meth:`corpora.Queries.cells`, which ``bench tune
--stratify`` reads too; another reading's per-query table is rolled up by the facets reading through
the registry, :class:`harness.core.readings.RollUp`.)
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The product packages whose files are counted.
PRODUCT = ("corpora", "retrievers", "harness")
#: The most product files that may name a reading moved to the registry.
AT_MOST = 3

#: Built-in reading -> the identifiers that name it (regular expressions, case-insensitive).
IDENTIFIERS: dict[str, tuple[str, ...]] = {
    "risk_coverage": (r"risk[_\-–]?coverage", r"RiskCoverage"),
    "leaderboard": (r"leaderboard",),
    "facets": (r"facet_rollup", r"facet_columns", r"facet_cells", r"select_facets", r"\bfacets\.csv",
               r"byFacet", r"(?:core|readings)[./]facets\b"),
    "near_duplicates": (r"near[_\-]?duplicates?", r"duplicates\.csv", r"duplicate_counts", r"DUPLICATE_COLUMNS",
                        r"^duplicates$"),
    # its constants in capitals only: the corpora's facets_file (a side file of query facets) is not the card's
    "cost": (r"efficiency", r"latency_comparisons"),
    "retrieval_metrics": (r"retrieval_metrics", r"RetrievalMetrics", r"retrievalMetrics", r"(?-i:CARD_METRICS)",
                          r"(?-i:ROLLUP_FILE)", r"(?-i:\bFACETS_FILE)"),
}

#: The readings not moved to the registry yet, or moved but still named by other files -> the most files
#: that may name them (their count when this test was written; lower it as files stop naming them, and
#: remove the entry when it is named by no more than AT_MOST).
NOT_MOVED_YET: dict[str, int] = {}


def _docstring_starts(tree: ast.AST) -> set[tuple[int, int]]:
    """(line, column) where each docstring of a module, class or function starts."""
    starts = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                starts.add((first.lineno, first.col_offset))
    return starts


def code_words(source: str) -> list[str]:
    """The words of ``source``'s code: each module it imports (dotted), each name, and the text of each
    string that is not a docstring (a string's text whole and split into its words); comments and
    docstrings left out."""
    tree = ast.parse(source)
    skip = _docstring_starts(tree)
    words: list[str] = []
    for node in ast.walk(tree):  # a module imported, whole (its dotted name is no single token)
        if isinstance(node, ast.ImportFrom) and node.module:
            words.append(node.module)
        elif isinstance(node, ast.Import):
            words.extend(alias.name for alias in node.names)
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.NAME:
            words.append(token.string)
        elif token.type == tokenize.STRING and token.start not in skip:
            text = ast.literal_eval(token.string) if not re.match(r"^[a-zA-Z]*[fF]", token.string) else token.string
            text = text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)
            words.append(text)
            words.extend(re.split(r"[^\w.\-–/]+", text))
    return words


def names(words: list[str], identifiers: tuple[str, ...]) -> bool:
    patterns = [re.compile(p, re.IGNORECASE) for p in identifiers]
    return any(p.search(word) for word in words for p in patterns)


@cache  # every product file read and tokenized once, not once per reading
def footprint() -> dict[str, list[str]]:
    """Built-in reading -> the product files (relative paths) whose code names it."""
    files = sorted(path for package in PRODUCT for path in (ROOT / package).rglob("*.py"))
    words = {path.relative_to(ROOT).as_posix(): code_words(path.read_text(encoding="utf-8")) for path in files}
    return {reading: [name for name, found in words.items() if names(found, identifiers)]
            for reading, identifiers in IDENTIFIERS.items()}


def table(found: dict[str, list[str]]) -> str:
    lines = [f"{'reading':<18} {'files':>5}  limit  files naming it"]
    for reading, files in found.items():
        limit = NOT_MOVED_YET.get(reading, AT_MOST)
        lines.append(f"{reading:<18} {len(files):>5}  {limit:>5}  {', '.join(files)}")
    return "\n".join(lines)


def test_code_words_skip_docstrings_and_comments():
    source = ('"""risk_coverage in a docstring."""\n'
              "def f():\n    'risk_coverage here too'\n    return 1  # risk_coverage in a comment\n")
    assert not names(code_words(source), IDENTIFIERS["risk_coverage"])
    assert names(code_words(source + "x = table('risk_coverage')\n"), IDENTIFIERS["risk_coverage"])
    assert names(code_words(source + "from harness.readings.risk_coverage import aurc\n"),
                 IDENTIFIERS["risk_coverage"])
    assert names(code_words(source + "title = f'Risk–coverage {x}'\n"), IDENTIFIERS["risk_coverage"])
    assert names(code_words("from harness.core.facets import MIN_QUERIES\n"), IDENTIFIERS["facets"])


def test_the_facet_rollup_is_told_from_the_queries_facets():
    assert names(code_words("from harness.core.facets import facet_rollup\n"), IDENTIFIERS["facets"])
    assert names(code_words("name = 'facets.csv'\n"), IDENTIFIERS["facets"])
    assert not names(code_words("k = queries.facets['year']\n"), IDENTIFIERS["facets"])


@pytest.mark.parametrize("reading", list(IDENTIFIERS))
def test_each_built_in_reading_is_named_by_few_product_files(reading):
    found = footprint()
    print("\n" + table(found))
    limit = NOT_MOVED_YET.get(reading, AT_MOST)
    assert len(found[reading]) <= limit, (
        f"{reading} is named in the code of {len(found[reading])} product files (at most {limit}): "
        f"{', '.join(found[reading])}")


if __name__ == "__main__":
    print(table(footprint()))
