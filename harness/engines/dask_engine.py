"""The Dask engine: ``bench compare --engine dask`` on a ``dask.distributed`` cluster.

With ``scheduler`` (``tcp://HOST:8786``) it joins a running cluster; otherwise it starts a local one
of ``workers`` processes (one thread each). On it:

* every retriever that implements the sharding protocol (:mod:`retrievers.sharding`; BM25 does) is
  fitted in shards of documents, one task per shard: the workers read their shard from the
  dataset's folder themselves when it has one (:class:`~harness.engines.shard_tasks.FolderShard`),
  else the shard's documents travel with the task; the shards' statistics go to one worker, are
  reduced once there, and each shard's part goes on to be indexed (they never reach the client); the
  indexes stay on the workers and every search asks each shard for its top k, which one worker
  merges (score descending, doc id ascending) before the merged top k comes to the client. A
  retriever fitted twice with the same parameters on the same corpus (``bm25`` and the ``bm25``
  inside ``rrf``) is fitted once, as the index cache does here;
* every retriever whose class declares ``whole_on_worker``
  (:func:`~retrievers.base.runs_whole_elsewhere`; ``lsa``: its bits do not depend on the process,
  :mod:`retrievers.blas`) is fitted whole on one worker, which reads the whole corpus from the
  dataset's folder itself (:class:`~harness.engines.shard_tasks.FolderCorpus`, checked against the
  client's fingerprints; shipped with the task when the dataset has no folder); the fitted retriever
  stays there and answers every search (its run comes back without the doc ids, which the client
  holds) and every score matrix (what ``weighted`` reads); what it chose for the collection
  (:func:`retrievers.defaults.chosen`) comes back after the fit and each search, for the manifest.
  The manifest's engine record lists it under ``on_worker``;
* every other retriever (fusions, plugins without either declaration: their class may not be
  importable on the workers, or their bits may depend on the process) is fitted and searched on the
  client, as with the local engine, and the manifest's engine record lists it under ``on_client``.
  A fusion's children go where they would go alone;
* the client keeps a BEIR folder's corpus as its ids only (``Engine.needs_texts`` is False:
  :class:`~corpora.outline.CorpusOutline`, its content hash streamed while reading) when no retriever
  fitted on the client reads texts (:func:`~harness.engines.base.needs_texts_here`: only retrievers
  fitted on the workers, in shards or whole, and fusions of them); the diagnosis's few texts are then
  read by the workers (:func:`~harness.engines.shard_tasks.read_documents`) and checked against the
  documents' fingerprints;
* the per-query evaluation runs in query partitions (each made when it is sent, so the client holds
  one at a time), and the bootstrap, the leaderboard's ranks and the Monte Carlo sign flips in
  chunks, on the workers (:mod:`harness.engines.parallel`).

The workers' own time is measured apart from the client's: each fit and each search of a
retriever placed on the workers is watched through the scheduler's task stream
(``distributed.get_task_stream``), and the compute time of its tasks (on the worker, transfers and
queueing left out) is summed per worker and per step, ``fit`` or ``search``
(:meth:`~retrievers.sharding.FittedElsewhere.worker_seconds`, which the cost reading reads:
:mod:`harness.readings.cost`).

Every task is a pure function of its arguments (:mod:`harness.engines.shard_tasks`), so Dask runs a
task again elsewhere when its worker dies, and the result is the same (a retriever fitted whole is
fitted again on another worker, from the folder, when the one holding it dies); a task whose workers
die too often (Dask's ``allowed_failures``) fails the fit or search with the retriever's name. The
engine never changes a result: the folder it writes equals the local engine's, byte for byte, but
for the manifest's times and engine record.
"""

from __future__ import annotations

import contextlib
import json
import logging
import uuid
from collections.abc import Callable, Iterator, Sequence
from importlib.util import find_spec
from typing import Any

import numpy as np
import scipy.sparse as sp

