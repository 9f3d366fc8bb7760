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
    config = CompareConfig()
    shared = 0
    for group in GROUPS:
        for field in dataclasses.fields(group):
            if hasattr(config, field.name) and field.default is not None:
                assert getattr(config, field.name) == field.default, field.name
                shared += 1
    assert shared >= 10
    tuned = TuneConfig(grid="bm25", corpus="article", metric="mrr")
    for name in ("depth", "rel_threshold", "bootstrap_samples", "confidence", "seed"):
        assert getattr(tuned, name) == getattr(config, name)


@pytest.mark.parametrize("command", [compare_command, tune_command, gate_command], ids=["compare", "tune", "gate"])
def test_the_commands_options_carry_the_declared_defaults(command: click.Command) -> None:
    """Every option named like a field of a group has that field's default (a flag's False stands for None;
    --split shows the split None loads, gate's --rel-threshold defaults to the baseline folder's)."""
    declared = {f.name: f.default for group in GROUPS for f in dataclasses.fields(group)}
    own = {"split", "rel_threshold"} if command is gate_command else {"split"}
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


def _error_texts(tree: ast.AST) -> list[str]:
    """The literal text of every raised exception's arguments (f-string parts included)."""
    texts = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            parts = [n.value for n in ast.walk(node.exc) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
            texts.append("".join(parts))
    return texts


#: Library files whose errors still name flags: outside this change's area, left to their owners.
NOT_YET = {"corpora/csfcube.py", "corpora/loading.py", "corpora/readers.py", "corpora/tabular.py",
           "corpora/trec_collection.py", "corpora/trec_io.py", "harness/engines/__init__.py",
           "harness/engines/dask_engine.py", "harness/report/formats.py", "harness/store/folder.py",
           "harness/store/read.py", "retrievers/lsa.py"}
FLAG = re.compile(r"(?<![\w`-])--[a-z][a-z-]+")


def test_library_errors_name_parameters_not_flags() -> None:
    """No raise outside harness/cli names a ``--flag`` (a backticked `bench ... --flag` pointer to the
    docs aside): the library speaks of parameters, the CLI translates them."""
    offenders = []
    for package in ("corpora", "retrievers", "harness"):
        for path in sorted((REPO / package).rglob("*.py")):
            relative = path.relative_to(REPO).as_posix()
            if relative.startswith("harness/cli/") or relative in NOT_YET:
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
