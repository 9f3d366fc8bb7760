"""The dashboard's charts, drawn in one place.

The risk–coverage chart is the report's (:mod:`harness.plots`, shared by ``bench report`` and the
dashboard, so both show the same figure). Until that module is merged this draws a stand-in with
matplotlib, taking the same inputs (``risk_coverage.csv`` and ``risk_coverage_summary.csv`` as
frames) and returning the same thing (an ``<svg>`` element for the page), so the switch is one line:
``return inline_svg(risk_coverage_svg(curve, summary))``.

matplotlib comes with the ``serve`` extra; without it the page says how to install it and shows
the AURC table alone.
"""

from __future__ import annotations

import io
import re
from importlib.util import find_spec

import pandas as pd

__all__ = ["INSTALL_HINT", "risk_coverage_chart"]

INSTALL_HINT = "pip install 'retbench[serve]'"


def risk_coverage_chart(curve: pd.DataFrame, summary: pd.DataFrame) -> str | None:
    """An inline ``<svg>`` of every system's risk–coverage curve (``curve``: system, coverage, risk;
    ``summary``: system, risk_metric, aurc, e_aurc, random_risk), or None without matplotlib."""
    if find_spec("matplotlib") is None:
        return None
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context({"svg.fonttype": "none", "font.size": 9, "svg.hashsalt": "retbench:risk-coverage"}):
        figure = Figure(figsize=(7.2, 3.2), layout="constrained")
        ax = figure.add_subplot()
        for row in summary.itertuples(index=False):
            mine = curve[curve["system"] == row.system]
            ax.plot(mine["coverage"].to_numpy(dtype=float), mine["risk"].to_numpy(dtype=float), linewidth=1.4,
                    label=f"{row.system} (AURC {row.aurc:.3f}, E-AURC {row.e_aurc:.3f})")
        if not summary.empty:
            ax.axhline(float(summary["random_risk"].iloc[0]), color="#777777", linewidth=0.8, linestyle=":",
                       label="random (mean risk)")
            ax.set_ylabel(f"risk = 1 − {summary['risk_metric'].iloc[0]}")
        ax.set_xlim(0.0, 1.0)
        ax.set_ylim(bottom=0.0)
        ax.set_xlabel("coverage (share of the queries admitted, most confident first)")
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
        buffer = io.StringIO()
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    text = re.sub(r"\s*<metadata>.*?</metadata>", "", buffer.getvalue(), flags=re.S)
    text = re.sub(r"<\?xml[^>]*\?>\s*|<!DOCTYPE[^>]*>\s*", "", text, flags=re.S)
    # inside HTML the parser puts <svg> in the SVG namespace itself: no URL is left in the page
    text = re.sub(r'\s+xmlns(?::\w+)?="[^"]*"', "", text).replace("xlink:href=", "href=")
    return text.strip()
