"""PNG figures of the Langevin experiment: loss / specific heat / errors against temperature (raw and
normalized by the specific-heat peak), per-layer similarity histograms, mean attention beside the contact
map, contact precision against temperature, and the design diagnostics."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from analyzers.figures import save_png
from analyzers.ticks import plain_ticks


def _pyplot():  # noqa: ANN202 - matplotlib's module
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_sweep(
    path: Path, curves: dict[str, dict[str, Any]], references: dict[str, dict[str, list[float]]]
) -> None:
    """curves[model] = {'temperatures', 'mean_loss', 'specific_heat', 'train_error', 'validation_error',
    'test_error', 'test_error_std', 'equilibrated', 'peak_temperature'} and optionally 'test_error_by_start'
    (start -> test error of that start's chain per temperature); references[model] = {'ES': test errors of the
    reference seeds, 'OT': ...}: the ES band spans their range. Temperatures that did not equilibrate are
    drawn hollow."""
    plt = _pyplot()
    figure, axes = plt.subplots(2, 3, figsize=(13, 7))
    for name, curve in curves.items():
        temperatures = np.asarray(curve["temperatures"])
        settled = np.asarray(curve.get("equilibrated", [True] * len(temperatures)), dtype=bool)
        for row, scale in enumerate((temperatures, temperatures / curve["peak_temperature"])):
            axes[row, 0].plot(scale, curve["mean_loss"], "o-", label=name)
            axes[row, 1].plot(scale, curve["specific_heat"], "o-", label=name)
            errors = np.asarray(curve["test_error"])
            # the first is the chain drawn as the main curve
            starts = list(curve.get("test_error_by_start", {}))
            chain = f", chain from {starts[0]}" if starts else ""
            bars = axes[row, 2].errorbar(scale, errors, yerr=curve.get("test_error_std"), fmt="-", capsize=3,
                                         label=f"{name} test{chain} (+- std over snapshots)")  # fmt: skip
            color = bars.lines[0].get_color()
            axes[row, 2].plot(scale[settled], errors[settled], "o", color=color)
            axes[row, 2].plot(scale[~settled], errors[~settled], "o", color=color, mfc="none")
            axes[row, 2].plot(
                scale, curve["train_error"], "s--", color=color, alpha=0.6, label=f"{name} train"
            )
            # the other starts' chains: where they part from the first, the temperature has not forgotten its
            # start
            for start in starts[1:]:
                axes[row, 2].plot(
                    scale,
                    curve["test_error_by_start"][start],
                    "x-.",
                    color=color,
                    alpha=0.8,
                    label=f"{name} test, chain from {start}",
                )
            es = [e for e in references.get(name, {}).get("ES", []) if np.isfinite(e)]
            if es:
                axes[row, 2].axhspan(min(es), max(es), color=color, alpha=0.15, lw=0)
                axes[row, 2].axhline(float(np.mean(es)), color=color, lw=0.8, ls=":")
    for row, label in enumerate(("T", "T / T(peak C)")):
        for column, ylabel in enumerate(("mean training loss", "C = var(L) / T^2", "error")):
            axis = axes[row, column]
            axis.set_xscale("log")
            axis.set_xlabel(label)
            axis.set_ylabel(ylabel)
        axes[row, 1].set_yscale("log")
        # in the title, not the axis label: a label that long runs past the panel into the one below
        axes[row, 2].set_title("band: ES seeds' range; hollow: not equilibrated", fontsize=8)
    axes[0, 0].legend()
    axes[0, 2].legend(fontsize=6, loc="upper left")
    plain_ticks(figure)
    save_png(figure, path, dpi=90)
    plt.close(figure)


def plot_similarity(path: Path, histograms: dict[str, dict[str, np.ndarray]], title: str) -> None:
    """histograms[model][layer] = q values; one panel per model, one line per layer."""
    plt = _pyplot()
    figure, axes = plt.subplots(
        1, max(len(histograms), 1), figsize=(6 * max(len(histograms), 1), 4), squeeze=False
    )
    bins = np.linspace(-1, 1, 41)
    for axis, (model, layers) in zip(axes[0], histograms.items(), strict=False):
        for layer, values in layers.items():
            if len(values):
                counts, _ = np.histogram(values, bins=bins, density=True)
                style = "-" if "norm" in layer else ":"
                axis.plot(0.5 * (bins[1:] + bins[:-1]), counts, style, label=layer, lw=1.2)
        axis.set_xlabel("q = w_a . w_b / (|w_a| |w_b|)")
        axis.set_ylabel("density")
        axis.set_title(f"{model} ({title})")
        axis.legend(fontsize=6, ncol=2)
    plain_ticks(figure)
    save_png(figure, path, dpi=90)
    plt.close(figure)


def plot_attention(path: Path, attention: np.ndarray, contacts: np.ndarray, title: str) -> None:
    """Symmetrized mean attention (L, L) beside the contact map."""
    plt = _pyplot()
    figure, axes = plt.subplots(1, 2, figsize=(9, 4.3))
    shown = attention.copy()
    np.fill_diagonal(shown, np.nan)
    axes[0].imshow(shown, cmap="viridis")
    axes[0].set_title(title, fontsize=9)
    axes[1].imshow(contacts, cmap="Greys")
    axes[1].set_title("contact map")
    for axis in axes:
        axis.set_xlabel("j")
        axis.set_ylabel("i")
    plain_ticks(figure)
    save_png(figure, path, dpi=90)
    plt.close(figure)


def plot_precision(
    path: Path,
    temperatures: list[float],
    curves: dict[str, list[float]],
    trained: dict[str, dict[str, float]],
) -> None:
    """Contact precision against temperature; ES / OT values as horizontal lines."""
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(6, 4))
    for label, values in curves.items():
        line = axis.plot(temperatures, values, "o-", label=label)[0]
        for start, style in (("ES", ":"), ("OT", "--")):
            if start in trained and label in trained[start]:
                axis.axhline(
                    trained[start][label], color=line.get_color(), ls=style, lw=0.8, label=f"{label} {start}"
                )
    axis.set_xscale("log")
    axis.set_xlabel("T")
    axis.set_ylabel("precision")
    axis.legend(fontsize=7)
    plain_ticks(figure)
    save_png(figure, path, dpi=90)
    plt.close(figure)


def plot_design(path: Path, summary: dict[str, Any]) -> None:
    """Mean energy and swap acceptance per tempering temperature."""
    plt = _pyplot()
    figure, axes = plt.subplots(1, 2, figsize=(9, 3.5))
    temperatures = summary["temperatures"]
    axes[0].plot(temperatures, summary["mean_energy"], "o-")
    axes[0].set_xlabel("design temperature")
    axes[0].set_ylabel("mean energy")
    axes[1].plot(temperatures, summary["acceptance_swap"], "o-")
    axes[1].set_xlabel("design temperature")
    axes[1].set_ylabel("swap acceptance")
    plain_ticks(figure)
    save_png(figure, path, dpi=90)
    plt.close(figure)
