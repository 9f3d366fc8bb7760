"""A leaderboard that admits what the data cannot separate: bootstrap ranks and tie groups.

Ordering systems by their means alone overstates what a test collection shows. For one metric:

Ranks over the resamples (:func:`bootstrap_ranks`)
    The bootstrap resamples of the queries (the rows of :func:`harness.core.statistics.bootstrap_indices`,
    the same resamples the comparisons' intervals use for the same seed, drawn once for every metric
    of :func:`leaderboards`) are averaged per system;
    in each resample the systems are ranked by that mean, rank 1 the highest, systems whose means
    agree to 12 decimals sharing the average of their ranks (so float rounding of equal sums makes
    no order). ``mean_rank`` is a system's average rank over the resamples; ``rank_ci_low`` and
    ``rank_ci_high`` are its sorted ranks at the indices :func:`harness.core.statistics.percentile_interval`
    reads (125 and 4874 of 5,000 at 95%). ``mean`` is the exactly rounded mean over all the queries
    (``math.fsum / n``, as ``summary.csv``) and ``rank`` its rank.
Tie groups (:func:`tie_groups`): a compact letter display
    The groups rest on the comparisons written to ``comparisons.csv`` (the run's own: same tests, same
    Holm family) and on nothing else. Two systems are *separated* on a metric when their comparison
    on it is significant (:attr:`harness.core.statistics.Comparison.significant`: adjusted p (Holm's, or
    the randomised Tukey HSD's with ``family="tukey"``) <= alpha
    *and* the bootstrap interval excludes 0, exactly when its verdict says "A is better"). A letter
    is a largest set of systems no two of which are separated; a system carries every letter whose
    set holds it (one or several). So two systems share a letter exactly when their comparison does
    not call one better, whatever the verdict's reason ("no clear difference", "too few differing
    queries", "identical"), and never share one when it does. Significance is not transitive: with
    A ~ B, B ~ C but A better than C, A is ``a``, B ``ab``, C ``b``.

    Pairs the run did not compare (with a ``baseline``, every pair without it) are not separated:
    no test said they differ, so they may share a letter, and no verdict is made up for them. With a
    baseline the letters therefore only separate systems from the baseline; the rank intervals
    beside them still show how the others spread.

    The letters come from Piepho's insert-and-absorb algorithm (2004, *Journal of Computational and
    Graphical Statistics* 13(2), "An algorithm for a letter-based representation of all-pairwise
    comparisons"), without its sweep: start with one letter for every system; for each separated
    pair, split each letter that holds both into one without the first and one without the second,
    then drop every letter whose systems another letter also holds. What is left does not depend on
    the order the pairs are taken in (every maximal set of mutually unseparated systems). The letters
    are named ``a``, ``b``, ... by their systems in leaderboard order (highest mean first, ties by mean
    rank, then as given): ``a`` holds the best system, and of two letters the one whose best system is
    higher comes first (then its next, and so on). A cell lists its letters in that order (``ab``);
    after ``z`` come ``A`` to ``Z``, and beyond 52 letters names such as ``a1``, the cell's names then
    separated by spaces (:func:`group_letters` reads a cell back).

The reading (one module, registered as an add-on is: docs/adding-a-reading.md)
    :func:`compute` gives ``leaderboard.csv`` from a comparison's per-query values and its
    comparisons (the tie groups read them and nothing else: with a ``baseline`` only the pairs with it
    are compared, and the pairs without it are not separated), its ranks over the comparisons'
    resamples (the same index stream, drawn once for every metric). In a suite, :func:`macro_leaderboard`
    gives ``suite_leaderboard.csv`` the same way from the macro means, their resamples stratified by
    collection and the macro comparisons (:data:`SUITE`, with its sections of the suite reports).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from harness.engines.parallel import ChunkMapper
from harness.core.statistics import Comparison, adjusted_label, over_resamples, percentile_interval
from harness.core.options import BOOTSTRAP_SAMPLES, CONFIDENCE, SEED
from harness.core.readings import Reading, ReadingInputs, SuiteInputs, SuiteStep, register

# The reports' helpers are imported where a section is rendered, so that computing a comparison loads none.
if TYPE_CHECKING:
    from harness.core.record import CompareRecord
    from harness.report.view import ReportView

__all__ = ["LEADERBOARD_COLUMNS", "bootstrap_ranks", "compute", "group_letters", "leaderboard", "leaderboards",
           "html_body", "letter_sets", "macro_leaderboard", "manifest_entries", "suite_html", "suite_markdown",
           "suite_text", "text_section", "tie_groups"]

#: Columns of the leaderboard (``leaderboard.csv``), one row per (metric, system).
LEADERBOARD_COLUMNS = ["metric", "group", "system", "mean", "rank", "mean_rank", "rank_ci_low", "rank_ci_high"]
_DECIMALS = 12  # means compared to this many decimals when ranking


def _ranks(means: np.ndarray) -> np.ndarray:
    """Rank 1 = highest mean along the last axis; equal means (to 12 decimals) share their average rank.

    A system's rank is 1 + the systems above it + half the others level with it (scipy's ``rankdata``
    with ``method="average"`` on the negated means; a system count is small, so all pairs are compared).

    >>> _ranks(np.array([[0.2, 0.9, 0.2], [0.5, 0.1, 0.3]])).tolist()
    [[2.5, 1.0, 2.5], [1.0, 3.0, 2.0]]
    """
    rounded = np.round(np.asarray(means, dtype=np.float64), _DECIMALS)
    above = (rounded[..., None, :] > rounded[..., :, None]).sum(axis=-1)
    level = (rounded[..., None, :] == rounded[..., :, None]).sum(axis=-1)
    return 1.0 + above + (level - 1) / 2.0


def bootstrap_ranks(values: np.ndarray, index_chunks: Iterable[np.ndarray]) -> np.ndarray:
    """Each system's rank in each resample: (resamples x systems), from ``values`` (queries x systems).

    ``index_chunks`` yields row blocks of the resampling index matrix (:func:`bootstrap_indices`).

    >>> values = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])  # 3 queries, 2 systems
    >>> bootstrap_ranks(values, [np.array([[0, 0, 2], [1, 2, 2], [0, 1, 2]])]).tolist()
    [[1.0, 2.0], [2.0, 1.0], [1.5, 1.5]]
    """
    values = np.asarray(values, dtype=np.float64)
    blocks = [_ranks(values[rows].mean(axis=1)) for rows in index_chunks]
    return np.concatenate(blocks) if blocks else np.empty((0, values.shape[1]))


def _chunk_ranks(values: list[np.ndarray], rows: np.ndarray) -> list[np.ndarray]:
    """Each metric's (resamples x systems) ranks over one chunk of resampled query indices."""
    return [bootstrap_ranks(table, [rows]) for table in values]


