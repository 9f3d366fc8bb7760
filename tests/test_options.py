"""Options declared once (harness.core.options): compare()'s parameters, one default per option, the
click options built from the declarations, and errors that name parameters in the library and flags
in the CLI."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from harness import compare
from harness.cli import main
from harness.cli.compare import command as compare_command
from harness.cli.declared import as_flags, flags_of, help_values
from harness.cli.gate import command as gate_command
from harness.cli.tune import command as tune_command
from harness.core.options import Loading, Readings, RunOptions, Scoring, Statistics
from harness.core.record import CompareConfig
from harness.errors import RetbenchError
from harness.tuning.record import TuneConfig
from harness.tuning.search import tune

REPO = Path(__file__).resolve().parents[1]
GROUPS = (Scoring, Statistics, Readings, Loading)


def test_compare_takes_at_most_ten_parameters() -> None:
    assert len(inspect.signature(compare).parameters) <= 10


def test_the_recorded_configuration_takes_its_defaults_from_the_groups() -> None:
    """CompareConfig (the manifest's record) and the groups agree on every option they share, so the
    manifest of a default run does not depend on which of them was read."""
    config = CompareConfig().flat()
    shared = 0
    for group in GROUPS:
        for field in dataclasses.fields(group):
            if field.name in config and field.default is not None:
                assert config[field.name] == field.default, field.name
                shared += 1
    assert shared >= 10
    tuned = TuneConfig(grid="bm25", corpus="article", metric="mrr")
    for name in ("depth", "rel_threshold", "bootstrap_samples", "confidence", "seed"):
        assert getattr(tuned, name) == config[name]


@pytest.mark.parametrize("command", [compare_command, tune_command, gate_command], ids=["compare", "tune", "gate"])
def test_the_commands_options_carry_the_declared_defaults(command: click.Command) -> None:
    """Every option named like a field of a group has that field's default (a flag's False stands for None;
    --split shows the split None loads, gate's --rel-threshold and --unjudged default to the baseline folder's)."""
    declared = {f.name: f.default for group in GROUPS for f in dataclasses.fields(group)}
    own = {"split", "rel_threshold", "unjudged"} if command is gate_command else {"split"}
    checked = 0
    for param in command.params:
        if isinstance(param, click.Option) and param.name in declared and param.name not in own:
            expected = declared[param.name]
            assert param.default == (False if param.is_flag and expected is None else expected), param.name
            checked += 1
    assert checked >= 4


def test_compare_options_keep_the_declared_help() -> None:
    helps = {p.name: p.help for p in compare_command.params if isinstance(p, click.Option)}
    for group in GROUPS:
        for field in dataclasses.fields(group):
            if field.name in helps and field.name != "split":
                text = field.metadata["help"]
                text = text() if callable(text) else text
                assert helps[field.name] == (text.format(**help_values()) if "{" in text else text), field.name


def _strings(node: ast.AST) -> str:
    return "".join(n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str))


def _error_texts(tree: ast.AST) -> list[str]:
    """The literal text of every raised exception's arguments and of every ``...Error(...)`` built
    (a helper may return one), f-string parts included, with the text of the names they use that the
    module assigns a string (a ``fix`` variable, a module constant)."""
    assigned: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    assigned[target.id] = assigned.get(target.id, "") + _strings(node.value)
    texts = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            built: ast.AST = node.exc
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id.endswith("Error"):
            built = node
        else:
            continue
        names = [assigned.get(n.id, "") for n in ast.walk(built) if isinstance(n, ast.Name)]
        texts.append(_strings(built) + "".join(names))
    return texts


FLAG = re.compile(r"(?<![\w`-])--[a-z][a-z-]+")


def test_library_errors_name_parameters_not_flags() -> None:
    """No raise outside harness/cli names a ``--flag`` (a backticked `bench ... --flag` pointer to the
    docs aside): the library speaks of parameters, the CLI translates them."""
    offenders = []
    for package in ("corpora", "retrievers", "harness"):
        for path in sorted((REPO / package).rglob("*.py")):
            relative = path.relative_to(REPO).as_posix()
            if relative.startswith("harness/cli/"):
                continue
            for text in _error_texts(ast.parse(path.read_text(encoding="utf-8"))):
                text = re.sub(r"`bench [^`]*`", "", text)
                if FLAG.search(text):
                    offenders.append(f"{relative}: {text[:80]}")
    assert offenders == []


def test_the_library_names_the_parameter() -> None:
    with pytest.raises(RetbenchError) as caught:
        compare(["bm25"], "article", ["mrr"], statistics=Statistics(seed=-1))
    assert "`seed` must be an int >= 0" in str(caught.value)
    assert "--" not in str(caught.value)
    with pytest.raises(RetbenchError, match="`folds` must be an int >= 2"):
        tune("bm25(k1=0.9|1.2)", "article", "mrr", folds=1)
    with pytest.raises(RetbenchError, match="`readings` is a Statistics, not a Readings"):
        compare(["bm25"], "article", ["mrr"], readings=Statistics())


@pytest.mark.parametrize(
    ("arguments", "printed"),
    [
        (["compare", "--seed", "-1"], "error: --seed must be an int >= 0 (numpy seeds are non-negative). Got -1 "
                                      "instead. Fix: pass e.g. --seed 0"),
        (["compare", "--depth", "5", "--metrics", "ndcg@10"], "a metric cuts at 10 but --depth is 5. Fix: raise --depth"),
        (["compare", "--family", "metric", "--risk-metric", "map"], "error: --risk-metric 'map' is not among the"),
        (["tune", "bm25(k1=0.9|1.2)", "--folds", "1"], "error: --folds must be an int >= 2"),
        (["tune", "bm25(k1=0.9|1.2)", "--max-points", "1"], "raise the limit (--max-points 2)"),
    ],
)
def test_the_cli_prints_flags(arguments: list[str], printed: str, tmp_path: Path) -> None:
    outcome = CliRunner().invoke(main, [*arguments, "--out", str(tmp_path)])
    assert outcome.exit_code == 2, outcome.output
    assert printed in outcome.output
    assert "`" not in outcome.output.split("Fix:")[0]


def _corpus_folder(folder: Path, unknown: int = 0) -> Path:
    """A tabular corpus of five documents and three queries, each judged once, with ``unknown``
    more judgments of documents it does not hold."""
    folder.mkdir()
    (folder / "corpus.jsonl").write_text("".join(f'{{"id": "d{j}", "text": "document {j}"}}\n' for j in range(1, 6)))
    (folder / "queries.jsonl").write_text("".join(f'{{"id": "q{j}", "text": "question {j}"}}\n' for j in range(1, 4)))
    judged = [f"q{j}\td{j}" for j in range(1, 4)] + [f"q1\tx{j}" for j in range(unknown)]
    (folder / "qrels.tsv").write_text("".join(f"{line}\t1\n" for line in judged))
    return folder


#: Library errors reaching the terminal: (arguments, the flag-worded text the one error line holds).
#: CORPUS: a corpus folder; UNMATCHED: one with 7 of 10 judgments of unknown documents; OUT: a
#: fresh folder; FILE: a file where a folder belongs.
_CLI_CASES = [
    (["corpora", "validate", "UNMATCHED"], "pass --allow-unmatched-judgments to skip them"),  # a group's flag, renamed
    (["compare", "--corpus", "UNMATCHED", "--out", "OUT"], "pass --allow-unmatched-judgments to skip them"),
    (["corpora", "show", "--format", "trec", "irds:beir/scifact/test"],
     "--format trec forces the layout of a folder, but irds: names a dataset of another package. Fix: drop --format"),
    (["compare", "--corpus", "irds:beir/scifact/test", "--split", "dev", "--out", "OUT"],
     "--split dev picks the judgments of a folder, but a irds: id names its split itself. Fix: drop --split"),
    (["corpora", "show", "--split", "dev", "CORPUS"], "Fix: leave out --split: the default, 'test', reads that set"),
    (["compare", "--out", "FILE"], "Fix: choose a folder you can write to with --out"),
    (["tune", "bm25(k1=0.9|1.2)", "--report", "latex", "--out", "OUT"],
     "error: --report latex: the latex report is not available for tune folders"),
]


def _arguments(arguments: list[str], tmp_path: Path) -> list[str]:
    places = {"CORPUS": lambda: _corpus_folder(tmp_path / "corpus"),
              "UNMATCHED": lambda: _corpus_folder(tmp_path / "unmatched", unknown=7),
              "OUT": lambda: tmp_path / "out", "FILE": lambda: _written(tmp_path / "file.txt")}
    return [str(places[a]()) if a in places else a for a in arguments]


def _written(path: Path) -> Path:
    path.write_text("not a folder\n")
    return path


def _one_error_line(exit_code: int, stderr: str, printed: str) -> None:
    assert exit_code == 2, stderr
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    assert printed in lines[0]
    assert not re.search(r"`[a-z_]+(=[^`]*)?`", lines[0]), lines[0]  # no parameter left untranslated


@pytest.mark.parametrize(("arguments", "printed"), _CLI_CASES,
                         ids=["validate unmatched", "compare unmatched", "show format of id", "compare split of id",
                              "show split", "compare out", "tune report"])
def test_the_cli_prints_the_flags_of_library_errors(arguments: list[str], printed: str, tmp_path: Path) -> None:
    outcome = CliRunner().invoke(main, _arguments(arguments, tmp_path))
    _one_error_line(outcome.exit_code, outcome.stderr, printed)
    assert not (tmp_path / "out").exists()  # refused before anything was written


@pytest.mark.parametrize("case", [0, 2], ids=["unmatched judgments", "format of an id"])
def test_bench_prints_one_error_line_naming_the_flag(case: int, tmp_path: Path) -> None:
    """The same, end to end: the ``bench`` process's exit status and stderr."""
    arguments, printed = _CLI_CASES[case]
    ran = subprocess.run([sys.executable, "-c", "from harness.cli import main; main()",
                          *_arguments(arguments, tmp_path)], capture_output=True, text=True, cwd=REPO)
    _one_error_line(ran.returncode, ran.stderr, printed)
    assert ran.stdout == ""


