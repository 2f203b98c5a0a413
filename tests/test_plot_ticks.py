"""Plot axes in plain numbers (issue 40): a symlog or log axis over a narrow range is labelled '1.28', never
'1.27957 x 10^0', on the depth probe's plots and every plot that goes through ``analyzers.ticks``."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pytest

from analyzers.ticks import plain, plain_ticks


@pytest.mark.parametrize(("value", "text"), [(1.27957, "1.28"), (0.0005, "0.0005"), (300.0, "300"),
                                             (20000.0, "20000"), (0.0, "0"), (-2.5, "-2.5")])
def test_plain_writes_no_exponent(value: float, text: str) -> None:
    assert plain(value) == text


def _labels(ax: plt.Axes) -> list[str]:
    ax.figure.canvas.draw()
    return [t.get_text() for t in ax.get_yticklabels() if t.get_text()]


def test_a_symlog_axis_over_one_decade_is_labelled_in_plain_numbers() -> None:
    fig, ax = plt.subplots()
    ax.plot([1.21, 1.25, 1.3, 1.34])
    ax.set_yscale("symlog")
    before = _labels(ax)
    plain_ticks(fig)
    after = _labels(ax)
    plt.close(fig)
    assert any("10^" in label or "times" in label for label in before)  # matplotlib's own: scientific notation
    assert after and all(float(label.replace("\u2212", "-")) >= 0 for label in after)
