"""Axis ticks in plain numbers on every analyzer plot: matplotlib labels log and symlog axes in scientific
notation ('1.27957 x 10^0' on a logit lens whose KL spans one decade), which a reader has to decode."""

from __future__ import annotations

from typing import Any

import numpy as np


def plain(value: float, _position: Any = None) -> str:
    """0.0005, 0.12, 1.28, 300, 20000: at most four significant digits, never an exponent."""
    if value == 0 or not np.isfinite(value):
        return "0" if value == 0 else ""
    return np.format_float_positional(float(f"{value:.4g}"), trim="-")


def plain_ticks(fig: Any) -> None:
    """Label the log and symlog axes of ``fig`` in plain numbers, their minor ticks unlabelled."""
    from matplotlib.ticker import FuncFormatter, NullFormatter  # here: importing this module stays cheap

    for ax in fig.axes:
        for axis, scale in ((ax.xaxis, ax.get_xscale()), (ax.yaxis, ax.get_yscale())):
            if scale in ("log", "symlog"):
                axis.set_major_formatter(FuncFormatter(plain))
                axis.set_minor_formatter(NullFormatter())