from corpora import Corpus, RetbenchError, Run
from corpora.model import fingerprints_digest
from corpora.outline import CorpusOutline
from harness.engines import shard_tasks
from harness.engines.base import DatasetOrigin, Engine, EngineRecord, EngineRun
from retrievers.defaults import adopt_chosen
from retrievers.sharding import (FittedElsewhere, Placement, ShardHits, Shards, bounds_for, merge_hits,
                                 reduce_statistics, shard_bounds, shard_of, unfitted_copy)

__all__ = ["INSTALL_HINT", "DaskEngine"]

INSTALL_HINT = "pip install 'retbench[dask]' (it brings dask[distributed])"
#: Seconds to wait for a scheduler to answer, and for its first worker.
CONNECT_TIMEOUT = 30


def missing_dependency() -> str | None:
    """What must be installed before the Dask engine can run, or None. Imports nothing."""
    if find_spec("distributed") is None or find_spec("dask") is None:
        return f"the dask engine (`engine=dask`) needs dask.distributed, which is not installed. Fix: {INSTALL_HINT}"
    return None


class DaskEngine(Engine):
    """Run on a Dask cluster: ``scheduler`` (an address) joins one, else ``workers`` local processes.

    ``client``: an existing ``distributed.Client`` to use instead (the engine leaves it open).
    ``shards``: shards per retriever (default: one per worker when the fit starts). Use it as a
    context manager, or :meth:`close` it, to stop a cluster it started.
    """

    name = "dask"
    description = "a Dask cluster: --scheduler tcp://HOST:8786, or --workers N local processes"
    needs_texts = False

    def __init__(self, scheduler: str | None = None, workers: int | None = None, *, shards: int | None = None,
                 client: Any = None):
        if scheduler is not None and workers is not None:
            raise RetbenchError(f"`scheduler` {scheduler} and `workers` {workers} both given: `workers` starts a "
                                "local cluster, `scheduler` joins a running one. Fix: give one of them")
        for value, what in ((workers, "workers"), (shards, "shards")):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise RetbenchError(f"The '{what}' parameter of the dask engine must be an int >= 1. Got {value!r} "
                                    f"instead. Fix: pass e.g. {what}=2")
        if scheduler is not None and not (isinstance(scheduler, str) and scheduler.strip()):
            raise RetbenchError(f"`scheduler` must be an address such as tcp://HOST:8786. Got {scheduler!r} instead. "
                                "Fix: give the address the scheduler printed when it started")
        problem = missing_dependency()
        if problem:
            raise RetbenchError(problem)
        self.scheduler = scheduler
        self.workers = workers
        self.shards = shards
        self._client = client
        self._owned: list[Any] = []  # the client and cluster this engine started, closed by close()

    # ----- the cluster ---------------------------------------------------------------------------
    def client(self) -> Any:
        """The ``distributed.Client``, connecting or starting the cluster on first use."""
        if self._client is not None:
            return self._client
        from distributed import Client, LocalCluster

        if self.scheduler is not None:
            try:
                client = Client(self.scheduler, timeout=CONNECT_TIMEOUT)
            except (OSError, TimeoutError) as exc:
                raise RetbenchError(f"`scheduler` {self.scheduler}: no Dask scheduler answers there ({exc}). Fix: start "
                                    "one with `dask scheduler` and give the address it prints") from None
            self._owned.append(client)
            try:
                client.wait_for_workers(1, timeout=CONNECT_TIMEOUT)
            except TimeoutError:
                raise RetbenchError(f"`scheduler` {self.scheduler}: no worker joined within {CONNECT_TIMEOUT} s. Fix: "
                                    f"start workers with `dask worker {self.scheduler}`") from None
        else:
            cluster = LocalCluster(n_workers=self.workers, processes=True, threads_per_worker=1,
                                   dashboard_address=":0", silence_logs=logging.ERROR)
            self._owned.append(cluster)
            client = Client(cluster)
            self._owned.insert(0, client)
        self._client = client
        return client

    def close(self) -> None:
        for thing in self._owned:
            thing.close()
        if self._owned:
            self._client = None
        self._owned = []

    def _where(self, client: Any) -> str:
        """The manifest's ``scheduler``: the address joined, or that the run started its own cluster."""
        if self.scheduler is None and self._owned:
            return "a local cluster of worker processes started for this run"
        return str(client.scheduler.address)

    # ----- one comparison ------------------------------------------------------------------------
    @contextlib.contextmanager
    def running(self, corpus: Corpus, origin: DatasetOrigin | None) -> Iterator[EngineRun]:
        import dask
        import distributed

        client = self.client()
        workers = len(client.scheduler_info()["workers"])
        record = EngineRecord(self.name, {"scheduler": self._where(client), "workers": workers,
                                          "shards": self.shards or max(1, workers),
                                          "versions": {"dask": dask.__version__, "distributed": distributed.__version__},
                                          "note": "retrievers with the sharding protocol (retrievers.sharding) are "
                                                  "fitted in shards on the workers (sharded); those whose class "
                                                  "declares whole_on_worker (lsa) whole on one worker (on_worker); "
                                                  "the others (fusions, plugins without either) on the client "
                                                  "(on_client)"})
        placement = _DaskPlacement(client, corpus, origin, self.shards or max(1, workers), record)
        reading = corpus.reading(_WorkerReader(client, origin, len(corpus), max(1, workers))) \
            if isinstance(corpus, CorpusOutline) and origin is not None else contextlib.nullcontext()
        try:
            with reading:
                yield EngineRun(record, placement, _DaskMapper(client, max(1, workers)))
        finally:
            placement.release()


