"""Discovery: a class in the user's own module, the entry-point group, and `bench retrievers`."""

from __future__ import annotations

import csv
import inspect
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harness.cli import main
from retrievers import available, registry

FAST = ["--bootstrap-samples", "200"]
REPO = Path(__file__).resolve().parents[1]

USER_MODULE = '''
from retrievers import Retriever


class MyRetriever(Retriever):
    """Ranks documents by the number of query words they contain (not registered anywhere)."""

    def __init__(self, bonus: float = 0.0):
        self.bonus = bonus

    def search(self, queries, k):
        docs = [set(t.lower().split()) for t in self.corpus.full_texts]
        out = {}
        for qid, text in zip(queries.ids, queries.texts):
            words = set(text.lower().split())
            scored = [(d, len(words & w) + self.bonus) for d, w in zip(self.corpus.ids, docs) if words & w]
            out[qid] = sorted(scored, key=lambda p: (-p[1], p[0]))[:k]
        return out


class Liar(MyRetriever):
    def search(self, queries, k):
        return {q: [("no-such-doc", 1.0)] for q in queries.ids}
'''


def write_module(folder: Path, name: str, source: str) -> None:
    (folder / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")


def summary_systems(out: Path) -> list[str]:
    (folder,) = [p for p in out.iterdir() if p.is_dir()]
    with open(folder / "summary.csv", newline="", encoding="utf-8") as handle:
        return [row["system"] for row in csv.DictReader(handle)]


def test_a_class_in_the_users_module_runs_beside_the_baselines(runner, tmp_path, monkeypatch) -> None:
    write_module(tmp_path, "my_module_beside", USER_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    result = runner.invoke(main, ["compare", "--systems", "bm25,my_module_beside:MyRetriever,"
                                  "my_module_beside:MyRetriever(bonus=0.5)", "--out", str(tmp_path / "out"), *FAST])
    assert result.exit_code == 0, result.output
    assert summary_systems(tmp_path / "out") == ["bm25", "MyRetriever", "MyRetriever(bonus=0.5)"]
    assert "my_module_beside" not in available()  # it was never registered


def test_a_plugin_returning_an_unknown_doc_id_exits_2_naming_it(runner, tmp_path, monkeypatch) -> None:
    write_module(tmp_path, "my_module_liar", USER_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    result = runner.invoke(main, ["compare", "--systems", "bm25,my_module_liar:Liar", "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    errors = [line for line in result.stderr.splitlines() if line.strip()]
    assert errors == ["error: retriever 'Liar': query 'q01': doc id 'no-such-doc' is not in the corpus"]
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_a_module_that_fails_to_import_is_one_clear_error(runner, tmp_path, monkeypatch) -> None:
    write_module(tmp_path, "my_module_broken", "raise RuntimeError('forgot a file')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    result = runner.invoke(main, ["compare", "--systems", "my_module_broken:X", "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "importing module 'my_module_broken' failed: RuntimeError: forgot a file" in result.stderr


def test_a_class_that_is_not_a_retriever_is_refused(runner, tmp_path, monkeypatch) -> None:
    write_module(tmp_path, "my_module_plain", "class Plain:\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    result = runner.invoke(main, ["compare", "--systems", "my_module_plain:Plain", "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "has no Retriever subclass named 'Plain'. Fix: name a class that subclasses retrievers.Retriever" \
        in result.stderr


OVERLAP_MODULE = '''
from retrievers import Retriever


class Overlap(Retriever):
    """Ranks documents by shared words, plus a per-module bonus so the two modules differ."""

    name = "overlap"
    bonus = {bonus}

    def search(self, queries, k):
        docs = [set(t.lower().split()) for t in self.corpus.full_texts]
        out = {{}}
        for qid, text in zip(queries.ids, queries.texts):
            words = set(text.lower().split())
            scored = [(d, len(words & w) + self.bonus) for d, w in zip(self.corpus.ids, docs) if words & w]
            out[qid] = sorted(scored, key=lambda p: (-p[1], p[0]))[:k]
        return out
'''


def run_tags(out: Path) -> set[str]:
    (folder,) = [p for p in out.iterdir() if p.is_dir()]
    return {line.split()[5] for path in (folder / "runs").glob("*.trec") for line in path.read_text().splitlines()}


def test_named_systems_carry_their_names_everywhere(runner, tmp_path, monkeypatch) -> None:
    write_module(tmp_path, "overlap_mine", OVERLAP_MODULE.format(bonus=0.0))
    write_module(tmp_path, "overlap_theirs", OVERLAP_MODULE.format(bonus=0.5))
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "out"
    result = runner.invoke(main, ["compare", "--systems", "mine=overlap_mine:Overlap,theirs=overlap_theirs:Overlap",
                                  "--baseline", "mine", "--metrics", "mrr", "--out", str(out), *FAST])
    assert result.exit_code == 0, result.output
    assert summary_systems(out) == ["mine", "theirs"]
    (folder,) = [p for p in out.iterdir() if p.is_dir()]
    with open(folder / "per_query.csv", newline="", encoding="utf-8") as handle:
        assert {row["system"] for row in csv.DictReader(handle)} == {"mine", "theirs"}
    assert run_tags(out) == {"mine", "theirs"}
    assert "theirs - mine" in result.output
    assert any(line.startswith("mine ") for line in result.output.splitlines())  # the table of means


def test_two_plugin_classes_with_one_name_get_module_qualified_labels(runner, tmp_path, monkeypatch) -> None:
    write_module(tmp_path, "overlap_left", OVERLAP_MODULE.format(bonus=0.0))
    write_module(tmp_path, "overlap_right", OVERLAP_MODULE.format(bonus=0.5))
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "out"
    result = runner.invoke(main, ["compare", "--systems", "bm25,overlap_left:Overlap,overlap_right:Overlap",
                                  "--metrics", "mrr", "--out", str(out), *FAST])
    assert result.exit_code == 0, result.output
    assert summary_systems(out) == ["bm25", "overlap_left:Overlap", "overlap_right:Overlap"]
    assert run_tags(out) == {"bm25", "overlap_left:Overlap", "overlap_right:Overlap"}


def test_one_plugin_class_twice_is_still_a_duplicate(runner, tmp_path, monkeypatch) -> None:
    write_module(tmp_path, "overlap_twice", OVERLAP_MODULE.format(bonus=0.0))
    monkeypatch.syspath_prepend(str(tmp_path))
    result = runner.invoke(main, ["compare", "--systems", "overlap_twice:Overlap,overlap_twice:Overlap",
                                  "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert ("--systems names overlap more than once. Fix: list each system once, or name each one: "
            "--systems 'first=SPEC,second=SPEC'") in result.stderr


# ----- the entry-point group --------------------------------------------------------------------

PLUGIN_MODULE = '''
from retrievers import ScoreRetriever


class Constant(ScoreRetriever):
    """Gives every document the same score (an installed plugin)."""

    def __init__(self, value: float = 1.0, label_me: str = "x"):
        self.value = value
        self.label_me = label_me

    def score(self, queries):
        import numpy as np
        return np.full((len(queries), len(self.corpus)), self.value)
'''


def install_fake_distribution(folder: Path, entry_points: str) -> None:
    """A distribution as pip leaves it: a dist-info folder whose entry_points.txt names our group."""
    info = folder / "retbench_demo_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: retbench-demo-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{registry.ENTRY_POINT_GROUP}]\n{entry_points}\n")


@pytest.fixture
def fresh_registry(monkeypatch):
    """The built-ins only, with entry points not yet read; restored after the test."""
    available()  # register the built-ins in the real registry first
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    monkeypatch.setattr(registry, "_BROKEN", {})
    monkeypatch.setattr(registry, "_entry_points_loaded", False)


def test_an_installed_plugin_is_found_through_the_entry_point_group(runner, tmp_path, monkeypatch,
                                                                     fresh_registry) -> None:
    write_module(tmp_path, "retbench_demo_plugin", PLUGIN_MODULE)
    install_fake_distribution(tmp_path, "constant = retbench_demo_plugin:Constant\n"
                                        "bm25 = retbench_demo_plugin:Constant")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert available()["constant"].__name__ == "Constant"
    assert available()["bm25"].__module__ == "retrievers.bm25"  # a plugin never shadows a built-in

    listing = runner.invoke(main, ["retrievers"])
    assert listing.exit_code == 0
    assert "constant(value: float = 1.0, label_me: str = 'x')" in listing.output
    assert "from retbench_demo_plugin:Constant" in listing.output

    result = runner.invoke(main, ["compare", "--systems", "bm25,constant(value=2)", "--out", str(tmp_path / "out"),
                                  *FAST])
    assert result.exit_code == 0, result.output
    assert summary_systems(tmp_path / "out") == ["bm25", "constant(value=2.0)"]


def test_a_broken_plugin_does_not_take_the_others_down(runner, tmp_path, monkeypatch, fresh_registry) -> None:
    write_module(tmp_path, "retbench_shaky_plugin", "import a_module_that_does_not_exist\n")
    install_fake_distribution(tmp_path, "shaky = retbench_shaky_plugin:Shaky")
    monkeypatch.syspath_prepend(str(tmp_path))

    listing = runner.invoke(main, ["retrievers"])
    assert listing.exit_code == 0
    assert listing.output.startswith("bm25(")
    assert "shaky  (broken plugin)" in listing.output
    assert "No module named 'a_module_that_does_not_exist'" in listing.output

    works = runner.invoke(main, ["compare", "--systems", "bm25", "--out", str(tmp_path / "a"), *FAST])
    assert works.exit_code == 0, works.output
    fails = runner.invoke(main, ["compare", "--systems", "shaky", "--out", str(tmp_path / "b")])
    assert fails.exit_code == 2
    assert "retriever plugin 'shaky' (retbench_shaky_plugin:Shaky) failed to load: ModuleNotFoundError" in fails.stderr


def test_register_refuses_a_name_taken_by_another_class(monkeypatch) -> None:
    from retrievers import Retriever, register

    available()
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))

    class Impostor(Retriever):
        name = "bm25"

        def search(self, queries, k):
            return {}

    with pytest.raises(ValueError, match="retriever name 'bm25' is taken by retrievers.bm25.BM25"):
        register(Impostor)
    assert register(available()["bm25"]) is available()["bm25"]  # the same class again is harmless

# ----- bench retrievers --------------------------------------------------------------------------

def test_bench_retrievers_lists_every_retriever_with_parameters_read_from_the_class(runner) -> None:
    result = runner.invoke(main, ["retrievers"])
    assert result.exit_code == 0
    lines = result.output.splitlines()
    names = [line.split("(")[0] for line in lines if not line.startswith(" ")]
    assert names == list(available())
    assert {"bm25", "lsa", "dense", "rrf", "weighted"} <= set(names)
    for name, cls in available().items():
        (line,) = [x for x in lines if x.startswith(f"{name}(")]
        for parameter, p in cls.parameters().items():
            assert f"{parameter}: " in line
            assert repr(p.default) in line
        first_words = " ".join(inspect.getdoc(cls).split()[:3])  # the summary is the docstring's first sentence
        assert f"    {first_words}" in [line[:4 + len(first_words)] for line in lines]
    assert "rrf(*children, k: int = 60, depth: int | None = None)" in lines


# ----- the built-in table ------------------------------------------------------------------------

def _modules_after(code: str) -> list[str]:
    """The ``retrievers.*`` modules a fresh interpreter holds after running ``code``."""
    probe = code + "\nimport sys\nprint(' '.join(sorted(m for m in sys.modules if m.startswith('retrievers.'))))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, check=True)
    return done.stdout.splitlines()[-1].split()  # the last line: what the code printed comes before


def test_a_built_in_is_imported_only_when_its_name_is_asked_for() -> None:
    """The registry imports no retriever module; naming bm25 imports bm25's module, not the others."""
    assert not {"retrievers.bm25", "retrievers.lsa", "retrievers.fusion", "retrievers.dense"} & \
        set(_modules_after("import retrievers.registry"))
    after_bm25 = _modules_after("from retrievers.registry import get_class\nget_class('bm25')")
    assert "retrievers.bm25" in after_bm25
    assert not {"retrievers.lsa", "retrievers.fusion", "retrievers.dense"} & set(after_bm25)


def test_bench_evaluate_imports_no_retriever(tmp_path: Path) -> None:
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n", encoding="utf-8")
    (tmp_path / "run.trec").write_text("q1 Q0 d1 1 2.0 mine\n", encoding="utf-8")
    code = ("from harness.cli import main\n"
            f"main(['evaluate', '--qrels', {str(tmp_path / 'qrels.txt')!r}, {str(tmp_path / 'run.trec')!r}, "
            "'--metrics', 'ndcg@10'], standalone_mode=False)")
    assert _modules_after(code) == []


def test_every_built_in_resolves_to_a_class_named_by_its_key() -> None:
    for name, target in registry.BUILTINS.items():
        cls = registry.get_class(name)
        assert registry.spec_name(cls) == target
        assert cls.name == name
        assert registry.is_registered(cls)
    assert set(registry.BUILTINS) <= set(registry.names())


def test_a_subclass_loaded_after_its_parent_keeps_its_own_name(runner, tmp_path, monkeypatch) -> None:
    write_module(tmp_path, "my_module_family", USER_MODULE + """

class Child(MyRetriever):
    pass
""")
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "out"
    result = runner.invoke(main, ["compare", "--systems", "my_module_family:MyRetriever,my_module_family:Child",
                                  "--metrics", "mrr", "--out", str(out), *FAST])
    assert result.exit_code == 0, result.output
    assert summary_systems(out) == ["MyRetriever", "Child"]
