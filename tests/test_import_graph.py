"""The packages import one way, corpora -> retrievers -> harness -> cli, and no module imports
itself back through others; nor does a script of ``benchmarks/`` (they import each other as
top-level modules, their folder on ``sys.path``).

Inside ``harness`` the sub-packages are layers, in one order (:data:`HARNESS_LAYERS`), from the top:

1. ``cli`` -- the ``bench`` commands;
2. ``serve`` (the evals API and dashboard) and ``harness`` itself (its ``__init__``, the public names);
3. ``suite`` -- several collections, each an ordinary comparison;
4. ``comparison`` (``harness/comparison.py``: :func:`harness.compare` and the ``CompareResult`` that
   renders and stores itself), ``gating``, ``tuning`` (with its own reports) and ``judgments`` (pool,
   agreement, PPI, the judging session and page);
5. ``readings`` -- the built-in readings, each one module as an add-on is (its compute step, record
   and report sections, registered in ``core``'s registry);
6. ``report`` -- the reports of a comparison's results folder, and the charts;
7. ``store`` -- the results folder, written and read;
8. ``core`` -- compare computed as plain data, evaluate, metrics, the scoring conventions (condensed
   lists), statistics, readings;
9. ``engines`` (where work runs, a step's deadline and clock, what each system costs) and ``web`` (the HTTP checks ``serve`` and the judging page share);
10. ``errors`` -- the error family.

A module may import its own sub-package and those of lower layers; never one of its own layer (each
stands on its own) nor one above. The rule holds for every import wherever it stands, as the cycle
check's does: a deferred import inside a function runs upward as surely as one at the top.

The graph is read from the source (``ast``), not from a running interpreter, and holds every
import statement among our own modules wherever it stands: at module level, inside a function
(a lazy import) and under ``if TYPE_CHECKING:``. A lazy or type-only import defers or hides a
dependency but does not remove it, and both cycles issue 12 found went through one
(``registry -> builtin`` was lazy, ``batch_metrics -> evaluation`` type-only). Third-party
modules are not in the graph, so deferring a heavy import (scikit-learn, torch) is never a finding.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("corpora", "retrievers", "harness")
#: Which packages each package may import (besides itself); harness.cli is checked on its own.
ALLOWED = {"corpora": set(), "retrievers": {"corpora"}, "harness": {"corpora", "retrievers"}}
CLI = "harness.cli"
#: The layers of ``harness``, from the top down (see the module docstring): each name is a sub-package
#: (``harness/<name>/``), a module (``harness/<name>.py``), or ``harness``, the package's ``__init__``.
HARNESS_LAYERS: tuple[tuple[str, ...], ...] = (
    ("cli",),
    ("serve", "harness"),
    ("suite",),
    ("comparison", "gating", "tuning", "judgments"),
    ("readings",),
    ("report",),
    ("store",),
    ("core",),
    ("engines", "web"),
    ("errors",),
)


def modules_of(root: Path, packages: Iterable[str]) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` file under the packages (``pkg`` for its __init__)."""
    found = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _absolute(module: str | None, level: int, importer: str, is_package: bool) -> str:
    """The absolute name a (possibly relative) ``from`` import refers to."""
    if level == 0:
        return module or ""
    base = importer.split(".")
    base = base if is_package else base[:-1]
    base = base[:len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def scripts_of(folder: Path) -> dict[str, Path]:
    """Module name -> file, for the ``.py`` files of a folder of scripts that is itself on
    ``sys.path`` (``benchmarks/``: ``from common import ...``)."""
    return {path.stem: path for path in sorted(folder.glob("*.py"))}


def import_graph(root: Path, packages: Iterable[str], modules: dict[str, Path] | None = None) -> dict[str, set[str]]:
    """Module -> the modules of ``packages`` (or of ``modules``, names -> files) it imports, anywhere
    in its source.

    ``from pkg import name`` points at ``pkg.name`` when that is a module, else at ``pkg`` (its
    ``__init__``). A parent package that Python initialises first is not an edge of its own: it is
    not a dependency the importing code chose.
    """
    modules = modules_of(root, packages) if modules is None else modules
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                source = _absolute(node.module, node.level, name, path.name == "__init__.py")
                targets = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source
                           for alias in node.names]
            else:
                continue
            graph[name].update(t for t in targets if t in modules and t != name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan, without recursion), each
    sorted, as a list sorted by its first module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return sorted(found)


