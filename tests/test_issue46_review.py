"""Review of issue 46's statistics: what its own tests could not see.

``bench agree --ppi --stratify`` in a fresh interpreter (the tests that ran it in-process had the
readings registered by an earlier compare, so the metrics card's ``query_facets`` table was there)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main

TOPICS = {"billing": ["q01", "q02", "q07", "q11", "q14"], "data": ["q03", "q05", "q10", "q13"],
          "product": ["q04", "q06", "q08", "q09", "q12"]}


@pytest.fixture(scope="module")
def faceted_folder(tmp_path_factory) -> tuple[Path, Path]:
    from click.testing import CliRunner

    root = tmp_path_factory.mktemp("agree")
    facets = root / "topics.csv"
    facets.write_text("query_id,topic\n" + "".join(f"{q},{topic}\n" for topic, qs in TOPICS.items() for q in qs))
    done = CliRunner().invoke(main, ["compare", "--systems", "bm25,lsa", "--metrics", "ndcg@10", "--facets-file",
                                     str(facets), "--bootstrap-samples", "50", "--out", str(root / "out"), "--quiet"])
    assert done.exit_code == 0, done.output
    folder = next(p for p in (root / "out").iterdir() if p.is_dir())
    lines = (folder / "qrels.txt").read_text().splitlines()
    human = [line for line in lines if line.split()[0] in ("q01", "q02", "q03", "q05", "q04", "q06")]
    machine = [" ".join([*line.split()[:3], str(max(0, int(line.split()[3]) - (k % 2)))]) for k, line in enumerate(lines)]
    (root / "a.txt").write_text("\n".join(human) + "\n")
    (root / "b.txt").write_text("\n".join(machine) + "\n")
    return root, folder


def _agree_in_a_fresh_interpreter(fresh_python, root: Path, folder: Path, *extra: str) -> tuple[int, str]:
    args = ["agree", str(root / "a.txt"), str(root / "b.txt"), "--results", str(folder), "--ppi", *extra]
    out = fresh_python("import json; from click.testing import CliRunner; from harness.cli import main; "
                       f"r = CliRunner().invoke(main, {args!r}); print(json.dumps([r.exit_code, r.output]))")
    code, output = json.loads(out.splitlines()[-1])
    return code, output


def test_stratify_reads_the_facets_in_a_fresh_interpreter(fresh_python, faceted_folder) -> None:
    root, folder = faceted_folder
    code, output = _agree_in_a_fresh_interpreter(fresh_python, root, folder, "--stratify", "topic")
    assert code == 0, output
    assert "stratified by topic" in output and "λ by stratum: billing " in output
    code, output = _agree_in_a_fresh_interpreter(fresh_python, root, folder, "--stratify", "colour")
    assert code == 2 and "no query facet 'colour' (it has: topic)" in output and "Fix:" in output


def test_the_pool_orders_unknown_is_the_width_of_the_range_the_difference_can_take() -> None:
    """Every grading of the unjudged documents A or B ranks, DCG computed from scratch: the mean
    difference's values span exactly ``unknown`` (its width), and no single grading moves it that far
    from the all-irrelevant start when the pairs pull both ways."""
    import itertools
    import math

    from corpora import Run
    from harness.judgments.pool import pool

    def run(rankings: dict[str, list[str]]) -> Run:
        return Run.from_mapping({q: [(d, float(len(ds) - i)) for i, d in enumerate(ds)] for q, ds in rankings.items()})

    runs = {"A": run({"q1": ["a", "b", "c"], "q2": ["x", "y", "z"]}),
            "B": run({"q1": ["a", "c", "b"], "q2": ["w", "y", "x"]})}
    docs = sorted({(q, d) for r in runs.values() for q in ("q1", "q2") for d in r.ranking(q)[:3]})

    def mean_difference(relevant: set[tuple[str, str]]) -> float:
        def dcg(label: str, q: str) -> float:
            return sum(1.0 / math.log2(rank + 1) for rank, d in enumerate(runs[label].ranking(q)[:3], start=1)
                       if (q, d) in relevant)
        return sum(dcg("A", q) - dcg("B", q) for q in ("q1", "q2")) / 2

    values = [mean_difference({p for p, on in zip(docs, bits) if on})
              for bits in itertools.product((0, 1), repeat=len(docs))]
    unknown = pool(runs, {}, ["q1", "q2"], 3, "pair:A,B").unknown
    assert max(values) - min(values) == pytest.approx(unknown, abs=1e-12)
    assert max(abs(v - mean_difference(set())) for v in values) < unknown - 0.1


def test_the_ppi_options_without_ppi_are_refused_before_any_work(runner, faceted_folder) -> None:
    root, folder = faceted_folder
    for extra, flag in ((["--ppi-method", "ppi"], "--ppi-method"), (["--stratify", "topic"], "--stratify")):
        done = runner.invoke(main, ["agree", str(root / "a.txt"), str(root / "b.txt"), "--results", str(folder),
                                    *extra])
        assert done.exit_code == 2 and f"Fix: add --ppi, or leave {flag} out" in done.output, done.output
        assert "kappa" not in done.output  # refused before the agreement is computed and printed


def test_a_pool_order_that_is_not_a_string_is_a_parameter_error() -> None:
    from corpora import ParameterError, Run
    from harness.judgments.pool import pool

    runs = {"A": Run.from_mapping({"q": [("x", 1.0)]}), "B": Run.from_mapping({"q": [("y", 1.0)]})}
    for wrong in (None, ("A", "B")):
        with pytest.raises(ParameterError, match="'order' parameter of pool must be a str"):
            pool(runs, {}, ["q"], 2, wrong)  # type: ignore[arg-type]