_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _letter_name(index: int) -> str:
    """``a`` ... ``z``, ``A`` ... ``Z``, then ``a1`` ... ``Z1``, ``a2``, ...

    >>> [_letter_name(i) for i in (0, 25, 26, 51, 52, 104)]
    ['a', 'z', 'A', 'Z', 'a1', 'a2']
    """
    cycle, at = divmod(index, len(_ALPHABET))
    return _ALPHABET[at] + (str(cycle) if cycle else "")


def letter_sets(n_systems: int, separated: Iterable[tuple[int, int]]) -> list[list[int]]:
    """The letters of a compact letter display, each as the sorted positions of its systems.

    ``separated``: pairs of positions (0 = the first system) whose comparison calls one better.
    Piepho's insert-and-absorb (module docstring): every largest set of positions with no separated
    pair inside, ordered by their positions (lexicographically), so the first letter holds position 0.

    >>> letter_sets(3, [(0, 2)])  # A > C, but neither A nor C is separated from B
    [[0, 1], [1, 2]]
    >>> letter_sets(3, []), letter_sets(3, [(0, 1), (0, 2), (1, 2)])
    ([[0, 1, 2]], [[0], [1], [2]])
    """
    letters: list[frozenset[int]] = [frozenset(range(n_systems))] if n_systems else []
    for i, j in sorted({(min(p), max(p)) for p in separated}):
        if i == j or not (0 <= i < n_systems and 0 <= j < n_systems):
            raise ValueError(f"separated pair {(i, j)!r} does not name two of {n_systems} positions")
        inserted: list[frozenset[int]] = []
        for letter in letters:
            inserted.extend([letter - {i}, letter - {j}] if i in letter and j in letter else [letter])
        unique = list(dict.fromkeys(inserted))
        letters = [a for a in unique if not any(a < b for b in unique)]  # absorb
    return sorted(sorted(letter) for letter in letters)