def path_within(graph: dict[str, set[str]], group: list[str]) -> list[str]:
    """One cycle through the group's first module, for the failure message."""
    start, members = group[0], set(group)
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        node = frontier.pop(0)
        for child in sorted(graph[node] & members):
            if child == start:
                trail = [node]
                while trail[-1] != start:
                    trail.append(previous[trail[-1]])
                return [start, *reversed(trail[:-1]), start] if len(trail) > 1 else [start, node, start]
            if child not in previous:
                previous[child] = node
                frontier.append(child)
    return group


def part_of(module: str, package: str = "harness") -> str:
    """The part of ``package`` a module belongs to: its sub-package or top module (``harness.core.api``
    -> ``core``, ``harness.errors`` -> ``errors``), or ``package`` itself for its ``__init__``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def upward_imports(graph: dict[str, set[str]], layers: tuple[tuple[str, ...], ...],
                   package: str = "harness") -> list[str]:
    """Every import between two parts of ``package`` that does not run down the ``layers`` (from the
    top): one to a part of the same layer or of a higher one, each named with both layers; and every
    part that no layer places, so that a new sub-package is given its place."""
    rank = {part: index for index, layer in enumerate(layers) for part in layer}
    found = []
    inside = {m: ts for m, ts in graph.items() if m == package or m.startswith(package + ".")}
    for part in sorted({part_of(m, package) for m in inside} - set(rank)):
        found.append(f"{package}.{part} has no layer: place it in the order")
    for module, imported in sorted(inside.items()):
        source = part_of(module, package)
        for target in sorted(t for t in imported if t == package or t.startswith(package + ".")):
            goal = part_of(target, package)
            if goal == source or source not in rank or goal not in rank:
                continue
            if rank[goal] <= rank[source]:
                where = "its own layer" if rank[goal] == rank[source] else f"layer {rank[goal] + 1}, above it"
                found.append(f"{module} (layer {rank[source] + 1}, {source}) imports {target} ({where})")
    return found


# ----- the repository ---------------------------------------------------------------------------

GRAPH = import_graph(REPO, PACKAGES)
BENCHMARKS = import_graph(REPO, (), scripts_of(REPO / "benchmarks"))


def test_the_walk_sees_every_module_and_the_known_edges() -> None:
    """A guard on the walker itself: it reads lazy imports too, and the packages it should."""
    assert {"corpora", "retrievers.registry", "harness.core.metrics", "harness.cli.compare"} <= set(GRAPH)
    assert "retrievers.base" in GRAPH["retrievers.registry"]
    assert "harness.core.batch_metrics" in GRAPH["harness.core.metrics"]


def test_no_import_cycle() -> None:
    found = cycles(GRAPH)
    assert found == [], "import cycles: " + "; ".join(" -> ".join(path_within(GRAPH, g)) for g in found)


def test_the_benchmarks_import_no_cycle() -> None:
    assert {"common", "synthetic"} <= set(BENCHMARKS) and "synthetic" in BENCHMARKS["common"]
    found = cycles(BENCHMARKS)
    assert found == [], "import cycles in benchmarks/: " + "; ".join(
        " -> ".join(path_within(BENCHMARKS, g)) for g in found)


def test_layering_corpora_retrievers_harness_cli() -> None:
    wrong = []
    for module, imported in GRAPH.items():
        package = module.split(".")[0]
        for target in imported:
            other = target.split(".")[0]
            if other != package and other not in ALLOWED[package]:
                wrong.append(f"{module} imports {target}")
            if (target == CLI or target.startswith(CLI + ".")) and not (module == CLI or module.startswith(CLI + ".")):
                wrong.append(f"{module} imports {target} (nothing outside the CLI imports it)")
    assert wrong == []


def test_the_harness_layers_run_one_way() -> None:
    """No import in ``harness``, at module level, inside a function or for type checking only, runs
    from a layer to its own or a higher one (:data:`HARNESS_LAYERS`)."""
    assert upward_imports(GRAPH, HARNESS_LAYERS) == []


def test_the_layers_name_every_part_of_harness_once() -> None:
    named = [part for layer in HARNESS_LAYERS for part in layer]
    assert len(named) == len(set(named))
    assert set(named) == {part_of(m) for m in GRAPH if m == "harness" or m.startswith("harness.")}


# ----- the walker on made-up packages ------------------------------------------------------------

def _package(root: Path, files: dict[str, str]) -> None:
    for name, source in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source), encoding="utf-8")


@pytest.mark.parametrize("import_b", [
    "from pkg.a import thing",  # module level
    "def late():\n    from pkg.a import thing\n",  # lazy, inside a function
    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import thing\n",  # type-only
    "from . import a",  # relative
    "import pkg.a",
])
def test_a_cycle_is_found_however_the_import_is_written(tmp_path: Path, import_b: str) -> None:
    _package(tmp_path, {"pkg/__init__.py": "", "pkg/a.py": "from pkg.b import other\nthing = 1\n",
                        "pkg/b.py": import_b + "\nother = 2\n", "pkg/c.py": "from pkg import a\n"})
    graph = import_graph(tmp_path, ["pkg"])
    assert cycles(graph) == [["pkg.a", "pkg.b"]]
    assert path_within(graph, ["pkg.a", "pkg.b"]) == ["pkg.a", "pkg.b", "pkg.a"]


def test_a_package_init_that_a_submodule_imports_back_is_a_cycle(tmp_path: Path) -> None:
    _package(tmp_path, {"pkg/__init__.py": "from pkg.model import Thing\n",
                        "pkg/model.py": "from pkg import helper_name\n"})
    assert cycles(import_graph(tmp_path, ["pkg"])) == [["pkg", "pkg.model"]]


def test_a_cycle_between_scripts_of_one_folder_is_found(tmp_path: Path) -> None:
    _package(tmp_path, {"common.py": "import json\ndef late():\n    import synthetic\n",
                        "synthetic.py": "def main():\n    from common import helper\n",
                        "speed.py": "from common import helper\nimport numpy\n"})
    graph = import_graph(tmp_path, (), scripts_of(tmp_path))
    assert graph["speed"] == {"common"}
    assert cycles(graph) == [["common", "synthetic"]]


def test_no_cycle_where_imports_run_one_way(tmp_path: Path) -> None:
    _package(tmp_path, {"pkg/__init__.py": "from pkg.a import thing\n", "pkg/a.py": "import json\nthing = 1\n",
                        "pkg/b.py": "def late():\n    import pkg.a\n"})
    assert cycles(import_graph(tmp_path, ["pkg"])) == []


# ----- the layer rule on a made-up harness ---------------------------------------------------------

_LOW_TO_HIGH = {  # the deliberate upward import of core/api.py, however it is written
    "module level": "from harness.report.view import View\n",
    "deferred": "def render():\n    from harness.report.view import View\n    return View\n",
    "type only": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from harness.report.view import View\n",
    "relative": "def render():\n    from ..report import view\n    return view\n",
    "plain import": "def render():\n    import harness.report.view\n",
    "the package face": "def late():\n    from harness import compare\n",
}


def _layered(tmp_path: Path, core_api: str) -> dict[str, set[str]]:
    _package(tmp_path, {"harness/__init__.py": "def __getattr__(name):\n    from harness.core.api import compare\n",
                        "harness/core/__init__.py": "", "harness/core/api.py": core_api,
                        "harness/report/__init__.py": "",
                        "harness/report/view.py": "from harness.core.api import compare\nView = compare\n"})
    return import_graph(tmp_path, ["harness"])


@pytest.mark.parametrize("written", list(_LOW_TO_HIGH))
def test_an_upward_import_fails_the_layer_rule_however_it_is_written(tmp_path: Path, written: str) -> None:
    graph = _layered(tmp_path, "def compare():\n    return 1\n" + _LOW_TO_HIGH[written])
    found = upward_imports(graph, HARNESS_LAYERS)
    target = "harness" if written == "the package face" else "harness.report.view"
    assert found == [f"harness.core.api (layer 8, core) imports {target} (layer "
                     f"{2 if target == 'harness' else 6}, above it)"]


def test_imports_that_run_down_pass_the_layer_rule(tmp_path: Path) -> None:
    assert upward_imports(_layered(tmp_path, "def compare():\n    return 1\n"), HARNESS_LAYERS) == []


def test_an_import_within_a_layer_and_an_unplaced_part_fail(tmp_path: Path) -> None:
    _package(tmp_path, {"harness/__init__.py": "", "harness/gating/__init__.py": "",
                        "harness/gating/rule.py": "def late():\n    from harness.tuning import search\n",
                        "harness/tuning/__init__.py": "", "harness/tuning/search.py": "",
                        "harness/attic/__init__.py": "from harness.gating import rule\n"})
    assert upward_imports(import_graph(tmp_path, ["harness"]), HARNESS_LAYERS) == [
        "harness.attic has no layer: place it in the order",
        "harness.gating.rule (layer 4, gating) imports harness.tuning.search (its own layer)"]
