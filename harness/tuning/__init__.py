"""``bench tune``: a grid of parameters searched on every query, then k-fold cross-validation over
queries (:mod:`~harness.tuning.search`, :mod:`~harness.tuning.cross_validation`), recorded and
stored (:mod:`~harness.tuning.record`, :mod:`~harness.tuning.results`), and reported from its
folder (:mod:`~harness.tuning.view`, :mod:`~harness.tuning.report`: HTML and Markdown). Named
``tuning`` so that ``harness.tune`` stays the function."""
