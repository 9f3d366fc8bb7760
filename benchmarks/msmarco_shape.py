"""The whole comparison on a collection of MS MARCO passage's shape: wall time, each step's time, peak memory.

    python benchmarks/msmarco_shape.py --passages 200000
    python benchmarks/msmarco_shape.py --corpus irds:msmarco-passage/dev/small   # the real collection

generates (once per size and seed, then reused) a BEIR folder shaped like MS MARCO passage and its
dev/small queries, and runs, as a child process,

    bench compare --corpus FOLDER --systems bm25,lsa,rrf(bm25,lsa) --metrics mrr@10,recall@1000,ndcg@10 --no-cache

The shape: ``--passages`` passages whose lengths are lognormal with a mean of about 56 words (median
about 49) and a long tail (clipped to 4..400 words), as MS MARCO passage's are; their words drawn
from a Zipfian law (exponent 1.0) over a vocabulary of ``--vocabulary`` words (1M by default: MS
MARCO passage has several million distinct terms, most of them rare), the analyzer's stop words at
its head; ``--queries`` queries (6,980 by default, dev/small's count) of about six words: a question
head of one to three stop words ("what is the ...") and two to five distinct content words of one
passage, which is the query's one judgment (grade 1), as dev/small has about one a query.

Measured: the child's wall time; its peak resident memory, its own high-water mark (``VmHWM``,
not ``ru_maxrss``, which would count the parent's size from before ``exec``), polled from
``/proc/PID/status`` while it runs and written by the child as it exits (an ``atexit`` hook): the
larger of the two, since the cost reading resets the mark before each step it measures; each step's time
from the results folder's manifest (``steps``: loading, each system's fit, search and evaluation,
the bootstrap, the power table, each reading, the diagnosis; the rest of the wall time is the start,
the report and the writing); and whether progress went to stderr throughout: the child's stderr is a
terminal (a pseudo-terminal, so that ``bench``'s progress line is drawn as on a console) and the
longest stretch without a byte on it is reported. The table goes to ``benchmarks/RESULTS.md``,
section ``msmarco_shape.<passages>`` (``msmarco_shape.real`` for ``--corpus``).
"""

from __future__ import annotations

import argparse
import json
import os
import pty
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import DEFAULT_DATA, REPO, load_note, markdown, record_results  # noqa: E402
from workloads import STOP_WORDS, vocabulary_words  # noqa: E402

SYSTEMS = "bm25,lsa,rrf(bm25,lsa)"
#: MS MARCO passage's size (v1): what the projection aims at.
MSMARCO_PASSAGES = 8_841_823
METRICS = "mrr@10,recall@1000,ndcg@10"
#: MS MARCO passage's length: lognormal, mean about 56 words (exp(mu + sigma**2 / 2)), a long tail.
LENGTH_SIGMA = 0.5
LENGTH_MU = float(np.log(56.0) - LENGTH_SIGMA ** 2 / 2)
LENGTH_RANGE = (4, 400)
ZIPF = 1.0
CHUNK = 20_000
#: Question heads: the stop words a query of dev/small opens with.
HEADS = [["what", "is"], ["what", "is", "the"], ["how", "much"], ["how", "do", "i"], ["where", "is"],
         ["when", "did"], ["what", "does"], ["is"], ["which"], ["how", "many"]]
#: The child: ``bench``'s main, and its own VmHWM written to the file named by $MSMARCO_SHAPE_HWM as it exits.
CHILD = ("import atexit, os\n"
         "def _hwm():\n"
         "    for line in open('/proc/self/status'):\n"
         "        if line.startswith('VmHWM:'):\n"
         "            open(os.environ['MSMARCO_SHAPE_HWM'], 'w').write(line.split()[1])\n"
         "atexit.register(_hwm)\n"
         "from harness.cli import main\n"
         "main()\n")


