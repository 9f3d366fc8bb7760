"""A finished comparison as a value, and the call that makes one: :func:`compare` returns a
:class:`CompareResult`.

The comparison is computed in the core (:func:`harness.core.api.compute_comparison`, which
returns the plain :class:`~harness.core.record.CompareRecord`); this module sits above the results
store and the reports, so a result can store and render itself. Nothing is written until
:meth:`CompareResult.write` stores it as a results folder (:mod:`harness.store.write`), and
:meth:`CompareResult.report` is a report of the folder it would write, read in memory (the text
``bench compare`` prints, HTML, Markdown, LaTeX: :mod:`harness.report.formats`), so it equals
``bench report`` of that folder. The store and the reports read the record and never import this
module (``docs/development.md`` gives the order of the layers).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from os import PathLike
from pathlib import Path

from corpora import Dataset
from corpora.progress import Callback, Renderer
from harness.core.api import compute_comparison
from harness.core.inputs import Systems
from harness.core.metrics import Metric
from harness.core.options import Loading, Readings, RunOptions, Scoring, Statistics
from harness.core.record import CompareRecord
from harness.errors import ParameterError, RetbenchError
import harness.readings  # noqa: F401  (registers the built-in readings: computed, stored, shown)

__all__ = ["CompareResult", "compare"]

# The renderers and the results store are imported where a result is rendered or written, so that
# computing a comparison loads neither.


@dataclass
class CompareResult(CompareRecord):
    """A :class:`~harness.core.record.CompareRecord` that can print and store itself."""

    @classmethod
    def of(cls, record: CompareRecord) -> CompareResult:
        """The result holding ``record``'s data (the same objects, not copies)."""
        return cls(**{f.name: getattr(record, f.name) for f in fields(CompareRecord)})

    def report(self, format: str = "text", *, show_failures: int | None = None, show_queries: int | None = None,
               heading: bool = True, command_line: Sequence[str] | None = None, measured: bool = False) -> str:
        """A report of the comparison.

        ``format="text"`` (the default): the report ``bench compare`` prints: the dataset's summary
        line (unless ``heading`` is False), the leaderboard, the means, the rank of the first
        relevant document, the comparisons, effect size and power, one table per facet,
        risk–coverage and the diagnosis. ``show_failures=None`` lists every failed query
        (``report.txt``); a number abridges the diagnosis to that many per system (the terminal's
        ``--show-failures``). ``show_queries=None`` gives the rank table whole; a number, its first
        that many queries (:func:`harness.report.text.terminal_cut` says what a terminal gets).
        Whole, it is ``report.txt`` less its last newline, and ``bench report --format text`` of the
        folder. ``measured=True`` adds what was measured on this machine (the cost table and latency
        verdicts, which change from run to run and so stay out of ``report.txt``): ``bench compare``
        prints it so.

        ``format="html"``, ``"md"`` or ``"latex"`` (:data:`harness.report.formats.REPORT_FORMATS`):
        the report ``bench report`` makes of the results folder :meth:`write` would store; its command
        line is ``command_line`` (default ``sys.argv``), as :meth:`write` records it. ``html``
        needs the ``report`` extra (matplotlib).

        Every format is made from that folder as read in memory (:func:`harness.store.read.open_record`:
        nothing is written), so it is the same text as the report of the folder.
        """
        from harness.report.formats import REPORT_FORMATS, TEXT, check_formats, parse_formats
        from harness.report.text import render_text
        from harness.report.view import ReportView

        if not isinstance(format, str):  # e.g. report(10) from before the format came first
            names = [TEXT, *(n for n in REPORT_FORMATS if n != TEXT)]
            raise ParameterError("format", "report", f"a str, one of {', '.join(names)} (pass "
                                 "show_failures by keyword)", format)
        (name,) = parse_formats([format])
        if name == TEXT:
            for parameter, value in (("show_failures", show_failures), ("show_queries", show_queries)):
                if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                    raise ParameterError(parameter, "report", "None or an int >= 0", value)
        elif show_failures is not None or show_queries is not None or not heading:
            raise RetbenchError(f"show_failures, show_queries and heading shape the {TEXT} report only, not {name}. "
                                "Fix: leave them out")
        check_formats([name])
        # the folder write() would store, read in memory (less report.txt and the run files, which no report reads)
        view = ReportView.of_result(self, list(command_line) if command_line is not None else None)
        if name == TEXT:
            return render_text(view, show_failures, show_queries, heading, measured)
        return REPORT_FORMATS[name].render(view)

    def write(self, out: Path | str, *, command_line: Sequence[str] | None = None,
              say: Callable[[str], None] | None = None, reports: Sequence[str] | str = ()) -> Path:
        """Store the comparison as a new results folder under ``out`` (created if missing) and
        return its path; ``report.txt`` there is :meth:`report` whole. ``command_line`` is recorded
        in the manifest (default ``sys.argv``); ``say`` hears notes such as a removed stale staging
        folder (default: stderr). ``reports`` (``"html,md"`` or a list of
        :data:`~harness.report.formats.REPORT_FORMATS` names) are made from the folder before it is
        renamed into place and kept beside its files (``report.html``, ``report.md``,
        ``report.tex``). An unusable ``out`` is a :class:`~corpora.RetbenchError`."""
        from harness.report.formats import TEXT, check_formats, parse_formats, report_files
        from harness.store.folder import out_folder
        from harness.store.read import open_staged
        from harness.store.write import write_results

        formats = [name for name in parse_formats(reports) if name != TEXT]  # report.txt is always written
        check_formats(formats)  # before anything is written
        arguments = {} if say is None else {"say": say}
        derived = (lambda staging: report_files(open_staged(staging), formats)) if formats else None
        return write_results(self, out_folder(out), list(command_line) if command_line is not None else None,
                             report=self.report() + "\n", derived=derived, **arguments)


