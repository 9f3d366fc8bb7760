"""Reports of a comparison: the terminal text (:mod:`~harness.report.text`), one view of a results
folder (:mod:`~harness.report.view`) rendered as HTML, Markdown or LaTeX (:mod:`~harness.report.formats`
declares them), and the charts (:mod:`~harness.report.plots`, matplotlib, the ``report`` extra),
with the page parts every HTML and Markdown report shares (:mod:`~harness.report.parts`). The
reports of a parameter search (:mod:`harness.tuning.report`) and of a suite
(:mod:`harness.suite.report`) build on these from the layers above."""