def test_the_library_names_the_parameters_the_cli_translates(tmp_path: Path) -> None:
    from corpora import load_dataset

    with pytest.raises(RetbenchError) as caught:
        load_dataset(str(_corpus_folder(tmp_path / "unmatched", unknown=7)))
    assert "pass `allow_unmatched_judgments=True` to skip them" in str(caught.value)
    with pytest.raises(RetbenchError) as caught:
        load_dataset(str(_corpus_folder(tmp_path / "corpus")), split="dev")
    assert "Fix: leave out `split`" in str(caught.value)
    with pytest.raises(RetbenchError) as caught:
        load_dataset("irds:beir/scifact/test", format="trec")
    assert "`format=trec` forces the layout" in str(caught.value) and "Fix: drop `format`" in str(caught.value)
    assert "--" not in str(caught.value)


def test_a_commands_own_name_for_a_library_parameter_gets_its_flag() -> None:
    from harness.cli.corpora import command as corpora_group
    from harness.cli.evaluate import command as evaluate_command

    corpora = flags_of(corpora_group)  # the group holds its subcommands' flags: their errors reach it
    assert corpora["format"] == "--format" and corpora["allow_unmatched_judgments"] == "--allow-unmatched-judgments"
    assert flags_of(gate_command)["format"] == "--corpus-format"  # gate's --format is the output's
    assert flags_of(compare_command)["format"] == "--format"
    assert "format" not in flags_of(evaluate_command)  # its --format is the output's, not a library name
    assert (as_flags('pass `accept_edited=True`, `trailing_fields="ignore"` or `systems=\'a=bm25,b=lsa\'`',
                     {"accept_edited": "--accept-edited", "trailing_fields": "--trailing-fields",
                      "systems": "--systems"})
            == "pass --accept-edited, --trailing-fields ignore or --systems 'a=bm25,b=lsa'")


def test_as_flags_leaves_unknown_names_and_commands_alone() -> None:
    flags = flags_of(tune_command)
    assert flags["facets_file"] == "--facets" and flags["metric"] == "--metric"
    assert (as_flags("`facets_file` and `metric=mrr`, see `bench corpora` and `family`", flags)
            == "--facets and --metric mrr, see `bench corpora` and `family`")


def test_importing_compare_loads_no_report_serve_gate_tune_or_dask() -> None:
    code = ("import sys\nimport harness\nharness.compare\n"
            "print(sorted(m for m in sys.modules if m.startswith(('harness.report', 'harness.serve', "
            "'harness.gating', 'harness.tuning', 'dask', 'distributed'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == "[]"