def group_letters(cell: str) -> list[str]:
    """The letters of one ``group`` cell: its characters, or its space-separated names past 52 letters.

    >>> group_letters("ab"), group_letters("a1 Z")
    (['a', 'b'], ['a1', 'Z'])
    """
    cell = str(cell).strip()
    return cell.split() if " " in cell else list(cell)


def _order(systems: Sequence[str], means: Sequence[float], mean_ranks: Sequence[float] | None) -> list[int]:
    """Positions of ``systems`` in leaderboard order: highest mean first, ties by mean rank, then as given."""
    tiebreak = list(mean_ranks) if mean_ranks is not None else [0.0] * len(systems)
    return sorted(range(len(systems)), key=lambda i: (-round(float(means[i]), _DECIMALS), tiebreak[i], i))


def tie_groups(systems: Sequence[str], means: Sequence[float], comparisons: Sequence[Comparison], metric: str,
               mean_ranks: Sequence[float] | None = None) -> dict[str, str]:
    """System -> its letters (``"a"``, ``"ab"``, ...), by the rule of the module docstring.

    ``comparisons``: the run's (those of other metrics, or naming other systems, are not read); a
    pair with no comparison on ``metric`` is not separated. Two comparisons of one pair that
    disagree on significance raise ValueError (no display can honour both).

    >>> def c(a, b, significant):  # a fake comparison: Holm p and interval agree with ``significant``
    ...     low, holm = (0.05, 0.01) if significant else (-0.05, 0.5)
    ...     return Comparison(a, b, "m", 0.1, low, 0.2, 0.01, holm, 30, 30)
    >>> tie_groups(["A", "B", "C"], [0.9, 0.8, 0.5], [c("A", "B", False), c("A", "C", True), c("B", "C", False)], "m")
    {'A': 'a', 'B': 'ab', 'C': 'b'}
    """
    order = _order(systems, means, mean_ranks)
    position = {systems[i]: at for at, i in enumerate(order)}
    verdicts: dict[frozenset[str], bool] = {}
    for c in comparisons:
        if c.metric != metric or c.system_a not in position or c.system_b not in position:
            continue
        pair = frozenset((c.system_a, c.system_b))
        if verdicts.setdefault(pair, c.significant) != c.significant:
            raise ValueError(f"comparisons of {c.system_a!r} and {c.system_b!r} on {metric!r} disagree on "
                             "significance: give one comparison per pair")
    separated = [tuple(position[s] for s in pair) for pair, significant in verdicts.items()
                 if significant and len(pair) == 2]
    letters = letter_sets(len(order), separated)
    names: dict[int, list[str]] = {at: [] for at in range(len(order))}
    for k, members in enumerate(letters):
        for at in members:
            names[at].append(_letter_name(k))
    spaced = len(letters) > len(_ALPHABET)
    return {s: (" " if spaced else "").join(names[position[s]]) for s in systems}


def leaderboard(per_query: pd.DataFrame, metric: str, comparisons: Sequence[Comparison], n_samples: int = BOOTSTRAP_SAMPLES,
                seed: int = SEED, confidence: float = CONFIDENCE) -> pd.DataFrame:
    """The leaderboard of one metric (:data:`LEADERBOARD_COLUMNS`), rows by mean, highest first (ties by
    mean rank, then as given); ``group`` holds each system's letters (:func:`tie_groups`).

    ``per_query``: ``system``, ``query_id`` and the ``metric`` column, every system on the same
    queries in the same order (``per_query.csv``). ``comparisons``: those of the run, as written to
    ``comparisons.csv`` (the groups read them alone; see :func:`tie_groups`). The resamples are
    ``bootstrap_indices(n_queries, n_samples, seed)``.
    """
    return leaderboards(per_query, [metric], comparisons, n_samples, seed, confidence)


