"""The core: :func:`~harness.core.api.compare` and :func:`~harness.core.api.evaluate` over objects,
the metrics (one table), the statistics, and the readings a comparison computes (leaderboard,
facets, risk–coverage, diagnosis, near-duplicates, power, the metrics card).

Nothing here imports a report renderer, the server, plotting or Dask at module level: a comparison
is computed without them, and :class:`~harness.core.result.CompareResult` reaches the results store
and the renderers only when asked to write or render itself.
"""
