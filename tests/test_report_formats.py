"""The Markdown and LaTeX reports of a results folder (``bench report``, ``bench compare --report``,
``result.report(format)``): golden files for the bundled corpus, one text whichever way it is made,
the pull-request size limit at any size, and a LaTeX document that pdflatex compiles.

The golden files are the reports of the article's run made through the library with a fixed
command line (the manifest's only other varying fields, its time, run id, paths and library
versions, are never printed by these two formats, so nothing is normalised). To regenerate them
after a deliberate change: ``RETBENCH_REGENERATE_GOLDEN=1 python -m pytest tests/test_report_formats.py``,
then read the diff.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from corpora import Corpus, Dataset, Qrels, Queries, RetbenchError
from harness import compare
from harness.cli import main
from harness.report.formats import REPORT_FORMATS, format_for_path, parse_formats, render_report
from harness.report.latex import letter, tex
from harness.report.markdown import MAX_CHARACTERS, render_markdown
from harness.report.view import ReportView
from harness.store.read import open_results
from harness.store.write import write_results
from retrievers import BM25, FixedRun
from harness.core.options import Statistics
from tests.conftest import without_cost, without_cost_tables

REPO = Path(__file__).resolve().parents[1]
GOLDEN = REPO / "tests" / "golden" / "article"
ARTICLE_METRICS = ["hit@3", "recall@5", "mrr", "ndcg@5"]
ARTICLE_COMMAND = ["bench", "compare", "--systems", "bm25,lsa,weighted,rrf", "--metrics", ",".join(ARTICLE_METRICS)]


@pytest.fixture(scope="module")
def article_result():
    # the golden files hold no time: the folder is written as one without the cost reading
    return without_cost_tables(compare(["bm25", "lsa", "weighted", "rrf"], "article", ARTICLE_METRICS))


@pytest.fixture(scope="module")
def article_folder(article_result, tmp_path_factory) -> Path:
    return article_result.write(tmp_path_factory.mktemp("article"), command_line=ARTICLE_COMMAND)


@pytest.mark.parametrize("format_, golden", [("md", "report.md"), ("latex", "report.tex")])
def test_the_article_reports_equal_their_golden_files(article_folder, format_, golden) -> None:
    text = render_report(article_folder, format_)
    if os.environ.get("RETBENCH_REGENERATE_GOLDEN"):
        GOLDEN.mkdir(parents=True, exist_ok=True)
        (GOLDEN / golden).write_text(text, encoding="utf-8")
        pytest.skip(f"regenerated {golden}")
    assert text == (GOLDEN / golden).read_text(encoding="utf-8")


def test_the_golden_markdown_says_what_the_article_found() -> None:
    """Read like the spec: the means, the markers, a verdict line and a worst-hit query, by hand."""
    text = (GOLDEN / "report.md").read_text(encoding="utf-8")
    assert "| rrf | **0.857** | **0.738** | **0.857** | **0.737** |" in text
    assert "| bm25 | **0.857** | 0.667 | 0.821 | 0.691 |" in text  # no marker: nothing is significant on 14 queries
    assert ("- ndcg@5: lsa - rrf -0.058 [-0.120, -0.010], Holm p 0.750: too few differing queries to tell "
            "(4 of 14)") in text
    # worst-hit queries are read on the first metric, hit@3, against its best (bm25, tied with all): none lost
    assert "Worst-hit queries: hit@3, the 5 that lost most against bm25, per system" in text
    assert "| lsa | (none lower) |" in text
    assert "| bm25 | 1 | 1 | 0 | 2 |" in text  # failed queries: one vocabulary gap, one surface homonymy


def test_the_golden_latex_marks_the_best_and_states_the_conventions() -> None:
    text = (GOLDEN / "report.tex").read_text(encoding="utf-8")
    assert r"d & rrf & \textbf{0.857}\hphantom{$^{\mathrm{abc}}$} & \textbf{0.738}" in text
    assert r"\toprule" in text and r"\midrule" in text and r"\bottomrule" in text
    for convention in ("gain = grade", "cutoff 5", "doc id ascending", "randomisation test", "Holm's correction",
                       "95\\% paired bootstrap interval"):
        assert convention in text


def test_compare_writes_the_reports_that_bench_report_and_the_library_make(runner, article_result, tmp_path) -> None:
    result = runner.invoke(main, ["compare", "--systems", "bm25,lsa,weighted,rrf", "--metrics",
                                  ",".join(ARTICLE_METRICS), "--out", str(tmp_path / "out"), "--no-cache", "-q",
                                  "--report", "md,latex"])
    assert result.exit_code == 0, result.output
    (folder,) = (tmp_path / "out").iterdir()
    for name in ("md", "latex"):
        stored = (folder / REPORT_FORMATS[name].file).read_text(encoding="utf-8")
        later = runner.invoke(main, ["report", str(folder), "--format", name])
        assert later.exit_code == 0, later.output
        assert later.stdout == stored
        command = json.loads((folder / "manifest.json").read_text())["command_line"]
        assert "What each system cost" in stored or "<summary>Cost</summary>" in stored  # this run's times
        assert article_result.report(name, command_line=command) == without_cost(stored)
    assert not (folder / "report.html").exists()


def test_report_writes_to_a_file_with_the_format_of_its_suffix(runner, article_folder, tmp_path) -> None:
    result = runner.invoke(main, ["report", str(article_folder), "-o", str(tmp_path / "table.tex")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "table.tex").read_text() == (GOLDEN / "report.tex").read_text()
    assert f"latex report: {tmp_path / 'table.tex'}" in result.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["table.tex"]  # no temporary file left
    assert format_for_path("x.MD") == "md" and format_for_path("x.htm") == "html" and format_for_path("x") is None


def test_mistakes_are_one_line_exit_2_and_write_nothing(runner, article_folder, tmp_path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(main, ["compare", "--out", str(out), "--report", "md,pdf"])
    assert result.exit_code == 2
    assert "error: unknown report format 'pdf'. Valid: html, md, latex" in result.stderr
    assert not out.exists()
    missing = runner.invoke(main, ["report", str(tmp_path / "nowhere"), "--format", "md"])
    assert missing.exit_code == 2 and "no such results folder" in missing.stderr
    holder = runner.invoke(main, ["report", str(article_folder.parent), "--format", "md"])
    assert holder.exit_code == 2 and f"name one of them, e.g. the newest, {article_folder}" in holder.stderr
    no_folder = runner.invoke(main, ["report", str(article_folder), "-o", str(tmp_path / "absent" / "r.md")])
    assert no_folder.exit_code == 2 and f"its folder {tmp_path / 'absent'} does not exist" in no_folder.stderr
    assert not (tmp_path / "absent").exists()
    bad_format = runner.invoke(main, ["report", str(article_folder), "--format", "pdf"])
    assert bad_format.exit_code == 2 and "'pdf' is not one of 'html', 'md', 'latex'" in bad_format.output


def test_a_damaged_table_names_its_file_and_line(runner, article_folder, tmp_path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(article_folder, copy)
    lines = (copy / "summary.csv").read_text().splitlines()
    lines[2] = lines[2].replace("0.", "zero.", 1)
    (copy / "summary.csv").write_text("\n".join(lines) + "\n")
    # edited on purpose (--accept-edited): the parser's error is what is tested, past the hash check
    result = runner.invoke(main, ["report", str(copy), "--format", "md", "--accept-edited"])
    assert result.exit_code == 2
    assert f"error: {copy / 'summary.csv'}:3: column 'hit@3': 'zero.8571428571428571' is not a number" in result.stderr


def test_the_library_report_takes_the_format_first(article_result) -> None:
    with pytest.raises(RetbenchError, match="The 'format' parameter of report must be a str"):
        article_result.report(10)
    with pytest.raises(RetbenchError, match="unknown report format 'pdf'"):
        article_result.report("pdf")
    with pytest.raises(RetbenchError, match="show_failures, show_queries and heading shape the text report only"):
        article_result.report("md", show_failures=3)
    assert article_result.report() == article_result.report("text")  # the text report is unchanged
    assert parse_formats("md, latex,md") == ["md", "latex"]


def test_a_failing_report_leaves_no_results_folder(article_result, tmp_path) -> None:
    def broken(folder: Path):
        raise RetbenchError("the report could not be made")

    with pytest.raises(RetbenchError, match="could not be made"):
        write_results(article_result, tmp_path / "out", derived=broken)
    assert list((tmp_path / "out").iterdir()) == []
    with pytest.raises(ValueError, match="would replace a file"):
        write_results(article_result, tmp_path / "out", derived=lambda folder: {"summary.csv": ""})
    assert list((tmp_path / "out").iterdir()) == []


# ----- size: under a pull-request comment's limit, whatever the run ------------------------------


def synthetic(n_queries: int, n_docs: int = 600, seed: int = 1) -> Dataset:
    """Random texts over a 300-word vocabulary; each query is 4 words of one of its 3 relevant documents."""
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(300)]
    ids = [f"d{j:04d}" for j in range(n_docs)]
    docs = [" ".join(rng.choice(words, 30)) for _ in ids]
    query_ids = [f"q{i:04d}" for i in range(n_queries)]
    judgments, texts = {}, []
    for q in query_ids:
        relevant = rng.choice(n_docs, 3, replace=False)
        judgments[q] = {ids[r]: int(rng.integers(1, 3)) for r in relevant}
        texts.append(" ".join(docs[relevant[0]].split()[:4]))
    return Dataset("synthetic", Corpus(ids, docs), Queries(query_ids, texts), Qrels(judgments), "<memory>")


def shuffled(dataset: Dataset, seed: int, depth: int = 100) -> FixedRun:
    rng = np.random.default_rng(seed)
    ids = dataset.corpus.ids
    return FixedRun({q: [ids[j] for j in rng.permutation(len(ids))[:depth]] for q in dataset.queries.ids})


def test_markdown_of_2000_queries_fits_a_pull_request_comment(tmp_path) -> None:
    dataset = synthetic(2000)
    systems = {"bm25": BM25(), "shuffled1": shuffled(dataset, 1), "shuffled2": shuffled(dataset, 2)}
    result = compare(systems, dataset, ["ndcg@10", "recall@100", "mrr", "map"], baseline="bm25",
                     statistics=Statistics(bootstrap_samples=500))
    text = result.report("md")
    assert len(text) < MAX_CHARACTERS
    assert "- ndcg@10: shuffled1 - bm25 " in text and "shuffled1 is worse" not in text
    assert "▼" in text and "(baseline)" in text  # random rankings are significantly worse than bm25
    assert text.count("| shuffled2 | q") == 5  # its five worst-hit queries


@pytest.mark.parametrize("limit", [3000, 2300, 2250])
def test_markdown_too_long_for_the_limit_sheds_detail_in_steps(article_folder, limit) -> None:
    """The steps a huge run takes (hundreds of systems and metrics), on the article under a smaller limit:
    fewer worst-hit queries and verdicts first, then fewer systems, said so."""
    view = ReportView(open_results(article_folder))
    whole = render_markdown(view)
    assert len(whole) > 3000 and "- ndcg@5: lsa - rrf" in whole and "- hit@3: lsa - bm25" in whole
    text = render_markdown(view, limit=limit)
    assert len(text) <= limit
    assert text.startswith("### retbench: article, 4 systems on 14 queries")
    assert "How these numbers were made" in text
    assert ("- ndcg@5: lsa - rrf" in text) == (limit > 3000)  # verdicts of the first metric only
    assert ("- hit@3: lsa - bm25" in text) == (limit > 2300)  # then none
    if limit == 2250:
        assert "| lsa |" in text and "| weighted |" not in text
        assert "more systems in summary.csv (left out to keep this comment under 65,000 characters)" in text


# ----- LaTeX ----------------------------------------------------------------------------------------


def test_tex_escapes_every_special_character() -> None:
    assert tex(r"a\b{c}$d&e#f^g_h%i~j<k>l|m") == (r"a\textbackslash{}b\{c\}\$d\&e\#f\^{}g\_h\%i\textasciitilde{}j"
                                                  r"\textless{}k\textgreater{}l\textbar{}m")
    assert [letter(i) for i in (0, 3, 26)] == ["a", "d", "aa"]


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is absent (Debian: texlive-latex-base, "
                                                            "texlive-latex-recommended, texlive-fonts-recommended; "
                                                            ".ci/run installs them)")
def test_the_latex_report_compiles_with_pdflatex(article_folder, tmp_path) -> None:
    dataset = synthetic(40, n_docs=200)
    awkward = compare({"bm25": BM25(), "x_1.y+z": BM25(k1=0.9), "bm25(k1=0.5,b=0.3)": BM25(k1=0.5, b=0.3)}, dataset,
                      ["ndcg@10", "map"], statistics=Statistics(bootstrap_samples=200))
    documents = {"article.tex": (GOLDEN / "report.tex").read_text(), "awkward.tex": awkward.report("latex")}
    assert r"x\_1.y+z" in documents["awkward.tex"]
    for name, text in documents.items():
        (tmp_path / name).write_text(text)
        compiled = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", name], cwd=tmp_path,
                                  capture_output=True, text=True, timeout=120)
        assert compiled.returncode == 0, compiled.stdout[-3000:]
        assert (tmp_path / name.replace(".tex", ".pdf")).stat().st_size > 1000


# ----- without the report extra ------------------------------------------------------------------

INSTALL = "pip install 'retbench[report]'"


def test_without_matplotlib_html_says_how_to_install_and_the_others_still_work(runner, article_folder, tmp_path,
                                                                               monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # find_spec gives None, import fails: not installed
    html = runner.invoke(main, ["report", str(article_folder), "-o", str(tmp_path / "r.html")])
    assert html.exit_code == 2
    assert f"need matplotlib, which is not installed. Fix: {INSTALL}" in html.stderr
    assert not (tmp_path / "r.html").exists()
    out = tmp_path / "out"
    compared = runner.invoke(main, ["compare", "--out", str(out), "--report", "md,html"])
    assert compared.exit_code == 2 and INSTALL in compared.stderr
    assert not out.exists()  # refused before any work
    markdown = runner.invoke(main, ["report", str(article_folder), "--format", "md"])
    assert markdown.exit_code == 0 and markdown.stdout == (GOLDEN / "report.md").read_text()


def test_a_process_without_matplotlib_gets_one_line_and_exit_2(article_folder, tmp_path) -> None:
    script = ("import sys\n"
              "sys.modules['matplotlib'] = None\n"
              "from harness.cli import main\n"
              "main(prog_name='bench')\n")
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run([sys.executable, "-c", script, "report", str(article_folder)], capture_output=True,
                            text=True, cwd=tmp_path, env=environment, timeout=120)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"error: the html report's charts need matplotlib, which is not installed. "
                                          f"Fix: {INSTALL}"]
    assert result.stdout == ""


def test_the_docs_show_the_report_and_name_only_real_options() -> None:
    page = (REPO / "docs" / "reports.md").read_text(encoding="utf-8")
    section = page.split("\n## Reports: HTML, Markdown, LaTeX\n")[1].split("\n## ")[0]
    screenshot = REPO / "docs" / "report-screenshot.png"
    assert "](report-screenshot.png)" in section
    assert "](docs/report-screenshot.png)" in (REPO / "README.md").read_text(encoding="utf-8")  # the front door's picture
    assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and screenshot.stat().st_size < 300_000
    assert "gh pr comment" in section and "--body-file" in section
    from harness.cli.compare import command as compare_command
    from harness.cli.report import command as report_command
    options = {flag for c in (compare_command, report_command) for p in c.params for flag in getattr(p, "opts", [])}
    named = set(re.findall(r"`(--?[a-z][a-z-]*)", section))
    assert named and named <= options, named - options
    commands = (REPO / "docs" / "commands.md").read_text(encoding="utf-8").split("\n## Commands\n")[1].split("\n## ")[0]
    assert "| `bench report RUN_DIR [--format html\\|md\\|latex] [-o FILE]` |" in commands
