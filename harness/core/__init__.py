"""The core: a comparison computed over objects (:func:`~harness.core.api.compute_comparison`, what
:func:`harness.compare` runs) and :func:`~harness.core.api.evaluate`, the metrics (one table), the
scoring conventions (:mod:`~harness.core.condensed`: how an unjudged document counts), the
statistics, the readings a comparison computes here (the diagnosis, power) and the registry of
every reading (:mod:`~harness.core.readings`), which the built-in ones of :mod:`harness.readings`
(the leaderboard, the facets, risk–coverage, the near-duplicates, the metrics card) join as an
add-on does: a compute step, a failure check in the diagnosis, a macro table in a suite, a per-query
table rolled up per facet. The facet cells are the queries' own (:meth:`corpora.Queries.cells`).

A low layer: nothing here imports the results store, a report, the suites, gating, tuning,
judgments, the server or the CLI, not even inside a function (``tests/test_import_graph.py``
holds the order, ``docs/development.md`` gives it); below it are only the engines, the web checks
and the error family. What can store and render a comparison is
:class:`harness.comparison.CompareResult`, a layer above the store and the reports.
"""
