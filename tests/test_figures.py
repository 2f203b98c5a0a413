"""``analyzers.figures.save_png``: a figure laid out at the dpi its PNG is saved at is the figure a layout at
matplotlib's default dpi gives, to within a pixel or two (text extents are whole pixels at either dpi), at the
requested size."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from PIL import Image

from analyzers.figures import save_png


def _figure() -> tuple[plt.Figure, list[plt.Axes]]:
    figure, axes = plt.subplots(1, 2, figsize=(6, 3))
    for ax in axes:
        ax.plot(np.arange(10), np.arange(10) ** 2, marker="o", label="squares")
        ax.set(xlabel="a long x label that tight layout has to make room for", ylabel="value", title="t")
        ax.legend()
    return figure, list(axes)


def test_save_png_writes_the_requested_size_laid_out_as_at_the_default_dpi(tmp_path: Path) -> None:
    dpi = 90
    figure, axes = _figure()
    save_png(figure, tmp_path / "f.png", dpi=dpi)
    with Image.open(tmp_path / "f.png") as image:
        assert image.size == (6 * dpi, 3 * dpi)
    reference, reference_axes = _figure()  # the old way: laid out at the figure's own dpi (100)
    loose = [ax.get_position().bounds for ax in reference_axes]  # before any layout: the subplot defaults
    reference.tight_layout()
    pixels = np.array([6, 3, 6, 3]) * dpi  # (x0, y0, width, height) as figure fractions -> PNG pixels
    for ax, ref, default in zip(axes, reference_axes, loose, strict=True):
        got, want = np.array(ax.get_position().bounds) * pixels, np.array(ref.get_position().bounds) * pixels
        assert np.abs(got - want).max() < 2, (got, want)
        moved = np.abs(got - np.array(default) * pixels).max()
        assert moved > 10, "the figure was laid out, not left as made"
    plt.close(figure)
    plt.close(reference)
