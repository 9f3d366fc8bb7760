"""Metrics, evaluation, statistics, diagnosis, results store, reports and the ``bench`` CLI."""
