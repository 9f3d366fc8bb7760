"""Every entry point honours every field of every option group it takes, or refuses it in one line.

For each entry point (``harness.compare``, ``compare_suite``, ``tune``, ``gate``, and ``bench
compare``, ``bench tune`` and ``bench gate``) and each field of each group it takes, a value other
than the default either changes what the entry point records or does (its results folder, its
verdict, the hook it calls, the cache it fills, the engine it runs on) or is refused with a
one-line :class:`~corpora.RetbenchError`. A field an entry point dropped silently (as ``tune``
once dropped ``Scoring(unjudged="condensed")``) leaves both unchanged, and fails here.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from corpora import Qrels, load_dataset
from harness import compare, gate, tune
from harness.cli import main
from harness.cli.compare import command as compare_command
from harness.cli.declared import flags_of
from harness.cli.gate import command as gate_command
from harness.cli.tune import command as tune_command
from harness.core.options import Loading, Readings, RunOptions, Scoring, Statistics
from harness.engines import LocalEngine
from harness.errors import RetbenchError
from harness.gating.sides import GateSide
from harness.suite.run import compare_suite

GROUPS = {"scoring": Scoring, "statistics": Statistics, "readings": Readings, "loading": Loading, "run": RunOptions}
SYSTEMS = ["bm25", "lsa(dims=5)"]
METRICS = ["ndcg@5", "mrr"]
#: What the entry points did besides what they return: the hook's calls, the engine's runs, the cache's files.
TRACE: list[object] = []


class RecordingEngine(LocalEngine):
    """The local engine under another name, so a run on it shows in the manifest's ``engine``."""

    name = "recording"

    @contextlib.contextmanager
    def running(self, corpus, origin) -> Iterator[Any]:  # noqa: ANN001
        TRACE.append("engine")
        with super().running(corpus, origin) as run:
            yield run


def _hook(dataset: object) -> None:
    TRACE.append(("loaded", getattr(dataset, "name", None)))


def _collection(folder: Path, seed: int, queries: int = 14) -> Path:
    """A small collection of random words where bm25 and lsa disagree: 40 documents, ``queries``
    queries of two words, each judged on the documents that hold its words (2 both, 1 one of them)."""
    rng = np.random.default_rng(seed)
    words = [f"w{seed}x{i}" for i in range(30)]
    docs = [" ".join(rng.choice(words, 6)) for _ in range(40)]
    folder.mkdir()
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"id": f"d{j}", "text": text}) + "\n"
                                                 for j, text in enumerate(docs)))
    asked = [rng.choice(words, 2, replace=False) for _ in range(queries)]
    (folder / "queries.jsonl").write_text("".join(json.dumps({"id": f"q{j}", "text": " ".join(pair)}) + "\n"
                                                  for j, pair in enumerate(asked)))
    lines = [f"q{j}\td{k}\t{sum(w in text.split() for w in pair)}\n" for j, pair in enumerate(asked)
             for k, text in enumerate(docs) if any(w in text.split() for w in pair)]
    (folder / "qrels.tsv").write_text("".join(lines))
    return folder


@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Files the values name: facets side files over the article's queries and over the small
    collections', two small collections for a suite, one whose judgments mostly name unknown documents."""
    root = tmp_path_factory.mktemp("groups")
    for name, ids in (("facets-article", load_dataset("article").queries.ids), ("facets-q", [f"q{j}" for j in range(14)])):
        (root / f"{name}.csv").write_text("query_id,kind\n" + "".join(f"{q},{'ab'[i % 2]}\n" for i, q in enumerate(ids)))
    _collection(root / "one", 1)
    _collection(root / "two", 2)
    unmatched = root / "unmatched"  # 7 of its 10 judgments name documents it does not hold
    unmatched.mkdir()
    (unmatched / "corpus.jsonl").write_text("".join(f'{{"id": "d{j}", "text": "document {j} word{j}"}}\n'
                                                    for j in range(1, 6)))
    (unmatched / "queries.jsonl").write_text("".join(f'{{"id": "q{j}", "text": "word{j}"}}\n' for j in range(1, 4)))
    judged = [f"q{j}\td{j}" for j in range(1, 4)] + [f"q1\tx{j}" for j in range(7)]
    (unmatched / "qrels.tsv").write_text("".join(f"{line}\t1\n" for line in judged))
    return {"root": root, "one": root / "one", "two": root / "two", "unmatched": unmatched}