def leaderboards(per_query: pd.DataFrame, metrics: Sequence[str], comparisons: Sequence[Comparison],
                 n_samples: int = BOOTSTRAP_SAMPLES, seed: int = SEED, confidence: float = CONFIDENCE,
                 mapper: ChunkMapper | None = None) -> pd.DataFrame:
    """:func:`leaderboard` of every metric, one after the other, the resamples drawn once for them all
    (their chunks run through ``mapper``, :mod:`harness.engines.parallel`; None: here)."""
    systems = list(dict.fromkeys(per_query["system"]))
    by_system = [per_query[per_query["system"] == s] for s in systems]
    if len({len(rows) for rows in by_system}) != 1:
        raise ValueError("per_query: every system must be evaluated on the same queries")
    # one contiguous (queries x systems) array per metric: the resampled rows are gathered from it
    values = [np.column_stack([rows[m].to_numpy(dtype=np.float64) for rows in by_system]) for m in metrics]
    n_queries = len(by_system[0]) if systems else 0
    chunks = over_resamples(_chunk_ranks, values, n_queries, n_samples, seed, mapper=mapper)
    blocks = [[chunk[k] for chunk in chunks] for k in range(len(metrics))]
    frames = []
    for k, metric in enumerate(metrics):
        ranks = np.concatenate(blocks[k])
        mean_rank = ranks.mean(axis=0)
        low, high = percentile_interval(np.sort(ranks, axis=0), confidence)
        means = np.array([math.fsum(column.tolist()) / len(column) for column in values[k].T])
        groups = tie_groups(systems, means.tolist(), comparisons, metric, mean_rank.tolist())
        frame = pd.DataFrame({"metric": metric, "group": [groups[s] for s in systems], "system": systems,
                              "mean": means, "rank": _ranks(means), "mean_rank": mean_rank, "rank_ci_low": low,
                              "rank_ci_high": high})
        frames.append(frame.iloc[_order(systems, means.tolist(), mean_rank.tolist())])
    if not frames:
        return pd.DataFrame(columns=LEADERBOARD_COLUMNS)
    return pd.concat(frames, ignore_index=True)[LEADERBOARD_COLUMNS]


def manifest_entries(record: CompareRecord) -> dict[str, Any]:
    """The manifest's ``statistics.leaderboard``: how the ranks and the tie groups were made."""
    pairs = ("the run's comparisons (all pairs)" if record.config.baseline is None else
             "the run's comparisons (those with the baseline; the other pairs are not separated)")
    return {"leaderboard": {
        "ranks": "each system's rank in each bootstrap resample (the comparisons' resamples; 1 = highest mean, "
                 "equal means share the average rank); rank interval: percentile of the sorted ranks",
        "tie_groups": "compact letter display (Piepho 2004, insert-and-absorb): a letter is a largest set of "
                      "systems no two of which comparisons.csv calls one better (adjusted p <= alpha and the "
                      "interval excludes 0); letters named by their best system, highest mean first",
        "comparisons": pairs,
    }}


def compute(inputs: ReadingInputs) -> dict[str, pd.DataFrame]:
    """The leaderboard of every metric of the comparison, as its ``statistics`` group says (resamples,
    seed, confidence), its tie groups from the comparisons."""
    statistics = inputs.config.statistics
    with inputs.progress.task("leaderboard"):
        board = leaderboards(inputs.per_query, list(inputs.config.metrics), inputs.comparisons,
                             statistics.bootstrap_samples, statistics.seed, statistics.confidence, inputs.mapper)
    return {"leaderboard": board}


_RANK_DECIMALS = 2  # mean ranks in the text report (rank bounds are whole or half ranks; ties share the average)


