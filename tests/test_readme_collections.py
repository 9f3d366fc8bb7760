"""The commands of docs/collections.md (moved there from the README) for the real collections work on every collection they list (issue 11).

The section "Real test collections" shows a ``for NAME in ...`` loop. Its LSA dimensions used to be
given, 100 for every collection, which ADI's 82 documents cannot give; they are now chosen for each
collection. So:

* every collection of the table has a command, and no command names a collection the table lacks;
* each command runs the defaults, and those chosen for its collection are the section's (LSA 100
  dimensions, 40 on ADI: at most half the rank the collection allows);
* the ADI command, the one that failed, runs and prints the table's numbers (ADI is small enough
  to run here; the others take minutes together and are checked by hand when the table changes).
"""

from __future__ import annotations

import csv
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from corpora import get_analyzer, load_dataset
from harness.cli import main
from tests.conftest import SHARED_DATA, absent

REPO = Path(__file__).resolve().parents[1]
SECTION = REPO.joinpath("docs", "collections.md").read_text(encoding="utf-8").split("## Real test collections")[1].split("\n## ")[0]

pytestmark = pytest.mark.skipif(not SHARED_DATA.is_dir(), reason=absent(SHARED_DATA))


def commands() -> dict[str, list[str]]:
    """Collection name -> the ``bench`` arguments the page's block runs for it."""
    block = SECTION.split("```bash\n")[1].split("```")[0]
    script = block.replace("\\\n", " ")
    found: dict[str, list[str]] = {}
    loop = re.search(r"for NAME in ([\w ]+); do\s+(bench compare .*?)\s+done", script, re.S)
    assert loop, "the page's block holds no 'for NAME in ...' loop"
    for name in loop.group(1).split():
        found[name] = shlex.split(loop.group(2).replace("$NAME", name))[1:]
    for line in script[loop.end():].splitlines():
        if line.strip().startswith("bench compare"):
            arguments = shlex.split(line)[1:]
            found[Path(arguments[arguments.index("--corpus") + 1]).name] = arguments
    return found


def table() -> dict[str, list[str]]:
    """Collection name -> the table's cells after the name."""
    rows = re.findall(r"^\| (\w+) \| (.+) \|$", SECTION, re.M)
    return {name: [c.strip() for c in cells.split(" | ")] for name, cells in rows if name != "collection"}


def test_every_collection_of_the_table_has_exactly_one_command() -> None:
    assert sorted(commands()) == sorted(table())


@pytest.mark.parametrize("name", sorted(table()))
def test_each_command_runs_the_defaults_the_section_says(name: str) -> None:
    """The commands name no parameter: the defaults chosen for each collection (retrievers.defaults)
    are the section's "100 dimensions, except on ADI, where it uses 40"."""
    arguments = commands()[name]
    assert arguments[arguments.index("--systems") + 1] == "bm25,lsa,weighted,rrf"
    corpus = load_dataset(str(REPO / arguments[arguments.index("--corpus") + 1])).corpus
    assert corpus.retriever_defaults is None  # nothing carried: the rule decides
    analyze = get_analyzer(arguments[arguments.index("--analyzer") + 1])
    terms = len({t for text in corpus.full_texts for t in analyze(text)})
    assert min(100, (min(len(corpus), terms) - 1) // 2) == (40 if name == "adi" else 100)


def test_the_adi_command_prints_the_tables_numbers(tmp_path: Path) -> None:
    arguments = commands()["adi"]
    arguments[arguments.index("--corpus") + 1] = str(REPO / arguments[arguments.index("--corpus") + 1])
    result = CliRunner().invoke(main, [*arguments, "--out", str(tmp_path), "--no-cache", "--quiet"])
    assert result.exit_code == 0, result.output
    [folder] = [p for p in tmp_path.iterdir() if p.is_dir()]
    with (folder / "summary.csv").open(encoding="utf-8") as handle:
        summary = list(csv.DictReader(handle))
    metrics = ["ndcg@10", "map", "recall@100", "mrr"]
    printed = [" / ".join(f"{float(row[m]):.3f}" for m in metrics) for row in summary]
    row = table()["adi"]
    assert printed == row[:4]  # bm25, lsa, weighted, rrf
    # best pair by nDCG@10: "weighted − bm25: +0.010 [-0.018, +0.040], Holm p 1.000: no clear difference"
    with (folder / "comparisons.csv").open(encoding="utf-8") as handle:
        pairs = {(r["system_a"].split("(")[0], r["system_b"].split("(")[0], r["metric"]): r
                 for r in csv.DictReader(handle)}
    pair = pairs[("bm25", "weighted", "ndcg@10")]  # stored as bm25 - weighted; the README flips it
    shown = (f"weighted − bm25: {-float(pair['mean_diff']):+.3f} [{-float(pair['ci_high']):+.3f}, "
             f"{-float(pair['ci_low']):+.3f}], Holm p {float(pair['p_adjusted']):.3f}")
    assert row[4].startswith(shown)