def values(place: dict[str, Path], entry: str) -> dict[str, dict[str, Any]]:
    """Group -> field -> a value other than its default, valid on its own (an entry point may still
    refuse it: a split the collection does not have, a time limit of a nanosecond)."""
    facets = place["root"] / ("facets-q.csv" if entry == "suite" else "facets-article.csv")
    return {
        "scoring": {"depth": 50, "rel_threshold": 2, "analyzer": "english", "unjudged": "condensed"},
        "statistics": {"bootstrap_samples": 500, "seed": 1, "confidence": 0.9, "permutations": 500, "family": "all"},
        "readings": {"fail_rank": 1, "facets": [], "risk_metric": "mrr", "confidence_from": "margin",
                     "retrieval_k": 5},
        "loading": {"format": "trec", "split": "dev", "allow_unmatched_judgments": True, "facets_file": str(facets)},
        "run": {"cache": str(place["root"] / f"cache-{entry}"), "timeout": 1e-9, "engine": RecordingEngine(),
                "on_loaded": _hook, "latency_queries": 0, "latency_rounds": 1},
    }


#: (entry point, field) -> why the value shows only in the record of the run (its manifest), not in
#: what it computed, on the data of these tests.
RECORD_ONLY = {
    ("compare", "statistics.permutations"): "14 queries: the randomisation test is exact",
    ("compare", "readings.facets"): "the article's queries have no facets: none is rolled up either way",
    ("compare", "loading.allow_unmatched_judgments"): "every judgment of the article is matched",
    ("suite", "loading.allow_unmatched_judgments"): "every judgment of the collections is matched",
    ("suite", "readings.facets"): "the collections' queries have no facets",
    ("suite", "scoring.depth"): "no ranking of 40 documents is cut by a depth of 50",
    ("compare", "scoring.depth"): "no ranking of 28 documents is cut by a depth of 50",
    ("tune", "scoring.depth"): "the metric reads the top 5",
    ("tune", "scoring.rel_threshold"): "nDCG reads grades, and every article query has a grade-2 judgment",
}


def test_every_value_here_is_another_than_the_default(place) -> None:
    for group, fields in values(place, "x").items():
        declared = {f.name: f.default for f in dataclasses.fields(GROUPS[group])}
        assert set(fields) == set(declared), group  # every field of every group is probed
        for name, value in fields.items():
            assert value != declared[name], (group, name)


# ----- what an entry point did ------------------------------------------------------------------------

_RUN_ID = re.compile(r"\d{8}-\d{6}-[\w.+-]*?-[0-9a-f]{8}")
#: What changes from run to run, and the hashes of the configuration (which any recorded option moves:
#: a field must show in what the run wrote or did, not only in the record of what it was asked).
_VOLATILE = {"run_id", "time", "command_line", "fit_seconds", "search_seconds", "seconds", "files",
             "manifest_sha256", "versions", "configuration"}
_RESULT_ID = re.compile(r'"resultId": "[0-9a-f]+"')


