"""The LaTeX report of a results folder: a booktabs table of the means for a paper, as ranx draws
one, in a minimal document that ``pdflatex`` compiles as it is (the table environment between two
marked comment lines is what to paste into a paper that loads ``booktabs``).

The table: a letter per system (``a``, ``b``, ... in the run's order; ``aa`` after ``z``), its label,
and its mean on each metric to 3 decimals; the best value of each column in bold (every system
that reaches it, to the decimals shown); after a value, in superscript, the letters of the systems
this one is significantly better than on that metric, the letters it does not beat kept as
invisible space (``\\hphantom``) so the columns stay aligned (ranx's convention). Significant:
Holm-adjusted randomisation p <= alpha and the paired bootstrap interval excludes 0, the rule of
the verdict "A is better"; only the pairs the run compared can be marked (with a baseline, those
with the baseline).

The caption states the conventions the numbers rest on: which queries count, each metric's
definition with its gain and cutoff, the relevance threshold, how rankings break ties, the test,
the correction and the interval. Nothing varies between machines (no time, path or library
version), so the same folder gives the same bytes everywhere.
"""

from __future__ import annotations

import re

from corpora.wording import counted
from harness.core.options import TUKEY
from harness.core.statistics import correction_words
from harness.report.view import ReportView, number, short_label

__all__ = ["letter", "render_latex", "tex"]

_TEX = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "#": r"\#", "^": r"\^{}",
        "_": r"\_", "%": r"\%", "~": r"\textasciitilde{}", "<": r"\textless{}", ">": r"\textgreater{}",
        "|": r"\textbar{}", "≥": r"$\geq$", "≤": r"$\leq$", "−": "-", "–": "--", "…": r"\dots{}"}
_TEX_PATTERN = re.compile("|".join(re.escape(c) for c in _TEX))


def tex(text: object) -> str:
    """Text with LaTeX's special characters escaped (and a few Unicode signs written as LaTeX).

    >>> tex("bm25(k1=0.9,b=0.4) & rrf_2 100%")
    'bm25(k1=0.9,b=0.4) \\\\& rrf\\\\_2 100\\\\%'
    """
    return _TEX_PATTERN.sub(lambda m: _TEX[m.group(0)], " ".join(str(text).split()))


def letter(index: int) -> str:
    """The letter of the system at ``index``: ``a`` ... ``z``, then ``aa``, ``ab``, ...

    >>> [letter(i) for i in (0, 25, 26, 27, 701, 702)]
    ['a', 'z', 'aa', 'ab', 'zz', 'aaa']
    """
    name = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        name = chr(ord("a") + rest) + name
    return name


def _cell(view: ReportView, system: str, metric: str, letters: dict[str, str]) -> str:
    value = number(view.mean(system, metric))
    text = rf"\textbf{{{value}}}" if system in view.best(metric) else value
    beaten = set(view.beaten_by(system, metric))
    marks = "".join(letters[s] for s in view.systems if s in beaten)
    spaces = "".join(letters[s] for s in view.systems if s != system and s not in beaten)
    if marks:
        text += rf"$^{{\mathrm{{{marks}}}}}$"
    if spaces:
        text += rf"\hphantom{{$^{{\mathrm{{{spaces}}}}}$}}"
    return text


def _metric_sentence(entry: dict) -> str:
    definition = str(entry.get("definition", ""))
    gain = f", gain {entry['gain']}" if entry.get("gain") and "gain" not in definition else ""
    return f"{entry['name']}: {definition}{gain}"


def _caption(view: ReportView) -> str:
    m = view.manifest
    corpus = view.corpus
    stats = view.statistics
    test = stats.get("randomisation_test", {})
    thresholds = sorted({d.get("rel_threshold") for d in m.get("metrics", [])}, key=str)
    excluded = len(corpus.get("queries_excluded", []))
    compared = (f"Only the comparisons with the baseline {short_label(view.baseline)} were made."
                if view.baseline is not None else "Every pair of systems was compared.")
    sentences = [
        f"Mean of each metric over the {counted(view.n_queries, 'query')} of {corpus.get('name')} with a relevant "
        "judgment "
        f"({excluded} excluded); a query with no result scores 0.",
        "; ".join(_metric_sentence(d) for d in m.get("metrics", [])) + ".",
        f"Relevant: grade ≥ {', '.join(str(t) for t in thresholds)}; rankings are ordered by "
        f"{m.get('conventions', {}).get('ties', 'score')}.",
        "Bold: the best value of each column.",
        f"Superscript letters: the systems this one is significantly better than, by a paired sign-flip "
        f"randomisation test (exact up to {test.get('exact_up_to')} differing queries, else "
        + (f"{test.get('permutations'):,} random flips) with Holm's correction over "
           f"{stats.get('holm_family_means', 'the comparisons of each metric')}" if stats.get("holm_family") != TUKEY
           else f"{test.get('permutations'):,} random flips), adjusted by {correction_words(TUKEY)},")
        + f" at p ≤ {view.alpha:g}, whose "
        f"{view.level} paired bootstrap interval of the difference ({stats.get('bootstrap_samples'):,} resamples, "
        f"seed {stats.get('seed')}) also excludes 0. {compared}",
    ]
    return tex(" ".join(sentences))


def render_latex(view: ReportView) -> str:
    """The LaTeX document (see the module docstring)."""
    letters = {s: letter(i) for i, s in enumerate(view.systems)}
    header = " & ".join([r"\#", "System", *(tex(metric) for metric in view.metrics)]) + r" \\"
    rows = []
    for system in view.systems:
        cells = [letters[system], tex(short_label(system)), *(_cell(view, system, m, letters) for m in view.metrics)]
        rows.append(" & ".join(cells) + r" \\")
    corpus = str(view.corpus.get("name", ""))
    label = re.sub(r"[^A-Za-z0-9-]+", "-", corpus).strip("-") or "results"
    lines = [
        f"% retbench: {tex(corpus)}, {counted(len(view.systems), 'system')} on {counted(view.n_queries, 'query')}.",
        "% Compiles as it is with pdflatex; to use the table in a paper, copy the table environment",
        "% between the two marked lines (the paper's preamble needs \\usepackage{booktabs}).",
        r"\documentclass{article}",
        r"\usepackage[T1]{fontenc}",
        r"\usepackage{lmodern}",  # T1 outline fonts that texlive-base brings (no bitmap fonts made at run time)
        r"\usepackage{booktabs}",
        r"\begin{document}",
        "% ---- table: from here ----",
        r"\begin{table}[t]",
        r"\centering",
        rf"\caption{{{_caption(view)}}}",
        rf"\label{{tab:retbench-{label}}}",
        r"\begin{tabular}{cl" + "r" * len(view.metrics) + "}",
        r"\toprule",
        header,
        r"\midrule",
        *rows,
        r"\bottomrule",
        r"\end{tabular}",
        r"\end{table}",
        "% ---- table: to here ----",
        *(text.rstrip("\n") for reading, frame in view.registered("latex")  # an empty own section: none
          if (text := reading.section("latex", frame, view, lambda body: body)) or "latex" not in reading.sections),
        r"\end{document}",
    ]
    return "\n".join(lines) + "\n"