class _WorkerTimes:
    """Seconds of compute on the workers, by step and worker, of the tasks whose key holds one of the
    tokens a block names (:meth:`timed`)."""

    def __init__(self, client: Any):
        self.client = client
        self.seconds: dict[str, dict[str, float]] = {}

    @contextlib.contextmanager
    def timed(self, step: str, tokens: list[str]) -> Iterator[None]:
        """Watch the task stream while the block runs; the tasks of ``tokens`` (filled in by the block)
        count for ``step``."""
        from distributed import get_task_stream

        with get_task_stream(client=self.client) as stream:
            yield
        mine = self.seconds.setdefault(step, {})
        for task in stream.data:
            if any(token in str(task.get("key", "")) for token in tokens):
                computed = sum(part["stop"] - part["start"] for part in task.get("startstops", ())
                               if part.get("action") == "compute")
                worker = str(task.get("worker", ""))
                mine[worker] = mine.get(worker, 0.0) + computed


class _DaskShards(Shards):
    """A retriever's shard indexes on the workers, as futures."""

    def __init__(self, client: Any, retriever: Any, corpus: Corpus, bounds: Sequence[tuple[int, int]],
                 indexes: list[Any], times: _WorkerTimes):
        super().__init__(retriever, corpus, bounds)
        self.client = client
        self.indexes = indexes
        self.closed = False
        self._tie_rank_future: Any = None
        self.times = times  # the fit's, then every search's and score's

    def worker_seconds(self) -> dict[str, dict[str, float]]:
        return {step: dict(workers) for step, workers in self.times.seconds.items()}

    def _submit(self, task: Callable[..., Any], what: str, token: str, *arguments: Any) -> list[Any]:
        """``task(retriever, index, *arguments)`` on every shard's worker, as futures in shard order."""
        if self.closed:
            raise RetbenchError(f"retriever {self.label!r} was fitted on a Dask engine whose comparison has ended. "
                                "Fix: fit it again (retriever.fit(corpus)) to search outside that comparison")
        return [self.client.submit(task, self.retriever, index, *arguments, key=f"retbench-{what}-{n}-{token}")
                for n, index in enumerate(self.indexes)]

    def _ask(self, task: Callable[..., Any], what: str, *arguments: Any) -> list[Any]:
        token = uuid.uuid4().hex[:12]
        with self.times.timed("search", [token]):
            return self.client.gather(self._submit(task, what, token, *arguments))

    def search_parts(self, queries: Any, k: int) -> list[ShardHits]:
        return self._ask(shard_tasks.search_shard, "search-shard", queries, k)

    def merged_hits(self, queries: Any, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Merged on a worker (:func:`~retrievers.sharding.merge_hits`): the client gets the
        merged top ``k`` only, never every shard's."""
        token = uuid.uuid4().hex[:12]
        with self.times.timed("search", [token]):
            parts = self._submit(shard_tasks.search_shard, "search-shard", token, queries, k)
            if self._tie_rank_future is None:  # sent once, for every search of this fit; on every worker, so
                # that a worker lost takes no data that cannot be made again with it
                [self._tie_rank_future] = self.client.scatter([self.tie_rank()], broadcast=True, hash=False)
                self._tie_rank = None  # the workers hold it now
            merged = self.client.submit(merge_hits, parts, [a for a, _ in self.bounds], k,
                                        self._tie_rank_future, key=f"retbench-merge-hits-{token}")
            return merged.result()

    def score_parts(self, queries: Any) -> list[sp.csr_matrix | np.ndarray]:
        if not hasattr(self.retriever, "score_shard"):
            raise RetbenchError(f"retriever {self.label!r} searches in shards but has no score_shard, which a fusion "
                                "that normalises scores needs. Fix: implement score_shard, or fuse it with rrf")
        # a numpy array stays one: a dense retriever's zeros are scores, not missing matches
        return [part if isinstance(part, np.ndarray) else sp.csr_matrix(part)
                for part in self._ask(shard_tasks.score_shard, "score-shard", queries)]

    def close(self) -> None:
        self.closed = True
        self.indexes = []  # the last references: the scheduler lets the indexes go
        self._tie_rank_future = None


class _DaskWhole(FittedElsewhere):
    """A retriever fitted whole on one worker, as a future: its searches and scores are asked there."""

    def __init__(self, client: Any, label: str, corpus: Corpus, fitted: Any, times: _WorkerTimes):
        self.client = client
        self.label = label
        self.corpus = corpus
        self.fitted = fitted
        self.closed = False
        self.owners: list[Any] = []  # the retrievers here it answers for: each adopts what a search chose
        self.times = times  # the fit's, then every search's and score's

    def worker_seconds(self) -> dict[str, dict[str, float]]:
        return {step: dict(workers) for step, workers in self.times.seconds.items()}

    def _ask(self, task: Callable[..., Any], what: str, *arguments: Any) -> Any:
        if self.closed:
            raise RetbenchError(f"retriever {self.label!r} was fitted on a Dask engine whose comparison has ended. "
                                "Fix: fit it again (retriever.fit(corpus)) to search outside that comparison")
        token = uuid.uuid4().hex[:12]
        with self.times.timed("search", [token]):
            return self.client.submit(task, self.fitted, *arguments, key=f"retbench-{what}-{token}").result()

    def search(self, queries: Any, k: int) -> Any:
        found, chosen = self._ask(shard_tasks.search_whole, "search-whole", queries, k)
        for owner in self.owners:
            adopt_chosen(owner, chosen)
        if isinstance(found, shard_tasks.RunArrays):
            return Run(found.query_ids, self.corpus.id_array(), found.offsets, found.doc_index, found.scores)
        return found

    def score(self, queries: Any) -> sp.csr_matrix | np.ndarray:
        return self._ask(shard_tasks.score_whole, "score-whole", queries)

    def close(self) -> None:
        self.closed = True
        self.fitted = None  # the last reference: the scheduler lets the fitted retriever go
        self.owners = []


class _WorkerReader:
    """Reads a few documents of the corpus at ``origin`` on the workers, one task per range of the
    corpus (a :class:`~corpora.outline.CorpusOutline`'s reader while the engine runs)."""

    def __init__(self, client: Any, origin: DatasetOrigin, n_docs: int, parts: int):
        self.client = client
        self.origin = origin
        self.bounds = shard_bounds(n_docs, parts)

    def __call__(self, positions: Sequence[int]) -> tuple[list[str], list[str]]:
        wanted = np.asarray(positions, dtype=np.int64)
        token = uuid.uuid4().hex[:12]
        groups = [wanted[(wanted >= a) & (wanted < b)] for a, b in self.bounds]
        futures = [self.client.submit(shard_tasks.read_documents, self.origin, group.tolist(),
                                      key=f"retbench-read-documents-{n}-{token}")
                   for n, group in enumerate(groups) if len(group)]
        read: dict[int, tuple[str, str]] = {}
        for group, (titles, bodies) in zip([g for g in groups if len(g)], self.client.gather(futures)):
            read.update(zip(group.tolist(), zip(titles, bodies)))
        return [read[int(j)][0] for j in wanted], [read[int(j)][1] for j in wanted]


class _DaskPlacement(Placement):
    """Fits the retrievers with the sharding protocol in shards on the cluster, and those that
    declare ``whole_on_worker`` whole on one worker (module docstring)."""

    def __init__(self, client: Any, corpus: Corpus, origin: DatasetOrigin | None, n_shards: int,
                 record: EngineRecord):
        self.client = client
        self.corpus = corpus
        self.origin = origin
        self.n_shards = n_shards
        self.record = record
        self.fitted: dict[tuple[str, str, str, int], _DaskShards] = {}
        # fitted whole on one worker, and what each fit chose for the collection
        self.whole: dict[tuple[str, str, str, int], tuple[_DaskWhole, dict[str, Any]]] = {}

    def fitted_here(self, retriever: Any) -> None:
        self.record.here.add(str(retriever.label))

    @staticmethod
    def _key(how: str, retriever: Any, corpus: Corpus) -> tuple[str, str, str, int]:
        """The same class with the same parameters on the same corpus: fitted once per comparison."""
        cls = type(retriever)
        return (how, f"{cls.__module__}.{cls.__qualname__}",
                json.dumps(retriever.get_params(), sort_keys=True, default=repr), id(corpus))

    def fit_whole(self, retriever: Any, corpus: Corpus) -> FittedElsewhere:
        """Fit ``retriever`` on one worker, which reads the corpus itself (or receives it with the
        task); what the fit chose for the collection is adopted by ``retriever`` here."""
        key = self._key("whole", retriever, corpus)
        self.record.whole.add(str(retriever.label))
        if key not in self.whole:
            from distributed import wait

            if self.origin is not None and corpus is self.corpus:
                source: Any = shard_tasks.FolderCorpus(self.origin, fingerprints_digest(corpus.fingerprints()))
            else:
                source = shard_tasks.ShippedShard(corpus)
            name, token = f"retbench-{type(retriever).__name__.lower()}", uuid.uuid4().hex[:12]
            times = _WorkerTimes(self.client)
            with times.timed("fit", [token]):
                fitted = self.client.submit(shard_tasks.fit_whole, unfitted_copy(retriever), source,
                                            key=f"{name}-fit-whole-{token}")
                # wait, and raise the fit's error here; the fitted retriever stays on its worker
                wait([fitted])
                if fitted.status != "finished":
                    fitted.result()
            if isinstance(source, shard_tasks.FolderCorpus):
                self.client.run(shard_tasks.forget_loaded)  # the fitted retriever keeps what it needs
            chosen = self.client.submit(shard_tasks.chosen_of, fitted, key=f"{name}-chosen-{token}").result()
            self.whole[key] = _DaskWhole(self.client, str(retriever.label), corpus, fitted, times), chosen
        whole, chosen = self.whole[key]
        adopt_chosen(retriever, chosen)
        whole.owners.append(retriever)
        return whole

    def fit(self, retriever: Any, corpus: Corpus) -> Shards:
        cls = type(retriever)
        key = self._key("shards", retriever, corpus)
        self.record.sharded.add(str(retriever.label))
        if key in self.fitted:
            self.record.shard_counts[str(retriever.label)] = len(self.fitted[key].bounds)
            return self.fitted[key]
        copy = unfitted_copy(retriever)
        bounds = bounds_for(copy, len(corpus), self.n_shards)
        self.record.shard_counts[str(retriever.label)] = len(bounds)
        sources = self._sources(corpus, bounds)
        token = uuid.uuid4().hex[:12]
        name = f"retbench-{cls.__name__.lower()}"
        client = self.client
        times = _WorkerTimes(client)
        with times.timed("fit", [token]):
            indexes = self._fit_shards(copy, sources, name, token)
        if isinstance(sources[0], shard_tasks.FolderShard):
            client.run(shard_tasks.forget_loaded)
        shards = _DaskShards(client, copy, corpus, bounds, indexes, times)
        self.fitted[key] = shards
        return shards

    def _fit_shards(self, copy: Any, sources: list[Any], name: str, token: str) -> list[Any]:
        """Fit the shards of ``sources`` on the workers and wait for their indexes (futures, left there)."""
        client = self.client
        fits = [client.submit(shard_tasks.fit_shard, copy, source, key=f"{name}-fit-shard-{n}-{token}")
                for n, source in enumerate(sources)]
        statistics = [client.submit(shard_tasks.statistics_of, fit, key=f"{name}-statistics-{n}-{token}")
                      for n, fit in enumerate(fits)]
        # reduced on a worker, and each shard's part taken there: the statistics (BM25: every shard's
        # vocabulary) never come to the client
        reduced = client.submit(reduce_statistics, copy, statistics, key=f"{name}-reduce-{token}")
        parts = [client.submit(shard_tasks.part_of, reduced, n, key=f"{name}-statistics-part-{n}-{token}")
                 for n in range(len(fits))]
        indexes = [client.submit(shard_tasks.index_shard, copy, fit, part, key=f"{name}-index-shard-{n}-{token}")
                   for n, (fit, part) in enumerate(zip(fits, parts))]
        # the tokens and statistics go once the indexes exist (the scheduler keeps how to make them again)
        del fits, statistics, reduced, parts
        # wait, and raise a shard's error here, during the fit; a finished index stays on its worker
        # (result() would bring every shard's index to the client: at a million documents, the whole index)
        from distributed import wait

        wait(indexes)
        for index in indexes:
            if index.status != "finished":
                index.result()
        return indexes

    def _sources(self, corpus: Corpus, bounds: list[tuple[int, int]]) -> list[Any]:
        if self.origin is not None and corpus is self.corpus:
            fingerprints = corpus.fingerprints()
            return [shard_tasks.FolderShard(self.origin, a, b, fingerprints_digest(fingerprints[a:b])) for a, b in bounds]
        return [shard_tasks.ShippedShard(shard_of(corpus, a, b)) for a, b in bounds]

    def release(self) -> None:
        for shards in self.fitted.values():
            shards.close()
        for whole, _ in self.whole.values():
            whole.close()
        self.fitted = {}
        self.whole = {}


class _DaskMapper:
    """Runs the chunks of :func:`harness.engines.parallel.chunk_map` as tasks; the shared data is sent once."""

    def __init__(self, client: Any, partitions: int):
        self.client = client
        self.partitions = partitions

    def map(self, function: Callable[[Any, Any], Any], items: Sequence[Any], shared: Any) -> list[Any]:
        if not items:
            return []
        [common] = self.client.scatter([shared], broadcast=True, hash=False)
        token = uuid.uuid4().hex[:12]
        # one item at a time: items made on demand (the evaluation's partitions) are sent and let go in turn
        futures = [self.client.submit(shard_tasks.apply_chunk, item, function=function, shared=common,
                                      key=f"retbench-chunk-{n}-{token}") for n, item in enumerate(items)]
        return self.client.gather(futures)
