"""Judgments: find the holes in a golden set (:mod:`~harness.judgments.pool`), fill them
(:mod:`~harness.judgments.judge_app`, the session; :mod:`~harness.judgments.judge_page`, its page,
which needs the ``serve`` extra) and measure how far two judgment sets agree
(:mod:`~harness.judgments.agreement`, :mod:`~harness.judgments.ppi`). How a score counts what nobody
judged (Sakai's condensed lists) is a scoring convention, so it lives with the scoring:
:mod:`harness.core.condensed`.
"""
