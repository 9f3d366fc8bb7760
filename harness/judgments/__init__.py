"""Judgments: find the holes in a golden set (:mod:`~harness.judgments.pool`), score around them
(:mod:`~harness.judgments.condensed`), fill them (:mod:`~harness.judgments.judge_app`) and measure
how far two judgment sets agree (:mod:`~harness.judgments.agreement`, :mod:`~harness.judgments.ppi`).
"""