def _stripped(value: object) -> object:
    if isinstance(value, dict):
        return {k: _stripped(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, list):
        return [_stripped(v) for v in value]
    return _RUN_ID.sub("RUN", value) if isinstance(value, str) else value


#: The cost reading's files and tune's, which hold this run's times -> the columns that are not measurements.
MEASURED = {"efficiency.csv": ("system", "includes", "n_documents", "fit_from_cache", "n_queries", "latency_queries",
                               "latency_rounds"),
            "latency_comparisons.csv": ("system_a", "system_b", "n_queries"),
            "suite_efficiency.csv": ("collection", "system"),
            "tune_cost.csv": ("point", "system", "basis", "fit_from_cache", "n_queries")}


def _measured_cells(text: str, kept: tuple[str, ...]) -> list[dict[str, str]]:
    """A measured file's rows: the columns ``kept`` as they are, every other cell "measured" or "" (unknown)."""
    import csv
    import io

    return [{k: v if k in kept else ("measured" if v else "") for k, v in row.items()}
            for row in csv.DictReader(io.StringIO(text))]


def folder_snapshot(folder: Path) -> dict[str, dict[str, object]]:
    """A results folder's files, but what differs from run to run (run ids, times, timings): ``data``
    (what it computed: every file but the manifests and the reports) and ``record`` (those)."""
    snapshot: dict[str, dict[str, object]] = {"data": {}, "record": {}}
    for path in sorted(folder.rglob("*")):
        if not path.is_file():
            continue
        relative = _RUN_ID.sub("RUN", path.relative_to(folder).as_posix())
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.name in MEASURED:  # times of this run: what was measured, not the measurements
            snapshot["data"][relative] = _measured_cells(text, MEASURED[path.name])
            continue
        kind = "record" if path.suffix == ".json" or path.stem == "report" else "data"
        snapshot[kind][relative] = (_stripped(json.loads(text)) if path.suffix == ".json"
                                    else _RESULT_ID.sub("", _RUN_ID.sub("RUN", text)))
        if path.name == "manifest.json" and "summary" in json.loads(text):  # a search's estimate and intervals
            snapshot["data"][relative + "#summary"] = json.loads(text)["summary"]
    return snapshot


def outcome(run: Callable[[], object], cache: Path | None = None) -> tuple[str, object]:
    """("refused", the error) or ("did", what it recorded and the trace of what it did)."""
    TRACE.clear()
    try:
        recorded = run()
    except RetbenchError as error:
        message = str(error)
        assert "\n" not in message and message, f"not one line: {message!r}"
        return "refused", message
    if cache is not None and cache.exists():
        TRACE.append(sorted(p.name for p in cache.rglob("*")))
    return "did", (recorded, list(TRACE))


def assert_honoured(default: tuple[str, object], given: tuple[str, object], where: tuple[str, str]) -> None:
    """The value was refused in one line, or the entry point computed or did something else with it
    (or, where :data:`RECORD_ONLY` says why nothing else could differ, recorded something else)."""
    if given[0] == "refused":
        return
    assert default[0] == "did", default
    (snapshot, trace), (default_snapshot, default_trace) = given[1], default[1]
    if trace != default_trace:
        return
    if where in RECORD_ONLY:
        assert snapshot["record"] != default_snapshot["record"], f"{where}: not even recorded"
        assert snapshot["data"] == default_snapshot["data"], f"{where}: computes something else now: " \
                                                             "take it out of RECORD_ONLY"
    else:
        assert snapshot["data"] != default_snapshot["data"], f"{where}: the value changed nothing computed"


def cases(place: dict[str, Path], entry: str, groups: tuple[str, ...]) -> list[tuple[str, str, Any]]:
    found = values(place, entry)
    return [(group, name, value) for group in groups for name, value in found[group].items()]


def _ids(case: tuple[str, str, Any]) -> str:
    return f"{case[0]}.{case[1]}"


ALL = ("scoring", "statistics", "readings", "loading", "run")
CASE_IDS = [f"{g}.{f.name}" for g in ALL for f in dataclasses.fields(GROUPS[g])]
TUNE_IDS = [i for i in CASE_IDS if not i.startswith("readings.")]


def _probe(place: dict[str, Path], entry: str, case_id: str) -> tuple[str, str, Any]:
    group, name = case_id.split(".")
    return group, name, values(place, entry)[group][name]


# ----- harness.compare ------------------------------------------------------------------------------


def _written(tmp: Path, make: Callable[[], Any]) -> Callable[[], object]:
    """A call of ``make`` whose result is written to a new folder under ``tmp``: that folder's snapshot."""
    def run() -> object:
        out = tmp / f"out-{len(list(tmp.glob('out-*')))}"
        return folder_snapshot(make().write(out, command_line=[]))
    return run


def _did(run: Callable[[], object]) -> tuple[str, object]:
    """The outcome of ``run`` with the defaults, which must be done (it is what every value is held against)."""
    done = outcome(run)
    assert done[0] == "did", done
    return done


def _compared(tmp: Path, **groups: object) -> Callable[[], object]:
    return _written(tmp, lambda: compare(SYSTEMS, "article", METRICS, **groups))


@pytest.fixture(scope="module")
def compared_by_default(tmp_path_factory) -> tuple[str, object]:
    return _did(_compared(tmp_path_factory.mktemp("compare-default")))


@pytest.mark.parametrize("case_id", CASE_IDS)
def test_compare_honours_or_refuses_every_field(case_id, place, compared_by_default, tmp_path) -> None:
    group, name, value = _probe(place, "compare", case_id)
    given = outcome(_compared(tmp_path, **{group: GROUPS[group](**{name: value})}),
                    Path(value) if name == "cache" else None)
    assert_honoured(compared_by_default, given, ("compare", case_id))


# ----- harness.compare_suite -----------------------------------------------------------------------------


def _suite(place: dict[str, Path], tmp: Path, **groups: object) -> Callable[[], object]:
    # the suite's own files apart: its macro statistics must follow the group too
    return _written(tmp, lambda: compare_suite(SYSTEMS, [str(place["one"]), str(place["two"])], METRICS, **groups))


@pytest.fixture(scope="module")
def suite_by_default(place, tmp_path_factory) -> tuple[str, object]:
    return _did(_suite(place, tmp_path_factory.mktemp("suite-default")))


@pytest.mark.parametrize("case_id", CASE_IDS)
def test_compare_suite_honours_or_refuses_every_field(case_id, place, suite_by_default, tmp_path) -> None:
    group, name, value = _probe(place, "suite", case_id)
    given = outcome(_suite(place, tmp_path, **{group: GROUPS[group](**{name: value})}),
                    Path(value) if name == "cache" else None)
    assert_honoured(suite_by_default, given, ("suite", case_id))
    if group == "statistics" and given[0] == "did":  # the macro readings follow it, not only each collection's

        def suite_level(done: tuple[str, object]) -> dict[str, object]:
            return {k: v for k, v in done[1][0]["data"].items() if not k.startswith("collections/")}

        assert suite_level(given) != suite_level(suite_by_default), f"the macro readings dropped statistics.{name}"


# ----- harness.tune -------------------------------------------------------------------------------------------


def _tuned(tmp: Path, dataset: str = "article", **keywords: object) -> Callable[[], object]:
    return _written(tmp, lambda: tune("bm25(k1=0.9|1.2)", dataset, "ndcg@5", folds=2, **keywords))


@pytest.fixture(scope="module")
def tuned_by_default(tmp_path_factory) -> tuple[str, object]:
    return _did(_tuned(tmp_path_factory.mktemp("tune-default")))


@pytest.mark.parametrize("case_id", TUNE_IDS)
def test_tune_honours_or_refuses_every_field(case_id, place, tuned_by_default, tmp_path) -> None:
    group, name, value = _probe(place, "tune", case_id)
    default = tuned_by_default
    if name == "allow_unmatched_judgments":  # shown where it matters: a corpus of unmatched judgments
        default = outcome(_tuned(tmp_path, str(place["unmatched"])))
        given = outcome(_tuned(tmp_path, str(place["unmatched"]), loading=Loading(allow_unmatched_judgments=True)))
        assert (default[0], given[0]) == ("refused", "did"), given
    elif name == "facets_file":  # a search reads facets to stratify its folds by
        default = outcome(_tuned(tmp_path, stratify="kind"))
        given = outcome(_tuned(tmp_path, stratify="kind", loading=Loading(facets_file=value)))
        assert (default[0], given[0]) == ("refused", "did"), given
    else:
        given = outcome(_tuned(tmp_path, **{group: GROUPS[group](**{name: value})}),
                        Path(value) if name == "cache" else None)
        assert_honoured(default, given, ("tune", case_id))


def test_tune_refuses_the_fields_it_cannot_honour(place) -> None:
    """What a search cannot do is refused in one line, not ignored."""
    for group, name in (("scoring", "unjudged"), ("statistics", "permutations"), ("statistics", "family"),
                        ("run", "timeout"), ("run", "engine"), ("run", "latency_queries"),
                        ("run", "latency_rounds")):
        value = values(place, "tune")[group][name]
        kind, message = outcome(_tuned(place["root"], **{group: GROUPS[group](**{name: value})}))
        assert kind == "refused", (group, name)


# ----- harness.gate -------------------------------------------------------------------------------------------


def _sides() -> tuple[GateSide, GateSide]:
    rng = np.random.default_rng(7)
    ids = [f"q{i}" for i in range(30)]
    qrels = Qrels({q: {"d": 1} for q in ids})
    before = rng.uniform(0.2, 0.8, len(ids))
    after = np.clip(before + rng.normal(-0.02, 0.05, len(ids)), 0, 1)

    def side(name: str, column: np.ndarray) -> GateSide:
        import pandas as pd

        frame = pd.DataFrame({"mrr": column}, index=pd.Index(ids, name="query_id"))
        return GateSide(name, name, ids, qrels, stored=frame, values_from="a frame")

    return side("before", before), side("after", after)


def _gated(**groups: object) -> Callable[[], object]:
    def run() -> object:
        before, after = _sides()
        return {"data": {"verdicts": repr(gate(before, after, "mrr", **groups))}, "record": {}}
    return run


@pytest.mark.parametrize("case_id", [i for i in CASE_IDS if i.startswith("statistics.")])
def test_gate_honours_or_refuses_every_field(case_id, place) -> None:
    group, name, value = _probe(place, "gate", case_id)
    assert_honoured(outcome(_gated()), outcome(_gated(**{group: GROUPS[group](**{name: value})})),
                    ("gate", case_id))


# ----- the commands: each option declared by a group reaches the group the library gets -------------------


class _Stop(Exception):
    """Raised by the stand-in for the library call once it has heard the groups."""


def _spy(heard: dict[str, object]) -> Callable[..., object]:
    def stand_in(*args: object, **keywords: object) -> object:
        heard.update(keywords)
        raise _Stop
    return stand_in


def _flag_arguments(flag: str, value: object) -> list[str]:
    if value is True:
        return [flag]
    if isinstance(value, list):
        return [flag, ",".join(value)]
    return [flag, str(value)]


def _as_given(value: object) -> object:
    """What the command passes on for ``value`` typed as a flag."""
    return ",".join(value) if isinstance(value, list) else value


def _cli_cases(command, groups: tuple[str, ...], place: dict[str, Path]) -> list[tuple[str, str, str, Any]]:
    flags = flags_of(command)
    found = values(place, "cli")
    return [(group, name, flags[name], value) for group in groups for name, value in found[group].items()
            if name in flags and not (group == "run" and name in ("cache", "engine", "on_loaded"))]


def _assert_reached(outcome_of, heard: dict[str, object], group: str, name: str, value: object) -> None:
    if outcome_of.exit_code == 2:  # refused: one error line
        lines = [line for line in outcome_of.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("error: "), outcome_of.stderr
        return
    assert isinstance(outcome_of.exception, _Stop), outcome_of.output
    received = getattr(heard[group], name)
    assert str(received) == str(_as_given(value)), (group, name, received)


def test_bench_compare_has_an_option_for_every_field_of_its_groups() -> None:
    flags = flags_of(compare_command)
    for group in ("scoring", "statistics", "readings", "loading"):
        for field in dataclasses.fields(GROUPS[group]):
            assert field.name in flags, f"bench compare has no option for {group}.{field.name}"
    assert "timeout" in flags


@pytest.mark.parametrize("case_id", [i for i in CASE_IDS if not i.startswith("run.") or i == "run.timeout"])
def test_bench_compare_passes_every_option_to_its_group(case_id, place, monkeypatch, tmp_path) -> None:
    group, name = case_id.split(".")
    ((_, _, flag, value),) = [c for c in _cli_cases(compare_command, (group,), place) if c[1] == name]
    heard: dict[str, object] = {}
    monkeypatch.setattr("harness.cli.compare.compare", _spy(heard))
    ran = CliRunner().invoke(main, ["compare", "--systems", ",".join(SYSTEMS), "--metrics", ",".join(METRICS),
                                    "--out", str(tmp_path / "out"), *_flag_arguments(flag, value)])
    _assert_reached(ran, heard, group, name, value)


TUNE_FLAGS = [f"{g}.{n}" for g in ALL for n in values({"root": Path("."), "facets": Path(".")}, "x")[g]
              if n in flags_of(tune_command) and g in ("scoring", "statistics", "loading")]


@pytest.mark.parametrize("case_id", TUNE_FLAGS)
def test_bench_tune_passes_every_option_to_its_group(case_id, place, monkeypatch, tmp_path) -> None:
    group, name = case_id.split(".")
    ((_, _, flag, value),) = [c for c in _cli_cases(tune_command, (group,), place) if c[1] == name]
    heard: dict[str, object] = {}
    monkeypatch.setattr("harness.cli.tune.tune", _spy(heard))
    ran = CliRunner().invoke(main, ["tune", "bm25(k1=0.9|1.2)", "--out", str(tmp_path / "out"),
                                    *_flag_arguments(flag, value)])
    _assert_reached(ran, heard, group, name, value)


def test_bench_tune_has_an_option_for_each_field_tune_honours() -> None:
    flags = flags_of(tune_command)
    for group, names in (("scoring", ("depth", "rel_threshold", "analyzer")),
                         ("statistics", ("bootstrap_samples", "seed", "confidence")),
                         ("loading", ("format", "split", "allow_unmatched_judgments", "facets_file"))):
        for name in names:
            assert name in flags, f"bench tune has no option for {group}.{name}"


@pytest.mark.parametrize("name", ["bootstrap_samples", "seed", "confidence", "permutations"])
def test_bench_gate_passes_every_statistics_option(name, place, monkeypatch, tmp_path) -> None:
    """bench gate's statistics reach harness.gate (its family is the gated metrics: no option)."""
    (tmp_path / "qrels.txt").write_text("".join(f"q{i} 0 d{i} 1\n" for i in range(12)))
    for side in ("a", "b"):
        (tmp_path / f"{side}.trec").write_text("".join(f"q{i} Q0 d{i} 1 1.0 {side}\n" for i in range(12)))
    heard: dict[str, object] = {}
    monkeypatch.setattr("harness.cli.gate.gate", _spy(heard))
    value = values(place, "gate")["statistics"][name]
    ran = CliRunner().invoke(main, ["gate", str(tmp_path / "a.trec"), str(tmp_path / "b.trec"), "--metric", "mrr",
                                    "--qrels", str(tmp_path / "qrels.txt"),
                                    *_flag_arguments(flags_of(gate_command)[name], value)])
    _assert_reached(ran, heard, "statistics", name, value)
    assert "family" not in flags_of(gate_command)


def test_a_time_limit_that_runs_out_at_once_leaves_no_timer_behind() -> None:
    """``RunOptions(timeout=1e-9)`` is refused as a timed-out step, and leaves neither the repeating
    timer nor its handler behind (an alarm that fires before the timer is set returns used to)."""
    import signal

    from harness.engines.deadline import StepTimedOut, step_deadline

    handler = signal.getsignal(signal.SIGALRM)
    timed_out = 0
    for _ in range(300):
        try:
            with step_deadline(1e-9, "mine", "fit"):
                sum(range(2000))
        except StepTimedOut:
            timed_out += 1
    assert timed_out > 0
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) is handler


@pytest.mark.parametrize(("group", "name"), [("scoring", "depth"), ("scoring", "analyzer"), ("loading", "format")])
def test_bench_gate_passes_the_candidates_options_to_its_groups(group, name, place, monkeypatch, tmp_path) -> None:
    """A candidate run now (--corpus, --systems) gets --depth, --analyzer and --corpus-format in its groups."""
    baseline = compare(["bm25"], "article", ["mrr"], statistics=Statistics(bootstrap_samples=100)).write(tmp_path)
    heard: dict[str, object] = {}
    monkeypatch.setattr("harness.comparison.compare", _spy(heard))
    value = values(place, "gate")[group][name]
    ran = CliRunner().invoke(main, ["gate", str(baseline), "--corpus", "article", "--systems", "bm25", "--metric",
                                    "mrr", *_flag_arguments(flags_of(gate_command)[name], value)])
    _assert_reached(ran, heard, group, name, value)


# ----- declared once ---------------------------------------------------------------------------------------


def test_read_comparison_takes_the_groups_whole() -> None:
    import inspect

    from harness.core.readings import read_comparison

    assert len(inspect.signature(read_comparison).parameters) <= 6


def test_no_default_of_the_statistics_is_typed_twice() -> None:
    """No parameter or field default in the harness repeats the resamples, the confidence, the
    permutations or the level the tests run at (alpha, derived from the confidence) as a number:
    each is :mod:`harness.core.options`' constant."""
    import ast

    from harness.core.options import ALPHA, BOOTSTRAP_SAMPLES, CONFIDENCE, PERMUTATIONS

    declared = {BOOTSTRAP_SAMPLES, CONFIDENCE, PERMUTATIONS, round(ALPHA, 12)}
    root = Path(__file__).resolve().parents[1] / "harness"
    offenders = []
    for path in sorted(root.rglob("*.py")):
        if path.name == "options.py" and path.parent.name == "core":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                defaults = [*node.args.defaults, *[d for d in node.args.kw_defaults if d is not None]]
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                defaults = [node.value]
            else:
                continue
            offenders += [f"{path.relative_to(root)}:{d.lineno}" for d in defaults
                          if isinstance(d, ast.Constant) and not isinstance(d.value, bool)
                          and isinstance(d.value, (int, float)) and d.value in declared]
    assert offenders == []