def compare(systems: Systems, dataset: Dataset | str | PathLike[str], metrics: str | Sequence[str | Metric], *,
            baseline: str | None = None, scoring: Scoring = Scoring(), statistics: Statistics = Statistics(),
            readings: Readings = Readings(), loading: Loading = Loading(), run: RunOptions = RunOptions(),
            progress: Renderer | Callback | None = None) -> CompareResult:
    """Fit every system on the dataset, search its queries, score, compare and diagnose, and read the
    leaderboard, effect sizes and power, facet rollups and risk–coverage (:mod:`harness.core.readings`).

    ``systems``: :class:`~retrievers.Retriever` objects (``[BM25(), RRF(BM25(), LSA())]``), a mapping
    label -> retriever that names them (the key becomes the retriever's label), or spec strings
    (``"bm25(k1=0.9)"``, ``"run(runs/es.trec)"``, as ``--systems``), or runs you already have (a
    :class:`corpora.Run`, a ranx ``Run``, a PyTerrier DataFrame: :meth:`retrievers.run_file.RunSystem.of`,
    ``docs/own-runs.md``). Each is fitted here, even if it was fitted before; labels must be distinct.
    A system that occurs more than once, given again or as a fusion's child (the same class with the
    same parameters and children: ``bm25`` and the ``bm25`` of ``rrf(bm25,lsa)``), is fitted and
    searched once, and the fusion reads its rankings (:func:`retrievers.shared.share_systems`); a
    fusion's child is then the system's fitted retriever.
    ``dataset``: a :class:`~corpora.Dataset`, or a bundled name or folder loaded with
    :func:`corpora.load_dataset` as ``loading`` says; one collection (a list of them is refused: the
    same systems on several collections are a suite, :func:`harness.compare_suite`).
    ``metrics``: :class:`~harness.core.metrics.Metric` objects or names (``"ndcg@10"``, ``"P_5"``).
    ``baseline``: compare every system with the one of that label instead of all pairs.

    The options come in frozen groups, each declared once with its defaults and constraints in
    :mod:`harness.core.options` (a group checks its fields when it is made; ``bench compare`` builds
    its flags from them), and the result's ``config`` holds them as the comparison ran: ``scoring``
    (:class:`~harness.core.options.Scoring`: depth, relevance threshold, analyzer, unjudged), ``statistics``
    (:class:`~harness.core.options.Statistics`: bootstrap, seed, confidence, permutations, Holm family),
    ``readings`` (:class:`~harness.core.options.Readings`: fail rank of the diagnosis, facets,
    risk–coverage, the metrics card's cutoff), ``loading`` (:class:`~harness.core.options.Loading`) and
    ``run`` (:class:`~harness.core.options.RunOptions`: cache, timeout, engine, ``on_loaded``). An engine
    never changes a number: the result is the same, and so is its folder but for the manifest's times
    and ``engine`` record (``docs/scale-out.md``); a fit or search past ``run.timeout`` raises
    :class:`~harness.engines.deadline.StepTimedOut` naming the retriever and the step.
    ``progress``: a renderer such as :class:`harness.Reporter` (the terminal line of ``bench compare``),
    a function ``(label, done, total)``, or a :class:`corpora.progress.Progress` channel; None shows nothing.

    Every system is held to ``scoring.depth``: a ranking longer than asked (a plugin's ``search`` may
    return more) is cut to its first ``depth`` results in the order returned, as the built-ins cut
    theirs, and the manifest's notes say so.

    ``scoring.unjudged``: how a document without a judgment counts (:data:`~harness.core.condensed.UNJUDGED_READINGS`):
    ``"nonrelevant"`` (trec_eval's reading, the default) or ``"condensed"``, each ranking scored after
    its unjudged documents are removed (Sakai's condensed lists); ``judged@k``, ``first_relevant_rank``,
    the diagnosis and the metrics card read the rankings as returned. The manifest records the reading
    (``conventions.unjudged``).

    Everything cheap is checked first (systems, labels, metrics, options, the baseline, the dataset's
    ids), so a mistake is a :class:`~corpora.RetbenchError` naming the parameter before any fitting.
    Writes nothing: see :meth:`CompareResult.write`. The work is
    :func:`harness.core.api.compute_comparison`'s; this returns its record as a :class:`CompareResult`.
    """
    return CompareResult.of(compute_comparison(systems, dataset, metrics, baseline=baseline, scoring=scoring,
                                               statistics=statistics, readings=readings, loading=loading, run=run,
                                               progress=progress))
