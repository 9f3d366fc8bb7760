"""The dashboard's charts: the report's own (:mod:`harness.report.plots`), so ``bench report`` and the
dashboard show the same figure drawn by the same code.

matplotlib comes with the ``serve`` extra; without it the page says how to install it and shows
the tables alone.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.util import find_spec

__all__ = ["INSTALL_HINT", "inline_chart"]

INSTALL_HINT = "pip install 'retbench[serve]'"


def inline_chart(draw: Callable[[], str]) -> str | None:
    """The chart ``draw`` makes (a standalone SVG document of :mod:`harness.report.plots`) as an
    inline ``<svg>``, or None without matplotlib (``draw`` is not called)."""
    if find_spec("matplotlib") is None:
        return None
    from harness.report.plots import inline_svg

    return inline_svg(draw())
