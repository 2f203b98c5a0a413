"""What the Langevin sweep says about its own sampler: is every temperature sampled at its T along every
direction, and did the chains from the ES and OT weights meet? Per temperature it adds

* the convergence diagnostics of the full training loss over the chains from each start (split-R-hat and
  ESS, ``convergence.py``); R-hat >= 1.1 (or too few draws to tell) makes the temperature "not equilibrated";
* the thermostat check (``thermostat.thermostat_report``), read in three outcomes by
  ``checks.thermostat_state``: at T, off T, unresolved;

both become preconditions of the metrics that read those temperatures (``checks.py``),

and draws both into ``sampler_diagnostics.png``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from analyzers.base import AnalyzerResult
from analyzers.figures import save_png
from analyzers.langevin.checks import thermostat_state
from analyzers.langevin.convergence import RHAT_LIMIT, chain_diagnostics
from analyzers.ticks import plain_ticks

FIGURE = "sampler_diagnostics.png"


def add_sampler_health(
    rows: list[dict[str, Any]],
    records_by_start: Mapping[str, Sequence[dict[str, Any]]],
    burn_in_fraction: float,
) -> list[dict[str, Any]]:
    """Add ``convergence`` and ``thermalized`` to each temperature's summary row, and AND R-hat < 1.1 into
    its ``equilibrated`` (chains that have not met are not at equilibrium, whatever their drift)."""
    for index, row in enumerate(rows):
        chains = [records[index] for records in records_by_start.values() if index < len(records)]
        convergence = chain_diagnostics(chains, burn_in_fraction)
        row["convergence"] = convergence
        row["equilibrated"] = bool(row["equilibrated"] and convergence["converged"])
        row["thermostat_state"] = thermostat_state(row.get("thermostat"))
        row["thermalized"] = row["thermostat_state"] == "at T"
    return rows


def add_to_sweep(
    result: AnalyzerResult, rows_by_model: Mapping[str, list[dict[str, Any]]], out_dir: Path
) -> None:
    """Fill the sweep result's thermalization and convergence fields and draw their figure."""
    temperatures = [row["temperature"] for row in next(iter(rows_by_model.values()))]
    thermalized = {name: [bool(row["thermalized"]) for row in rows] for name, rows in rows_by_model.items()}
    result.thermalized_by_temperature = thermalized  # type: ignore[attr-defined]
    result.convergence_by_temperature = {  # type: ignore[attr-defined]
        name: [row["convergence"] for row in rows] for name, rows in rows_by_model.items()
    }
    plot_sampler_diagnostics(out_dir / FIGURE, temperatures, rows_by_model)
    result.artifacts.append(FIGURE)


def _log_scales(axis: Any, log_y: bool) -> None:
    """Log axes (x always, y where asked) where the axis has a point to show on them: a run too short for an
    ESS or a kinetic temperature has none, and matplotlib refuses to log-scale an empty axis when it saves
    (the run would fail after its sampling)."""
    points = [
        np.asarray(line.get_xydata(), dtype=float).reshape(-1, 2)
        for line in axis.get_lines()
        if line.get_transform() == axis.transData
    ]  # not the reference lines (axhline: axis coordinates)
    xy = np.concatenate(points or [np.empty((0, 2))])
    shown = np.isfinite(xy).all(axis=1) & (xy[:, 0] > 0) & ((xy[:, 1] > 0) if log_y else True)
    if bool(shown.any()):
        axis.set_xscale("log")
        if log_y:
            axis.set_yscale("log")


def plot_sampler_diagnostics(
    path: Path, temperatures: list[float], rows_by_model: Mapping[str, list[dict[str, Any]]]
) -> None:
    """Kinetic temperature / T (mean and the leading noise directions, 2 standard errors), R-hat and ESS vs
    T."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 3, figsize=(14, 4))
    x = np.asarray(temperatures, dtype=float)
    for name, rows in rows_by_model.items():
        thermostats = [row.get("thermostat") or {} for row in rows]
        mean = [t.get("kinetic_temperature_mean", math.nan) or math.nan for t in thermostats]
        line = axes[0].plot(x, np.asarray(mean, dtype=float) / x, "o-", label=f"{name}: mean over weights")[0]
        directions = [t.get("kinetic_temperature_directions") or [] for t in thermostats]
        errors = [t.get("kinetic_temperature_standard_error") or [] for t in thermostats]
        for k in range(max((len(d) for d in directions), default=0)):
            values = np.array([d[k] if k < len(d) else math.nan for d in directions], dtype=float) / x
            spread = np.array([2 * e[k] if k < len(e) else math.nan for e in errors], dtype=float) / x
            lower = np.minimum(spread, 0.9 * values)  # a log axis: bars stop above zero
            axes[0].errorbar(
                x * 1.12 ** (k + 1),
                values,
                yerr=[lower, spread],
                fmt="^",
                color=line.get_color(),
                alpha=0.7,
                label=f"{name}: noise direction {k + 1} (2 SE)",
            )
        convergence = [row["convergence"] for row in rows]
        axes[1].plot(x, [c["rhat"] for c in convergence], "o-", color=line.get_color(),
                     label=f"{name} ({convergence[0]['chains']} chain(s))")  # fmt: skip
        for temperature, row in zip(x, convergence, strict=True):  # the state's initial: e, m or r
            if "state" in row and math.isfinite(row["rhat"]):
                axes[1].annotate(row["state"][0], (temperature, row["rhat"]), textcoords="offset points",
                                 xytext=(4, 4), fontsize=7, color=line.get_color())  # fmt: skip
        axes[2].plot(x, [c["ess"] for c in convergence], "o-", color=line.get_color(), label=name)
    axes[0].axhspan(0.8, 1.2, color="green", alpha=0.1)
    axes[0].axhline(1.0, color="grey", lw=0.8)
    axes[0].set_ylabel("kinetic temperature / T")
    axes[1].axhline(RHAT_LIMIT, color="red", lw=0.8, ls="--")
    axes[1].set_ylabel("split-R-hat of the training loss\n(e equilibrated, m metastable, r relaxing)")
    axes[2].set_ylabel("ESS of the training loss")
    for axis, log_y in zip(axes, (True, False, True), strict=True):
        _log_scales(axis, log_y)
        axis.set_xlabel("T")
        axis.legend(fontsize=6)
    plain_ticks(figure)
    save_png(figure, path, dpi=90)
    plt.close(figure)