def generate(passages: int, queries: int, vocabulary: int, seed: int, folder: Path) -> Path:
    """The BEIR folder of that shape (written once, then reused; whole or not at all)."""
    target = folder / f"msmarco-shape-{passages}-{queries}-v{vocabulary}-{seed}"
    if (target / "qrels" / "test.tsv").is_file():
        return target
    staging = target.with_name(target.name + f".{os.getpid()}.tmp")
    (staging / "qrels").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng([seed, 45, passages])
    words = np.array(vocabulary_words(vocabulary, seed), dtype=object)
    cdf = np.cumsum(np.arange(1, vocabulary + 1, dtype=np.float64) ** -ZIPF)
    cdf /= cdf[-1]
    # the passages each query is drawn from (distinct), in order, so they are met while writing
    judged = np.sort(rng.choice(passages, size=queries, replace=False))
    query_lines: list[tuple[int, str]] = []
    stop = len(STOP_WORDS)
    with (staging / "corpus.jsonl").open("w", encoding="ascii") as out:
        for first in range(0, passages, CHUNK):
            n = min(CHUNK, passages - first)
            lengths = np.clip(np.rint(rng.lognormal(LENGTH_MU, LENGTH_SIGMA, size=n)), *LENGTH_RANGE).astype(np.int64)
            tokens = np.minimum(np.searchsorted(cdf, rng.random(int(lengths.sum())), side="right"), vocabulary - 1)
            starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
            text = words[tokens].tolist()
            lines = []
            for j, (s, length) in enumerate(zip(starts.tolist(), lengths.tolist())):
                lines.append(json.dumps({"_id": str(first + j), "title": "", "text": " ".join(text[s:s + length])}))
            out.write("\n".join(lines) + "\n")
            for doc in judged[(judged >= first) & (judged < first + n)].tolist():
                own = tokens[starts[doc - first]:starts[doc - first] + lengths[doc - first]]
                content = list(dict.fromkeys(t for t in own.tolist() if t >= stop))
                size = min(len(content), int(rng.integers(2, 6)))
                chosen = sorted(rng.choice(len(content), size=size, replace=False)) if size else []
                picked = [content[i] for i in chosen]
                head = HEADS[int(rng.integers(len(HEADS)))]
                query_lines.append((doc, " ".join([*head, *(words[t] for t in picked)])))
    order = rng.permutation(len(query_lines))  # dev/small's ids are not in passage order
    with (staging / "queries.jsonl").open("w", encoding="ascii") as out:
        for q, i in enumerate(order.tolist()):
            out.write(json.dumps({"_id": f"q{q}", "text": query_lines[i][1]}) + "\n")
    with (staging / "qrels" / "test.tsv").open("w", encoding="ascii") as out:
        out.write("query-id\tcorpus-id\tscore\n")
        for q, i in enumerate(order.tolist()):
            out.write(f"q{q}\t{query_lines[i][0]}\t1\n")
    staging.replace(target)
    return target


def measure(corpus: str, out: Path) -> dict:
    """Run the comparison as a child: wall s, VmHWM MB (its own, and the polled one), the longest
    silence on its stderr (s), the results folder's manifest."""
    hwm_file = out / "vmhwm.kb"
    argv = [sys.executable, "-c", CHILD, "compare", "--corpus", corpus, "--systems", SYSTEMS, "--metrics", METRICS,
            "--no-cache", "--out", str(out / "results")]
    master, slave = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(REPO), "MSMARCO_SHAPE_HWM": str(hwm_file), "COLUMNS": "120"}
    heard: list[float] = []
    tail = bytearray()

    def listen() -> None:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                return
            if not chunk:
                return
            heard.append(time.monotonic())
            tail.extend(chunk)
            del tail[:-4000]

    start = time.monotonic()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=slave, stdin=subprocess.DEVNULL,
                               cwd=str(REPO), env=env)
    os.close(slave)
    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    polled = 0
    while process.poll() is None:
        try:
            with open(f"/proc/{process.pid}/status") as status:
                polled = max([polled, *(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))])
        except (OSError, ValueError):
            pass
        time.sleep(0.05)
    wall = time.monotonic() - start
    listener.join(timeout=5)
    os.close(master)
    if process.returncode != 0:
        raise RuntimeError(f"bench compare failed ({process.returncode}): {tail.decode(errors='replace')[-2000:]}")
    moments = [start, *heard, start + wall]
    (folder,) = (out / "results").iterdir()
    return {"wall": wall, "hwm_mb": int(hwm_file.read_text()) / 1024, "polled_mb": polled / 1024,
            "silence": max(b - a for a, b in zip(moments, moments[1:])),
            "manifest": json.loads((folder / "manifest.json").read_text(encoding="utf-8")),
            "mrr@10": _means(folder)}


