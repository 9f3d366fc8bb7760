"""The commands of docs/collections.md (moved there from the README) for the real collections work on every collection they list (issue 11).

The section "Real test collections" shows a ``for NAME in ...`` loop. Its LSA dimensions used to be
given, 100 for every collection, which ADI's 82 documents cannot give; they are now chosen for each
collection. So:

* every collection of the table has a command, and no command names a collection the table lacks;
* each command runs the defaults, and those chosen for its collection are the section's (LSA 100
  dimensions, 40 on ADI: at most half the rank the collection allows);
* the ADI command, the one that failed, and the Cranfield one run and print the table's numbers
  (both take seconds; the others are checked by hand when the table changes);
* the page says why a plain run prints other numbers: the commands carry ``--analyzer english``,
  the note names the default analyzer, and the plain Cranfield number it quotes is the plain run's.

The page's ``../shared/data/NAME`` is read where the tests find the real collections
(``RETBENCH_DATA``, tests/conftest.py).
"""

from __future__ import annotations

import csv
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from corpora import DEFAULT_ANALYZER, get_analyzer, load_dataset
from harness.cli import main
from tests.conftest import SHARED_DATA, absent

REPO = Path(__file__).resolve().parents[1]
SECTION = REPO.joinpath("docs", "collections.md").read_text(encoding="utf-8").split("## Real test collections")[1].split("\n## ")[0]

pytestmark = pytest.mark.skipif(not SHARED_DATA.is_dir(), reason=absent(SHARED_DATA))
PAGE_DATA = "../shared/data/"


def corpus_folder(argument: str) -> str:
    """The page's ``--corpus`` value, where the tests find the real collections."""
    assert argument.startswith(PAGE_DATA), argument
    return str(SHARED_DATA / argument.removeprefix(PAGE_DATA))


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
    corpus = load_dataset(corpus_folder(arguments[arguments.index("--corpus") + 1])).corpus
    assert corpus.retriever_defaults is None  # nothing carried: the rule decides
    analyze = get_analyzer(arguments[arguments.index("--analyzer") + 1])
    terms = len({t for text in corpus.full_texts for t in analyze(text)})
    assert min(100, (min(len(corpus), terms) - 1) // 2) == (40 if name == "adi" else 100)


def run_the_page(arguments: list[str], out: Path) -> Path:
    """Run a page command (its ``--corpus`` where the tests find the collections); its results folder."""
    arguments = list(arguments)
    arguments[arguments.index("--corpus") + 1] = corpus_folder(arguments[arguments.index("--corpus") + 1])
    result = CliRunner().invoke(main, [*arguments, "--out", str(out), "--no-cache", "--quiet"])
    assert result.exit_code == 0, result.output
    [folder] = [p for p in out.iterdir() if p.is_dir()]
    return folder


def means(folder: Path, metrics: list[str]) -> dict[str, str]:
    """System (its name before any parameters) -> its means, as the table writes them."""
    with (folder / "summary.csv").open(encoding="utf-8") as handle:
        return {row["system"].split("(")[0]: " / ".join(f"{float(row[m]):.3f}" for m in metrics)
                for row in csv.DictReader(handle)}


@pytest.mark.parametrize("name", ["adi", "cranfield"])
def test_the_command_prints_the_tables_numbers(tmp_path: Path, name: str) -> None:
    folder = run_the_page(commands()[name], tmp_path)
    row = table()[name]
    assert list(means(folder, ["ndcg@10", "map", "recall@100", "mrr"]).values()) == row[:4]  # bm25, lsa, weighted, rrf
    # the best pair by nDCG@10, as the table words it: "weighted − bm25: +0.010 [-0.018, +0.040], Holm p 1.000: ..."
    first, second = re.match(r"(\w+) − (\w+): ", row[4]).groups()
    with (folder / "comparisons.csv").open(encoding="utf-8") as handle:
        pairs = {(r["system_a"].split("(")[0], r["system_b"].split("(")[0], r["metric"]): r
                 for r in csv.DictReader(handle)}
    sign = 1 if (first, second, "ndcg@10") in pairs else -1  # stored as a - b, either way round
    pair = pairs[(first, second, "ndcg@10")] if sign == 1 else pairs[(second, first, "ndcg@10")]
    low, high = sorted((sign * float(pair["ci_low"]), sign * float(pair["ci_high"])))
    shown = (f"{first} − {second}: {sign * float(pair['mean_diff']):+.3f} [{low:+.3f}, {high:+.3f}], "
             f"Holm p {float(pair['p_adjusted']):.3f}")
    assert row[4].startswith(shown)


def test_the_page_says_why_a_plain_run_prints_other_numbers(tmp_path: Path) -> None:
    """Each command names its analyzer; the note names the default one a plain run uses, and the
    plain Cranfield run's BM25 nDCG@10 it quotes is what that run prints."""
    assert all(arguments[arguments.index("--analyzer") + 1] == "english" for arguments in commands().values())
    note = " ".join(SECTION.split("done\n```\n")[1].split("\n\nCells are")[0].split())
    assert f"the default analyzer, `{DEFAULT_ANALYZER}`" in note
    plain = re.search(r"`bench compare (--corpus \S+ --systems bm25)` gives BM25 an nDCG@10 of (0\.\d+), "
                      r"not the table's (0\.\d+)", note)
    assert plain, note
    assert plain.group(3) == table()["cranfield"][0].split(" / ")[0]
    folder = run_the_page(["compare", *plain.group(1).split(), "--metrics", "ndcg@10"], tmp_path)
    assert means(folder, ["ndcg@10"]) == {"bm25": plain.group(2)}
