"""Judgments: find the holes in a golden set (:mod:`~harness.judgments.pool`), score around them
(:mod:`~harness.judgments.condensed`), fill them (:mod:`~harness.judgments.judge_app`, the session;
:mod:`~harness.judgments.judge_page`, its page, which needs the ``serve`` extra) and measure how far
two judgment sets agree (:mod:`~harness.judgments.agreement`, :mod:`~harness.judgments.ppi`).
"""
