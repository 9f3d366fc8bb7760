"""Judgments only (issue 43, items 4 and 7): run files compared on a qrels file, with no document texts.

The run files are written here by hand (plain string formatting, not retbench), the numbers checked
query by query against pytrec_eval on the same files; the results folder is read by ``bench
report``, ``bench gate``, ``bench pool`` and the store ``bench serve`` answers from; what needs the
texts is stated as unavailable in exact words. ``bench gate`` and ``bench evaluate`` take the run
file formats (TREC, MS MARCO TSV, gzipped) through the readers ``run(PATH)`` uses.
"""

from __future__ import annotations

import csv
import gzip
import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from corpora import Qrels
from corpora.judgments_only import IDS_AS_TEXTS, TextlessCorpus, judgments_only, load_judgments_only
from harness.cli import main
from harness.core.readings import failure_checks
from harness.core.diagnosis import NOT_RETRIEVED, TEXTLESS_CATEGORIES, unavailable_without_texts

METRICS = ["ndcg_cut_10", "map", "recip_rank", "P_10", "recall_100", "Rprec", "bpref"]
N_QUERIES = 14


def _write_collection(root: Path) -> dict[str, Path]:
    """A qrels file, a queries CSV, a facets side file and three TREC run files, by hand: graded
    judgments (some queries with none relevant, one judged query no run answers), scores with ties
    (exact in float and double, so every reading ranks them alike), documents nobody judged."""
    rng = random.Random(43)
    docs = [f"D{j:03d}" for j in range(40)]
    qrels_lines, judged = [], {}
    for q in range(1, N_QUERIES + 1):
        chosen = rng.sample(docs, 8)
        grades = [rng.choice([0, 0, 1, 2, 3]) for _ in chosen]
        if q == 5:
            grades = [0] * len(chosen)  # no relevant judgment: excluded from the means
        judged[str(q)] = dict(zip(chosen, grades))
        qrels_lines += [f"{q} 0 {d} {g}" for d, g in zip(chosen, grades)]
    paths = {"qrels": root / "judged.qrels"}
    paths["qrels"].write_text("\n".join(qrels_lines) + "\n")
    paths["queries"] = root / "queries.csv"
    paths["queries"].write_text("id,text\n" + "".join(f"{q},query number {q}\n" for q in range(1, N_QUERIES + 1)))
    paths["facets"] = root / "facets.csv"
    paths["facets"].write_text("query_id,kind\n" + "".join(f"{q},{'short' if q % 2 else 'long'}\n"
                                                           for q in range(1, N_QUERIES + 1)))
    for name in ("alpha", "beta", "gamma"):
        lines = []
        for q in range(1, N_QUERIES + 1):
            if name == "gamma" and q == 7:
                continue  # a query the run lacks: it scores 0, as trec_eval -c counts it
            ranked = rng.sample(docs, 25)
            for rank, d in enumerate(ranked, 1):
                score = float(rng.randint(0, 12)) / 2  # ties: trec_eval breaks them by doc id descending
                lines.append(f"{q} Q0 {d} {rank} {score} {name}")
        rng.shuffle(lines)  # the line order does not matter to trec_eval
        paths[name] = root / f"{name}.trec"
        paths[name].write_text("\n".join(lines) + "\n")
    return paths