def text_section(board: pd.DataFrame, view: ReportView) -> str:
    """The text report's section, heading included: per metric, the systems by mean with their
    letters (tie groups), mean rank over the resamples, rank interval."""
    from harness.report.parts import text_table

    level = round(view.confidence * 100)
    rows = []
    previous = None
    for row in board.itertuples(index=False):
        interval = f"[{row.rank_ci_low:g}, {row.rank_ci_high:g}]"
        rows.append([row.metric if row.metric != previous else "", str(row.group), row.system, f"{row.mean:.3f}",
                     f"{row.mean_rank:.{_RANK_DECIMALS}f}", interval])
        previous = row.metric
    pairs = "" if view.baseline is None else f"; only pairs with {view.baseline} were compared"
    lines = [f"leaderboard (mean rank over {view.statistics['bootstrap_samples']} bootstrap resamples; systems sharing "
             f"a group letter: no comparison calls one better{pairs}):"]
    lines.extend("  " + line for line in text_table(["metric", "group", "system", "mean", "mean rank",
                                                      f"{level}% rank interval"], rows, right={3, 4, 5}))
    return "\n".join(lines)


def html_body(board: pd.DataFrame, view: ReportView) -> str:
    """The HTML report's section: the table, one shade per metric's block, and how to read the letters."""
    from harness.report.parts import html_cell, html_escape, html_table
    from harness.report.view import number

    samples = view.statistics["bootstrap_samples"]
    rows = []
    metrics = list(dict.fromkeys(board["metric"]))
    for row in board.itertuples(index=False):
        shade = "group-odd" if metrics.index(row.metric) % 2 else "group-even"  # one shade per metric's block
        rows.append(f'<tr class="{shade}">' + "".join([
            html_cell(row.metric), html_cell(str(row.group), system=row.system, metric=row.metric, field="group"),
            html_cell(row.system),
            html_cell(number(row.mean), numeric=True, system=row.system, metric=row.metric),
            html_cell(f"{row.rank:g}", numeric=True), html_cell(f"{row.mean_rank:.2f}", numeric=True),
            html_cell(f"[{row.rank_ci_low:g}, {row.rank_ci_high:g}]", numeric=True)]) + "</tr>")
    untested = ("" if view.baseline is None else
                f" Only the comparisons with {html_escape(view.baseline)} were made; the other pairs are "
                "not separated.")
    note = (f'<p class="note">Per metric, the systems by mean. Group letters: two systems share a letter exactly '
            f"when their comparison does not call one better ({adjusted_label(view.statistics.get('holm_family'))} "
            f"&le; {view.alpha:g} and the {view.level} "
            f"interval excludes 0 call it), as the verdicts below.{untested} Mean rank and the {view.level} rank "
            f"interval over {samples} bootstrap resamples of the queries.</p>")
    table = html_table(["metric", "group", "system", "mean", "rank", "mean rank", f"{view.level} rank interval"],
                       rows, numeric_from=3, id="leaderboard-table")
    return note + table


# ----- its part of a suite: the macro leaderboard -------------------------------------------------


def macro_leaderboard(inputs: SuiteInputs) -> pd.DataFrame:
    """The suite's leaderboard (:data:`LEADERBOARD_COLUMNS`, ``mean`` the macro mean): per metric, each
    system's ranks over the resamples stratified by collection (each resample one "query" whose value
    is its macro mean), its tie groups from the macro comparisons, rows in leaderboard order."""
    systems = list(inputs.systems)
    frames = []
    for metric in inputs.metrics:
        macro_resampled = inputs.resampled[metric]
        # each resample is one "query" whose value is its macro mean: its ranks are the resample's ranks
        ranks = bootstrap_ranks(macro_resampled, [np.arange(len(macro_resampled))[:, None]])
        mean_rank = ranks.mean(axis=0)
        rank_low, rank_high = percentile_interval(np.sort(ranks, axis=0), inputs.statistics.confidence)
        means = inputs.means[metric]
        point_ranks = bootstrap_ranks(means[None, :], [np.zeros((1, 1), dtype=np.int64)])[0]
        groups_of = tie_groups(systems, means.tolist(), inputs.comparisons, metric, mean_rank.tolist())
        order = sorted(range(len(systems)), key=lambda i: (-round(float(means[i]), _DECIMALS), mean_rank[i], i))
        frames.append(pd.DataFrame({
            "metric": metric, "group": [groups_of[systems[i]] for i in order], "system": [systems[i] for i in order],
            "mean": means[order], "rank": point_ranks[order], "mean_rank": mean_rank[order],
            "rank_ci_low": rank_low[order], "rank_ci_high": rank_high[order]}))
    return pd.concat(frames, ignore_index=True)[LEADERBOARD_COLUMNS] if frames else \
        pd.DataFrame(columns=LEADERBOARD_COLUMNS)


