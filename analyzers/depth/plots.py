"""Plots of the depth probes (matplotlib, Agg backend), each written as PNG and SVG."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import MaxNLocator, NullFormatter

from analyzers.figures import save_png
from analyzers.ticks import plain_ticks


def _array(values: Any) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in values], dtype=float) if values else np.array([])


def _save(fig: Any, out_dir: Path, stem: str) -> list[str]:
    for ax in fig.axes:
        if "relative" not in ax.get_xlabel() and ax.get_xscale() == "linear":
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    plain_ticks(fig)
    names = [f"{stem}.png", f"{stem}.svg"]
    save_png(fig, out_dir / names[0], dpi=110)
    fig.savefig(out_dir / names[1])  # the SVG keeps the PNG's layout
    plt.close(fig)
    return names


def _heatmap(
    ax: Any,
    fig: Any,
    matrix: Any,
    title: str,
    xlabel: str = "affected layer l",
    ylabel: str = "skipped layer s",
) -> None:
    data = np.array([[np.nan if v is None else v for v in row] for row in matrix], dtype=float)
    image = ax.imshow(data, cmap="viridis", origin="upper", vmin=0, interpolation="nearest")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)


def _plot_logit_lens(layers: dict[str, Any], out_dir: Path, prefix: str) -> list[str]:
    """KL to the output and top-k agreement of the logit lens per residual state."""
    fig, (ax_kl, ax_top) = plt.subplots(1, 2, figsize=(9, 3.5))
    ax_kl.plot(_array(layers["logit_lens_kl"]), marker="o", label="all residues")
    if "logit_lens_kl_masked" in layers:
        ax_kl.plot(_array(layers["logit_lens_kl_masked"]), marker="s", label="masked residues")
    ax_kl.set(
        xlabel="residual state h_l", ylabel="KL(p_l || p_L)", title=f"{prefix}logit lens", yscale="symlog"
    )
    ax_kl.legend()
    ax_top.plot(_array(layers["logit_lens_top1"]), marker="o", label="top-1 agreement")
    ax_top.plot(_array(layers["logit_lens_topk"]), marker="s", label="top-k overlap")
    ax_top.set(xlabel="residual state h_l", ylabel="agreement with output", ylim=(0, 1.05))
    ax_top.legend()
    return _save(fig, out_dir, "logit_lens")


def _plot_contributions(layers: dict[str, Any], out_dir: Path, prefix: str) -> list[str]:
    """Relative norms and cosines of the attention and MLP updates per layer."""
    if not isinstance(layers.get("contribution"), dict):
        return []
    contribution = layers["contribution"]
    fig, (ax_norm, ax_cos) = plt.subplots(1, 2, figsize=(9, 3.5))
    for key, label in (("attn", "||a||/||h||"), ("mlp", "||m||/||h+a||"), ("block", "||a+m||/||h||")):
        ax_norm.plot(_array(contribution[key]), marker="o", label=label)
    ax_norm.set(xlabel="layer", ylabel="relative contribution (mean)", title=f"{prefix}contributions")
    ax_norm.legend()
    for key, label in (
        ("cos_attn", "cos(a, h)"),
        ("cos_mlp", "cos(m, h+a)"),
        ("cos_res", "cos(h_l+1, h_l)"),
    ):
        ax_cos.plot(_array(contribution[key]), marker="o", label=label)
    ax_cos.set(xlabel="layer", ylabel="cosine", ylim=(-1.05, 1.05))
    ax_cos.legend()
    return _save(fig, out_dir, "contributions")


def _plot_skips(layers: dict[str, Any], out_dir: Path, prefix: str) -> list[str]:
    """Skip heatmaps and output effects of each skip variant probed."""
    variants = [(k, t) for k, t in (("skip", "layer skipped"), ("skip_attn", "attention only"),
                                    ("skip_mlp", "MLP only"), ("future", "future effect (pos < t)"))
                if f"{k}_heatmap" in layers]
    if not variants:
        return []
    fig, axes = plt.subplots(1, len(variants), figsize=(4.2 * len(variants), 3.8), squeeze=False)
    for ax, (key, label) in zip(axes[0], variants, strict=True):
        _heatmap(ax, fig, layers[f"{key}_heatmap"], f"{prefix}{label}")
    written = _save(fig, out_dir, "skip_heatmap")
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for key, label in variants:
        ax.plot(_array(layers[f"{key}_output_effect"]), marker="o", label=label)
    ax.set(
        xlabel="skipped layer",
        ylabel="||softmax(z) - softmax(z')||",
        title=f"{prefix}effect on the output",
    )
    ax.legend()
    return written + _save(fig, out_dir, "skip_output_effect")


def _plot_ranks(layers: dict[str, Any], out_dir: Path, prefix: str) -> list[str]:
    """Effective and stable rank of the token representations per residual state."""
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.plot(_array(layers["erank"]), marker="o", label="effective rank (Roy & Vetterli)")
    ax.plot(_array(layers["stable_rank"]), marker="s", label="stable rank ||X||_F^2/||X||_2^2")
    ax.set(xlabel="residual state h_l", ylabel="rank", title=f"{prefix}ranks of token representations")
    ax.legend()
    return _save(fig, out_dir, "ranks")


def _plot_attention_entropy(layers: dict[str, Any], out_dir: Path, prefix: str) -> list[str]:
    """Normalised attention entropy per layer and head, and its mean per layer."""
    if not layers.get("attention_entropy"):
        return []
    fig, (ax_map, ax_mean) = plt.subplots(1, 2, figsize=(9, 3.5))
    entropy = np.array(layers["attention_entropy"], dtype=float)  # (layers, heads)
    image = ax_map.imshow(entropy.T, aspect="auto", cmap="magma", origin="lower", vmin=0, vmax=1)
    ax_map.set(xlabel="layer", ylabel="head", title=f"{prefix}attention entropy / log(keys)")
    fig.colorbar(image, ax=ax_map)
    ax_mean.plot(_array(layers["attention_entropy_mean"]), marker="o")
    ax_mean.set(xlabel="layer", ylabel="mean normalised entropy", ylim=(0, 1.05))
    return _save(fig, out_dir, "attention_entropy")


def _plot_deletion(layers: dict[str, Any], out_dir: Path, prefix: str) -> list[str]:
    """Perplexity and accuracy with each layer deleted."""
    if "deletion_perplexity" not in layers:
        return []
    fig, (ax_ppl, ax_acc) = plt.subplots(1, 2, figsize=(9, 3.5))
    ax_ppl.bar(range(layers["num_layers"]), _array(layers["deletion_perplexity"]))
    ax_ppl.axhline(layers["baseline_perplexity"], color="k", linestyle="--", label="no layer deleted")
    ax_ppl.set(xlabel="deleted layer", ylabel="perplexity",
               title=f"{prefix}layer deletion ({layers['evaluation']})")
    ax_ppl.legend()
    ax_acc.bar(range(layers["num_layers"]), _array(layers["deletion_accuracy"]))
    ax_acc.axhline(layers["baseline_accuracy"], color="k", linestyle="--")
    ax_acc.set(xlabel="deleted layer", ylabel="accuracy")
    return _save(fig, out_dir, "deletion")


def _plot_angular_distance(layers: dict[str, Any], out_dir: Path, prefix: str) -> list[str]:
    """Angular distance between every two residual states."""
    if not layers.get("angular_distance"):
        return []
    fig, ax = plt.subplots(figsize=(4.8, 4))
    _heatmap(ax, fig, layers["angular_distance"], f"{prefix}angular distance", "state h_m", "state h_l")
    return _save(fig, out_dir, "angular_distance")


#: The figures ``write_plots`` draws, in order; each draws nothing where the probes measured nothing.
_PLOTS = (
    _plot_logit_lens,
    _plot_contributions,
    _plot_skips,
    _plot_ranks,
    _plot_attention_entropy,
    _plot_deletion,
    _plot_angular_distance,
)


def write_plots(layers: dict[str, Any], out_dir: Path, title: str = "") -> list[str]:
    """Logit lens, contributions, skip heatmaps and output effects, ranks, entropy, deletion, angular
    distance; returns the file names written."""
    prefix = f"{title}: " if title else ""
    written: list[str] = []
    for plot in _PLOTS:
        written += plot(layers, out_dir, prefix)
    return written


def write_comparison(
    per_model: dict[str, dict[str, Any]], out_dir: Path, stem: str = "comparison"
) -> list[str]:
    """Several models on a relative-depth axis: logit-lens KL (normalised by KL at h_0), skip output
    effect, effective rank ratio and attention entropy."""
    fig, axes = plt.subplots(2, 2, figsize=(10, 7))
    for name, layers in per_model.items():
        kl = _array(layers["logit_lens_kl"])
        depth = np.linspace(0, 1, len(kl))
        axes[0, 0].plot(depth, kl / kl[0] if kl[0] else kl, marker=".", label=name)
        if "skip_output_effect" in layers:
            effect = _array(layers["skip_output_effect"])
            axes[0, 1].plot((np.arange(len(effect)) + 0.5) / len(effect), effect, marker=".", label=name)
        erank = _array(layers["erank"])
        axes[1, 0].plot(depth, erank / erank[0], marker=".", label=name)
        if layers.get("attention_entropy_mean"):
            entropy = _array(layers["attention_entropy_mean"])
            axes[1, 1].plot((np.arange(len(entropy)) + 0.5) / len(entropy), entropy, marker=".", label=name)
    axes[0, 0].set(xlabel="relative depth l/L", ylabel="KL(p_l || p_L) / KL(p_0 || p_L)", title="logit lens")
    axes[0, 1].set(xlabel="relative depth of skipped layer", ylabel="output effect", title="layer skip")
    axes[1, 0].set(xlabel="relative depth l/L", ylabel="erank / erank(h_0)", title="effective rank")
    axes[1, 1].set(xlabel="relative depth", ylabel="normalised entropy", title="attention entropy")
    for ax in axes.flat:
        ax.legend(fontsize=7)
    return _save(fig, out_dir, stem)


def write_sweep_plots(
    summary: dict[str, Any], per_depth: dict[int, dict[str, Any]], out_dir: Path
) -> list[str]:
    """Validation perplexity / accuracy vs depth, probe summaries vs depth, and the per-depth comparison."""
    depths = summary["depths"]
    fig, (ax_ppl, ax_acc) = plt.subplots(1, 2, figsize=(9, 3.5))
    ax_ppl.plot(depths, summary["val_perplexity_by_depth"], marker="o")
    ax_ppl.set(xlabel="layers (fixed parameter budget)", ylabel="validation perplexity", xscale="log",
               title="depth sweep")
    ax_acc.plot(depths, summary["masked_accuracy_by_depth"], marker="o")
    ax_acc.set(xlabel="layers", ylabel="masked-token accuracy", xscale="log")
    for ax in (ax_ppl, ax_acc):
        ax.set_xticks(depths, [str(d) for d in depths])
        ax.xaxis.set_minor_formatter(NullFormatter())
    written = _save(fig, out_dir, "sweep_perplexity")

    fig, axes = plt.subplots(1, 4, figsize=(15, 3.3))
    for ax, key, label in zip(
        axes,
        (
            "late_half_kl_drop_fraction_by_depth",
            "late_to_early_skip_effect_ratio_by_depth",
            "erank_ratio_by_depth",
            "attention_entropy_last_over_first_by_depth",
        ),
        (
            "late-half share of KL drop",
            "late/early skip output effect",
            "erank(h_L)/erank(h_0)",
            "attention entropy last/first",
        ),
        strict=True,
    ):
        ax.plot(depths, _array(summary[key]), marker="o")
        ax.set(xlabel="layers", ylabel=label, xscale="log")
        ax.set_xticks(depths, [str(d) for d in depths])
        ax.xaxis.set_minor_formatter(NullFormatter())
    written += _save(fig, out_dir, "sweep_probes")
    written += write_comparison(
        {f"{d} layers": layers for d, layers in per_depth.items()}, out_dir, "sweep_comparison"
    )
    return written
