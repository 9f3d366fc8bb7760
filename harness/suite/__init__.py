"""Suites: the same systems on several collections, read together (``bench compare --corpus A --corpus B``,
:func:`harness.compare_suite`). :mod:`~harness.suite.run` runs them one collection at a time,
:mod:`~harness.suite.statistics` reads the macro average with intervals stratified by collection,
:mod:`~harness.suite.store` writes and reads suite folders, :mod:`~harness.suite.report` renders them
(text and Markdown; :mod:`~harness.suite.html` the HTML page, both from :mod:`~harness.suite.view`),
:mod:`~harness.suite.gate` gates one suite against another."""