def suite_text(board: pd.DataFrame, view: Any, metric: str) -> str:
    """The suite's text report: the macro leaderboard of ``metric``, heading its block."""
    from harness.report.parts import text_table

    rows = board[board["metric"] == metric]
    return "\n".join([f"leaderboard, {metric} (macro)", *text_table(
        ["group", "system", "macro", "mean rank", "rank interval"],
        [[r.group, r.system, f"{r.mean:.4f}", f"{r.mean_rank:.2f}", f"[{r.rank_ci_low:g}, {r.rank_ci_high:g}]"]
         for r in rows.itertuples()], right=set())])


def suite_markdown(board: pd.DataFrame, view: Any) -> str:
    """The suite's Markdown section: every metric's macro leaderboard, one table."""
    from harness.report.parts import md_row, md_text

    return "\n".join([md_row(["metric", "group", "system", "macro", "mean rank", "rank interval"]),
                      "|---|---|---|---:|---:|---|",
                      *(md_row([md_text(r.metric), md_text(r.group), md_text(r.system), f"{r.mean:.4f}",
                                f"{r.mean_rank:.2f}", f"[{r.rank_ci_low:g}, {r.rank_ci_high:g}]"])
                        for r in board.itertuples())])


def suite_html(board: pd.DataFrame, view: Any) -> str:
    """The suite's HTML section: the table, one shade per metric's block, and how to read the letters."""
    from harness.report.parts import html_cell, html_table

    rows = []
    metrics = list(dict.fromkeys(board["metric"]))
    for row in board.itertuples(index=False):
        shade = "group-odd" if metrics.index(row.metric) % 2 else "group-even"
        rows.append(f'<tr class="{shade}">' + "".join([
            html_cell(row.metric), html_cell(str(row.group), system=row.system, metric=row.metric, field="group"),
            html_cell(row.system), html_cell(f"{row.mean:.4f}", numeric=True, system=row.system, metric=row.metric),
            html_cell(f"{row.rank:g}", numeric=True), html_cell(f"{row.mean_rank:.2f}", numeric=True),
            html_cell(f"[{row.rank_ci_low:g}, {row.rank_ci_high:g}]", numeric=True)]) + "</tr>")
    note = ('<p class="note">Per metric, the systems by macro mean (the mean of the collections\' means: each '
            "collection weighs the same). Group letters: two systems share a letter exactly when their macro "
            f"comparison does not call one better ({adjusted_label(view.family)} &le; {view.alpha:g} and the "
            f"{view.level} interval "
            f"excludes 0). Mean rank and the {view.level} rank interval over {view.bootstrap_samples} bootstrap "
            "resamples stratified by collection.</p>")
    return note + html_table(["metric", "group", "system", "macro", "rank", "mean rank",
                              f"{view.level} rank interval"], rows, numeric_from=3, id="leaderboard-table")


SUITE = SuiteStep(
    "suite_leaderboard.csv", macro_leaderboard,
    record={"leaderboard": "ranks of the macro means in each stratified resample; tie groups: compact letter display "
                           "of the macro comparisons' verdicts"},
    title="Leaderboard (macro)", anchor="leaderboard",
    render={"text": suite_text, "md": suite_markdown, "html": suite_html}, key="leaderboard")


register(Reading("leaderboard", "leaderboard.csv", ("metric", "group", "system"),
                 columns="metric, group (letters), system, mean, rank, mean_rank, rank_ci_low, rank_ci_high",
                 compute=compute, record=manifest_entries, record_in="statistics", sections={"text": text_section},
                 render={"html": html_body}, title="Leaderboard", anchor="leaderboard", order=40, suite=SUITE))