@pytest.fixture(scope="module")
def collection(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return _write_collection(tmp_path_factory.mktemp("qrels_only"))


def _compare(paths: dict[str, Path], out: Path, *names: str, extra: tuple[str, ...] = ()) -> Path:
    systems = ",".join(f"run({paths[n]})" for n in names)
    result = CliRunner().invoke(main, ["compare", "--qrels", str(paths["qrels"]), "--queries", str(paths["queries"]),
                                       "--systems", systems, "--metrics", ",".join(METRICS), "--out", str(out),
                                       "--bootstrap-samples", "500", "--no-cache", "-q", *extra])
    assert result.exit_code == 0, result.output
    (folder,) = [p for p in out.iterdir() if not p.name.startswith(".")]
    return folder


@pytest.fixture(scope="module")
def folder(collection: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _compare(collection, tmp_path_factory.mktemp("out"), "alpha", "beta", "gamma",
                    extra=("--facets-file", str(collection["facets"])))


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_means_equal_pytrec_eval_query_by_query(collection: dict[str, Path], folder: Path) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec_eval is in the test extra")
    qrels = pytrec_eval.parse_qrel(collection["qrels"].open())
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(METRICS))
    per_query = _rows(folder / "per_query.csv")
    counted = {q for q, docs in qrels.items() if any(g >= 1 for g in docs.values())}
    for system in ("alpha", "beta", "gamma"):
        expected = evaluator.evaluate(pytrec_eval.parse_run(collection[system].open()))
        rows = {r["query_id"]: r for r in per_query if r["system"] == system}
        assert set(rows) == counted  # every query with a relevant judgment; q5 (none relevant) excluded
        for q, row in rows.items():
            for metric in METRICS:
                want = expected[q][metric] if q in expected else 0.0  # a query the run lacks scores 0
                assert float(row[metric]) == pytest.approx(want, abs=1e-12), (system, q, metric)
        summary = {r["system"]: r for r in _rows(folder / "summary.csv")}[system]
        for metric in METRICS:
            mean = sum(expected[q][metric] if q in expected else 0.0 for q in counted) / len(counted)
            assert float(summary[metric]) == pytest.approx(mean, abs=1e-12)


def test_full_folder_and_what_needs_texts_is_unavailable(folder: Path) -> None:
    for name in ("summary.csv", "per_query.csv", "comparisons.csv", "leaderboard.csv", "risk_coverage.csv",
                 "risk_coverage_summary.csv", "diagnosis.csv", "facets.csv", "qrels.txt", "report.txt",
                 "runs/alpha.trec", "runs/gamma.trec"):
        assert (folder / name).is_file(), name
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["diagnosis"]["categories"] == TEXTLESS_CATEGORIES
    assert manifest["diagnosis"]["unavailable"] == unavailable_without_texts(failure_checks())
    assert "near_duplicates" not in manifest["diagnosis"]
    documents = manifest["hash_definitions"]["documents"]
    assert documents == "SHA-256 of the judged document ids, sorted (judgments only: no texts)"
    assert set(manifest["risk_coverage"]["confidence"].values()) == {"score"}  # the run's own scores
    assert {r["facet"] for r in _rows(folder / "facets.csv")} >= {"kind"}  # facets from the side file
    report = (folder / "report.txt").read_text()
    for line in ("diagnosis kinds vocabulary gap, surface homonymy and missed: unavailable (no document texts); "
                 "a failed query with no relevant document retrieved is 'not retrieved'",
                 "near-duplicate check (duplicate versions): unavailable (no document texts)",
                 "judging page: unavailable (no document texts)"):
        assert f" {line}\n" in report
    categories = {r["category"] for r in _rows(folder / "diagnosis.csv")}
    assert categories and categories <= {"late rank", NOT_RETRIEVED}
    assert "with duplicate versions" not in report
    assert "(judged or ranked by a run; no texts)" in manifest["corpus"]["summary"]


def test_bench_report_reads_it(folder: Path) -> None:
    for fmt, line in (("text", " near-duplicate check (duplicate versions): unavailable (no document texts)"),
                      ("md", "near-duplicate check (duplicate versions): unavailable (no document texts).")):
        result = CliRunner().invoke(main, ["report", str(folder), "--format", fmt])
        assert result.exit_code == 0, result.output
        assert line in result.output


def test_html_report_states_it(folder: Path) -> None:
    pytest.importorskip("matplotlib", reason="the HTML report needs the report extra (pip install 'retbench[report]')")
    result = CliRunner().invoke(main, ["report", str(folder), "--format", "html"])
    assert result.exit_code == 0, result.output
    near = '<p class="note">near-duplicate check (duplicate versions): unavailable (no document texts)</p>'
    assert result.output.count(near) == 2  # in the diagnosis, and in place of the near-duplicate pairs
    assert "None found." not in result.output.split('id="duplicates"')[-1][:400]


def test_serve_app_answers_it(folder: Path) -> None:
    pytest.importorskip("fastapi", reason="bench serve needs the serve extra (pip install 'retbench[serve]')")
    from fastapi.testclient import TestClient

    from harness.serve.app import API, create_app

    client = TestClient(create_app(folder.parent), base_url="http://127.0.0.1")
    runs = client.get(f"{API}/runs")
    assert runs.status_code == 200, runs.text
    (item,) = runs.json()["items"]
    assert item["systems"] == ["alpha", "beta", "gamma"]
    comparisons = client.get(f"{API}/runs/{item['id']}/comparisons")
    assert comparisons.status_code == 200, comparisons.text


def test_bench_pool_reads_it(folder: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["pool", str(folder), "--out", str(tmp_path / "pool.tsv")])
    assert result.exit_code == 0, result.output
    rows = _rows_tsv(tmp_path / "pool.tsv")
    judged = {(r["query_id"], r["doc_id"]) for r in _rows_tsv_qrels(folder / "qrels.txt")}
    assert rows and not any((r["query_id"], r["doc_id"]) in judged for r in rows)


def _rows_tsv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def _rows_tsv_qrels(path: Path) -> list[dict[str, str]]:
    return [dict(zip(("query_id", "zero", "doc_id", "grade"), line.split())) for line in path.read_text().splitlines()]


def test_serve_store_reads_it(folder: Path) -> None:
    from harness.serve.store import RunStore

    store = RunStore(folder.parent)
    (run,) = store.runs()
    assert store.summary(run["id"])["systems"] == ["alpha", "beta", "gamma"]
    assert len(store.comparisons(run["id"])) == 3 * len(METRICS)  # every pair on every metric
    assert {r["system"] for r in store.results(run["id"])} == {"alpha", "beta", "gamma"}
    assert store.manifest(run["id"])["diagnosis"]["unavailable"] == unavailable_without_texts(failure_checks())


def test_gate_on_folders_equals_gate_on_run_files(collection: dict[str, Path], tmp_path: Path) -> None:
    base = _compare(collection, tmp_path / "a", "alpha")
    cand = _compare(collection, tmp_path / "b", "beta")  # other runs, other unjudged documents: one collection
    options = ["--metric", "ndcg_cut_10,map", "--bootstrap-samples", "500"]
    on_folders = CliRunner().invoke(main, ["gate", str(base), str(cand), *options])
    on_files = CliRunner().invoke(main, ["gate", "--qrels", str(collection["qrels"]), str(collection["alpha"]),
                                         str(collection["beta"]), *options])
    assert on_folders.exit_code == on_files.exit_code and on_folders.exit_code in (0, 1), on_folders.output
    # the same verdicts and numbers; only the lines naming the sides and where the values came from differ
    cut = on_folders.output.index("\nbaseline:")
    assert on_folders.output[:cut] == on_files.output[:on_files.output.index("\nbaseline:")]
    assert "gate:" in on_folders.output[:cut]


def _tsv_twin(trec: Path, out: Path) -> Path:
    """The TREC run as MS MARCO TSV (qid, docid, rank), and gzipped: a TREC file scored -rank is its twin."""
    ranked: dict[str, list[tuple[float, str]]] = {}
    for line in trec.read_text().splitlines():
        q, _, d, _, score, _ = line.split()
        ranked.setdefault(q, []).append((float(score), d))
    tsv_lines, trec_lines = [], []
    for q, items in ranked.items():
        for rank, (_, d) in enumerate(sorted(items, key=lambda item: (-item[0], [-ord(c) for c in item[1]])), 1):
            tsv_lines.append(f"{q}\t{d}\t{rank}")
            trec_lines.append(f"{q} Q0 {d} {rank} {-rank} twin")
    tsv = out / f"{trec.stem}.tsv"
    tsv.write_text("\n".join(tsv_lines) + "\n")
    with gzip.open(out / f"{trec.stem}.tsv.gz", "wt") as handle:
        handle.write("\n".join(tsv_lines) + "\n")
    (out / f"{trec.stem}-ranks.trec").write_text("\n".join(trec_lines) + "\n")
    with gzip.open(out / f"{trec.stem}-ranks.trec.gz", "wt") as handle:
        handle.write("\n".join(trec_lines) + "\n")
    return tsv


@pytest.mark.parametrize("suffix", [".tsv", ".tsv.gz", "-ranks.trec.gz"])
def test_gate_and_evaluate_take_tsv_and_gz(collection: dict[str, Path], tmp_path: Path, suffix: str) -> None:
    _tsv_twin(collection["beta"], tmp_path)
    twin, plain = tmp_path / f"beta{suffix}", tmp_path / "beta-ranks.trec"
    qrels = str(collection["qrels"])
    options = ["--metric", "ndcg_cut_10", "--bootstrap-samples", "500"]
    gated = [CliRunner().invoke(main, ["gate", "--qrels", qrels, str(collection["alpha"]), str(run), *options])
             for run in (twin, plain)]
    assert gated[0].exit_code == gated[1].exit_code and gated[0].exit_code in (0, 1), gated[0].output
    assert gated[0].output.replace(str(twin), "RUN") == gated[1].output.replace(str(plain), "RUN")
    scored = [CliRunner().invoke(main, ["evaluate", "--qrels", qrels, str(run), "--metrics", ",".join(METRICS),
                                        "--format", "csv"]) for run in (twin, plain)]
    assert scored[0].exit_code == 0, scored[0].output
    assert scored[0].output.replace(str(twin), "RUN") == scored[1].output.replace(str(plain), "RUN")


def test_a_retriever_that_reads_texts_is_refused(collection: dict[str, Path], tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["compare", "--qrels", str(collection["qrels"]), "--systems",
                                       f"bm25,run({collection['alpha']})", "--out", str(tmp_path), "-q"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines()[-1] == (
        "error: system 'bm25': the collection 'judged' is judgments only (no document texts), and bm25 reads the "
        "documents' texts. Fix: compare run files (run(PATH)) and fusions of them, or give a corpus that holds "
        "the documents")
    assert not any(tmp_path.iterdir())


def test_qrels_with_corpus_or_queries_alone_is_refused(collection: dict[str, Path], tmp_path: Path) -> None:
    both = CliRunner().invoke(main, ["compare", "--qrels", str(collection["qrels"]), "--corpus", "article",
                                     "--systems", f"run({collection['alpha']})", "--out", str(tmp_path)])
    assert both.exit_code == 2
    assert ("error: --qrels is given with --corpus. Fix: give --qrels (judgments only, runs compared) or --corpus "
            "(a collection with its documents), not both") in both.output
    alone = CliRunner().invoke(main, ["compare", "--queries", str(collection["queries"]), "--out", str(tmp_path)])
    assert alone.exit_code == 2
    assert "error: --queries is given without --qrels." in alone.output


def test_fusion_of_runs_and_no_queries_file(collection: dict[str, Path], tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["compare", "--qrels", str(collection["qrels"]), "--systems",
                                       f"run({collection['alpha']}),rrf(run({collection['alpha']}),"
                                       f"run({collection['beta']}))", "--metrics", "ndcg_cut_10",
                                       "--bootstrap-samples", "200", "--out", str(tmp_path), "-q"])
    assert result.exit_code == 0, result.output
    assert f"warning: {IDS_AS_TEXTS}" in result.output
    (folder,) = list(tmp_path.iterdir())
    assert {r["system"] for r in _rows(folder / "summary.csv")} == {"alpha", "rrf(alpha,beta)"}


def test_python_api_and_the_corpus_model(collection: dict[str, Path]) -> None:
    import harness
    from retrievers.run_file import RunSystem

    dataset = load_judgments_only(collection["qrels"], collection["queries"])
    assert isinstance(dataset.corpus, TextlessCorpus) and not dataset.corpus.has_texts
    from corpora import Run

    given = RunSystem.of(Run.read(collection["beta"]), name="beta")  # a run in Python: its documents join too
    result = harness.compare([RunSystem(str(collection["alpha"])), RunSystem(str(collection["gamma"])), given],
                             dataset, ["ndcg_cut_10"])
    assert list(result.summary["system"]) == ["alpha", "gamma", "beta"]
    assert not any("does not have" in w for w in result.warnings)  # no run document is unknown
    assert {f.category for f in result.failures} <= {"late rank", NOT_RETRIEVED}
    # the corpus's hash is over the judged documents only: the same whatever runs are compared
    grown = judgments_only(Qrels({"q": {"a": 1}}), documents=["z", "a"])
    assert grown.corpus.ids == ["a", "z"]
    assert grown.corpus.content_hash() == judgments_only(Qrels({"q": {"a": 1}})).corpus.content_hash()
    with pytest.raises(Exception, match="judgments only, no document texts"):
        grown.corpus.texts[0]
