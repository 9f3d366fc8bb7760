"""The dashboard's charts: the report's own (:mod:`harness.report.plots`), so ``bench report`` and the
dashboard show the same figure drawn by the same code.

matplotlib comes with the ``serve`` extra; without it the page says how to install it and shows
the AURC table alone.
"""

from __future__ import annotations

from importlib.util import find_spec

import pandas as pd

__all__ = ["INSTALL_HINT", "risk_coverage_chart"]

INSTALL_HINT = "pip install 'retbench[serve]'"


def risk_coverage_chart(curve: pd.DataFrame, summary: pd.DataFrame) -> str | None:
    """An inline ``<svg>`` of every system's risk–coverage curve (``curve``: system, coverage, risk;
    ``summary``: system, risk_metric, aurc, e_aurc, random_risk), or None without matplotlib."""
    if find_spec("matplotlib") is None:
        return None
    from harness.report.plots import inline_svg, risk_coverage_svg

    return inline_svg(risk_coverage_svg(curve, summary))