def project(steps: list[dict], wall: float, hwm_mb: float, documents: int, target: int = MSMARCO_PASSAGES) -> str:
    """What MS MARCO passage's size would take by this run's slope: the steps that grow with the
    passages (loading, every fit and search: a search of the same queries reads more postings, lsa's
    scores every passage) scaled linearly, the rest (queries-bound) as measured; memory scaled
    linearly (an upper bound: the runs, the judgments and the readings do not grow with passages)."""
    if documents >= target:
        return ""
    scale = target / documents
    grows = sum(s["seconds"] for s in steps if s["step"] == "loading" or s["step"].split(" ")[0] in ("fit", "search"))
    heaviest = max(steps, key=lambda s: s["seconds"]) if steps else {"step": "?", "seconds": 0.0}
    return (f"By this run's slope (linear in passages through the origin), {target:,} passages would take about "
            f"{(grows * scale + wall - grows) / 60:,.0f} min and {hwm_mb * scale / 1024:,.0f} GB at most "
            f"({heaviest['step']} alone {heaviest['seconds'] * scale / 60:,.0f} min): not run here.")


def _means(folder: Path) -> dict[str, float]:
    import csv

    with (folder / "summary.csv").open(encoding="utf-8") as handle:
        return {row["system"]: float(row["mrr@10"]) for row in csv.DictReader(handle)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=200_000)
    parser.add_argument("--queries", type=int, default=6_980)
    parser.add_argument("--vocabulary", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--corpus", help="run on this collection instead (irds:msmarco-passage/dev/small)")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    note = load_note()
    if args.corpus:
        corpus, name = args.corpus, "msmarco_shape.real"
    else:
        made = time.perf_counter()
        corpus = str(generate(args.passages, args.queries, args.vocabulary, args.seed, args.data))
        name = f"msmarco_shape.{args.passages}"
        print(f"collection ready in {time.perf_counter() - made:.0f} s: {corpus}", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="msmarco-shape-") as scratch:
        result = measure(corpus, Path(scratch))
    manifest = result["manifest"]
    steps = manifest.get("steps", [])
    counted = sum(step["seconds"] for step in steps)
    corpus_record = manifest["corpus"]
    documents, queries = corpus_record["documents"], corpus_record["queries_evaluated"]
    # the cost reading resets VmHWM before each step (clear_refs 5): the exit value is the last step's
    # peak, the polled maximum the run's
    peak = max(result["hwm_mb"], result["polled_mb"])
    projection = project(steps, result["wall"], peak, documents)

    def row(name: str, seconds: float) -> list[str]:
        return [name, f"{seconds:.1f}", f"{seconds / result['wall']:.0%}", f"{seconds / documents * 1e6:.1f}",
                f"{seconds / queries * 1e3:.2f}"]

    rows = [row("whole `bench compare` (wall)", result["wall"]), *(row(s["step"], s["seconds"]) for s in steps),
            row("start, report and writing (the rest)", result["wall"] - counted)]
    body = "\n".join([
        f"{documents:,} passages, {queries:,} queries evaluated; "
        f"systems `{SYSTEMS}`, metrics `{METRICS}`, `--no-cache`, local engine.",
        "",
        markdown(["step", "s", "share of wall", "µs / passage", "ms / query"], rows),
        "",
        f"Peak memory: {peak:,.0f} MB, the larger of the child's VmHWM polled from /proc while it ran "
        f"({result['polled_mb']:,.0f} MB) and at its exit ({result['hwm_mb']:,.0f} MB; the cost reading resets "
        "the high-water mark before each step it measures). "
        f"Longest stretch without progress on stderr (a terminal): {result['silence']:.1f} s. "
        "MRR@10: " + ", ".join(f"{k} {v:.4f}" for k, v in result["mrr@10"].items()) + ".",
        "",
        projection,
        "",
        f"The same on the real collection: `python benchmarks/msmarco_shape.py --corpus "
        f"irds:msmarco-passage/dev/small` (or `bench compare --corpus irds:msmarco-passage/dev/small "
        f"--systems '{SYSTEMS}' --metrics {METRICS} --no-cache`; needs the `irds` extra and the download).",
    ])
    print(body)
    record_results(name, body, note)


if __name__ == "__main__":
    main()
