"""Reports of a comparison: the terminal text (:mod:`~harness.report.text`), one view of a results
folder (:mod:`~harness.report.view`) rendered as HTML, Markdown or LaTeX, the tune reports, and the
charts (:mod:`~harness.report.plots`, matplotlib, the ``report`` extra)."""
