"""PNG plots of the depth probes (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def write_plots(layers: dict[str, Any], out_dir: Path) -> list[str]:
    """Write the logit-lens curve, the contributions and the skip heatmap; return the file names."""
    written: list[str] = []

    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.plot(layers["logit_lens_kl"], marker="o", label="all real tokens")
    if not np.all(np.isnan(layers["logit_lens_kl_masked"])):
        ax.plot(layers["logit_lens_kl_masked"], marker="s", label="masked tokens")
    ax.set(xlabel="residual state h_l", ylabel="KL(p_l || p_L)", title="Logit lens")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out_dir / "logit_lens.png", dpi=100)
    plt.close(fig)
    written.append("logit_lens.png")

    if isinstance(layers.get("contribution"), dict):
        fig, ax = plt.subplots(figsize=(5, 3.5))
        for key, label in (("attn", "||a||/||h||"), ("mlp", "||m||/||h+a||"), ("block", "||a+m||/||h||")):
            ax.plot(layers["contribution"][key], marker="o", label=label)
        ax.set(xlabel="layer", ylabel="relative contribution", title="Layer contributions")
        ax.legend()
        fig.tight_layout()
        fig.savefig(out_dir / "contributions.png", dpi=100)
        plt.close(fig)
        written.append("contributions.png")

    if "skip_heatmap" in layers:
        fig, ax = plt.subplots(figsize=(5, 4))
        image = ax.imshow(np.array(layers["skip_heatmap"], dtype=float), cmap="viridis", origin="upper")
        ax.set(xlabel="affected layer l", ylabel="skipped layer s", title="||D_l - D'_l|| / ||D_l||")
        fig.colorbar(image, ax=ax)
        fig.tight_layout()
        fig.savefig(out_dir / "skip_heatmap.png", dpi=100)
        plt.close(fig)
        written.append("skip_heatmap.png")
    return written
