"""Standard errors across sequences for every ``depth.probe`` metric, and the metrics built per sequence.

The probes keep their sums per sequence (``ProbeAccumulator.add_rows``). A summary metric is a smooth (or at
least well-defined) function of per-layer means, and means of sums are ratio estimators, so its standard error
is the delete-one-sequence jackknife: recompute the metric with each sequence left out (all at once: the
statistics below take means with a leading replicate axis ``(R, ...)``) and take
``sqrt((n - 1) / n * sum((theta_i - mean(theta))^2))``. For a plain mean over sequences this is exactly the
sample standard deviation over ``sqrt(n)``.

The family trend (``depth.probe`` over several checkpoints) is a weighted least-squares slope of
``log(late/early skip effect ratio)`` against ``log2(layers)``: its standard error is the larger of the one
the per-model standard errors imply and the one its residuals imply (3+ models), so that neither noise nor a
poor straight line makes it look resolved.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

Rows = dict[str, tuple[torch.Tensor, torch.Tensor]]  # name -> (sums (n, ...), counts (n, ...)) per sequence
Means = dict[str, torch.Tensor]  # name -> (R, ...) means, R replicates
Statistic = Callable[[Means], torch.Tensor]  # -> (R,) or (R, k)


def replicate_means(rows: Rows) -> tuple[Means, Means]:
    """``(full, left_out)``: the means over all sequences ``(1, ...)`` and with each sequence left out ``(n,
    ...)``. A mean with nothing counted is NaN."""
    full, left_out = {}, {}
    for name, (sums, counts) in rows.items():
        total, count = sums.sum(0, keepdim=True), counts.sum(0, keepdim=True)
        full[name] = _divide(total, count)
        left_out[name] = _divide(total - sums, count - counts)
    return full, left_out


def _divide(total: torch.Tensor, count: torch.Tensor) -> torch.Tensor:
    return torch.where(count > 0, total / count.clamp_min(1e-300), torch.full_like(total, math.nan))


def jackknife(statistic: Statistic, full: Means, left_out: Means) -> tuple[torch.Tensor, torch.Tensor]:
    """``(value, stderr)`` of a statistic, each of its output shape without the replicate axis; the standard
    error is NaN where fewer than two sequences give a finite value."""
    value = statistic(full)[0]
    replicates = statistic(left_out)  # (n, ...)
    finite = torch.isfinite(replicates)
    n = finite.sum(0).double()
    centre = torch.where(finite, replicates, 0).sum(0) / n.clamp_min(1)
    squares = torch.where(finite, (replicates - centre).square(), 0).sum(0)
    stderr = torch.sqrt((n - 1) / n.clamp_min(1) * squares)
    return value, torch.where(n >= 2, stderr, torch.full_like(stderr, math.nan))


def late_half_share(kl: torch.Tensor) -> torch.Tensor:
    """Share of the logit-lens KL decrease ``KL_0 - KL_L`` made by layers ``L//2 .. L-1``; ``kl`` is ``(R,
    L+1)``."""
    num_layers = kl.shape[-1] - 1
    total = kl[:, 0] - kl[:, -1]
    share = (kl[:, num_layers // 2] - kl[:, -1]) / total
    return torch.where(total.abs() < 1e-12, torch.full_like(share, math.nan), share)


def slope_over_depth(values: torch.Tensor) -> torch.Tensor:
    """Least-squares slope of ``values`` ``(R, k)`` against relative depth ``0 .. 1`` (k points), per
    replicate."""
    count = values.shape[-1]
    x = torch.linspace(0, 1, count, dtype=values.dtype)
    x = x - x.mean()
    return (values - values.mean(-1, keepdim=True)) @ x / x.square().sum()


def _halves(num_layers: int) -> tuple[slice, slice]:
    half = num_layers // 2
    return slice(0, half), slice(half, num_layers)


def _later_layers(heatmap: torch.Tensor, rows: slice) -> torch.Tensor:
    """Mean of ``heatmap[:, s, l]`` over ``s`` in ``rows`` and ``l > s``; ``heatmap`` is ``(R, L, L)``."""
    num_layers = heatmap.shape[-1]
    later = torch.ones(num_layers, num_layers, dtype=torch.bool).triu(1)
    chosen = torch.zeros(num_layers, dtype=torch.bool)
    chosen[rows] = True
    mask = later & chosen[:, None]
    return heatmap[:, mask].nanmean(-1)


def _dependence_on_earlier(heatmap: torch.Tensor, targets: slice) -> torch.Tensor:
    """Mean over the layers ``l`` in ``targets`` (those with an earlier layer) of each one's dependence on the
    layers before it: the mean over ``s < l`` of ``heatmap[:, s, l]`` (skip layer s, change in layer l's
    computation). Every target counts once, whatever its number of earlier layers. ``heatmap``: ``(R, L,
    L)``."""
    num_layers = heatmap.shape[-1]
    earlier = torch.ones(num_layers, num_layers, dtype=torch.bool).triu(1)  # [s, l]: s < l
    per_target = heatmap.masked_fill(~earlier, math.nan).nanmean(-2)  # (R, L); layer 0: NaN, no earlier layer
    return per_target[:, targets].nanmean(-1)


def statistics(num_layers: int) -> dict[str, Statistic]:
    """Every probe metric as a function of per-layer means (module docstring); only those whose measurements
    were made apply (``applicable``)."""
    early, late = _halves(num_layers)

    def effect(m: Means, part: slice) -> torch.Tensor:
        return m["skip_output_effect"][:, part].nanmean(-1)

    def entropy(m: Means) -> torch.Tensor:
        return m["attention_entropy"].nanmean(-1)  # (R, L): mean over heads

    def perplexity(m: Means) -> torch.Tensor:
        return m["baseline_nll"].exp()

    return {
        "late_half_kl_drop_fraction": lambda m: late_half_share(m["logit_lens_kl"]),
        "late_half_kl_drop_fraction_masked": lambda m: late_half_share(m["logit_lens_kl_masked"]),
        "mean_skip_output_effect_early_half": lambda m: effect(m, early),
        "mean_skip_output_effect_late_half": lambda m: effect(m, late),
        "late_to_early_skip_effect_ratio": lambda m: effect(m, late) / effect(m, early),
        "early_half_effect_on_later_layers": lambda m: _later_layers(m["skip_heatmap"], early),
        "late_half_effect_on_later_layers": lambda m: _later_layers(m["skip_heatmap"], late),
        "late_to_early_dependence_ratio": lambda m: (
            _dependence_on_earlier(m["skip_heatmap"], late) / _dependence_on_earlier(m["skip_heatmap"], early)
        ),
        "attention_entropy_last_over_first": lambda m: entropy(m)[:, -1] / entropy(m)[:, 0],
        "attention_entropy_by_layer": entropy,
        "attention_entropy_depth_slope": lambda m: slope_over_depth(entropy(m)),
        "baseline_perplexity": perplexity,
        "baseline_accuracy": lambda m: m["baseline_accuracy"],
        "max_deletion_perplexity_increase": lambda m: (m["deletion_nll"].exp() - perplexity(m)[:, None]).amax(
            -1
        ),
        "mean_deletion_accuracy_drop_late_half": lambda m: (
            m["baseline_accuracy"][:, None] - m["deletion_accuracy"][:, late]
        ).mean(-1),
        "lens_perplexity_by_layer": lambda m: m["lens_nll"].exp(),
        "stable_rank_retention": lambda m: m["stable_rank_retention"],
        "erank_retention_by_layer": lambda m: m["sequence_erank_relative"],
        "rank_collapse_slope": lambda m: slope_over_depth(m["sequence_erank_relative"]),
        "stable_rank_retention_by_layer": lambda m: m["sequence_stable_rank_relative"],
        "stable_rank_collapse_slope": lambda m: slope_over_depth(m["sequence_stable_rank_relative"]),
    }


#: The measurements each statistic reads (a statistic applies only where all of them were made).
NEEDS: dict[str, tuple[str, ...]] = {
    "late_half_kl_drop_fraction": ("logit_lens_kl",),
    "late_half_kl_drop_fraction_masked": ("logit_lens_kl_masked",),
    "mean_skip_output_effect_early_half": ("skip_output_effect",),
    "mean_skip_output_effect_late_half": ("skip_output_effect",),
    "late_to_early_skip_effect_ratio": ("skip_output_effect",),
    "early_half_effect_on_later_layers": ("skip_heatmap",),
    "late_half_effect_on_later_layers": ("skip_heatmap",),
    "late_to_early_dependence_ratio": ("skip_heatmap",),
    "attention_entropy_last_over_first": ("attention_entropy",),
    "attention_entropy_by_layer": ("attention_entropy",),
    "attention_entropy_depth_slope": ("attention_entropy",),
    "baseline_perplexity": ("baseline_nll",),
    "baseline_accuracy": ("baseline_accuracy",),
    "max_deletion_perplexity_increase": ("deletion_nll", "baseline_nll"),
    "mean_deletion_accuracy_drop_late_half": ("deletion_accuracy", "baseline_accuracy"),
    "lens_perplexity_by_layer": ("lens_nll",),
    "stable_rank_retention": ("stable_rank_retention",),
    "erank_retention_by_layer": ("sequence_erank_relative",),
    "rank_collapse_slope": ("sequence_erank_relative",),
    "stable_rank_retention_by_layer": ("sequence_stable_rank_relative",),
    "stable_rank_collapse_slope": ("sequence_stable_rank_relative",),
}


def _plain(tensor: torch.Tensor) -> float | list[float]:
    values = tensor.tolist()
    return float(values) if isinstance(values, float) else [float(v) for v in values]


def probe_estimates(
    rows: Rows, num_layers: int
) -> dict[str, tuple[float | list[float], float | list[float]]]:
    """Per metric, ``(value, stderr)`` (lists for the per-layer metrics; NaN where not computable), for every
    statistic whose measurements were made, with the jackknife across the ``n`` probed sequences."""
    full, left_out = replicate_means(rows)
    out = {}
    with torch.no_grad():
        for name, statistic in statistics(num_layers).items():
            if all(need in rows for need in NEEDS[name]):
                value, stderr = jackknife(statistic, full, left_out)
                out[name] = (_plain(value), _plain(stderr))
    return out


def family_trend(num_layers: list[int], ratios: list[float | None], stderrs: list[float | None]
                 ) -> tuple[float | None, float | None]:
    """``(trend, stderr)``: minus the weighted least-squares slope of ``log(ratio)`` over ``log2(layers)``
    across checkpoints (> 0: the deeper the model, the less its later layers change the output relative to its
    earlier ones). Each model's weight is ``1 / var(log ratio)`` (delta method: ``(se / ratio)^2``). Needs 2+
    models with a positive ratio and a finite standard error; the standard error is the larger of the weighted
    one and the residual one (3+ models)."""
    points = [
        (math.log2(n), math.log(r), (s / r) ** 2)
        for n, r, s in zip(num_layers, ratios, stderrs, strict=True)
        if r is not None and s is not None and r > 0 and math.isfinite(s) and s > 0
    ]
    if len({x for x, _, _ in points}) < 2:
        return None, None
    x, y, var = (torch.tensor(column, dtype=torch.float64) for column in zip(*points, strict=True))
    weight = 1 / var
    x_bar, y_bar = (weight * x).sum() / weight.sum(), (weight * y).sum() / weight.sum()
    spread = (weight * (x - x_bar).square()).sum()
    slope = (weight * (x - x_bar) * (y - y_bar)).sum() / spread
    stderr = float(torch.sqrt(1 / spread))
    if len(points) >= 3:
        residuals = y - y_bar - slope * (x - x_bar)
        scale = float((weight * residuals.square()).sum()) / (len(points) - 2)
        stderr = max(stderr, math.sqrt(scale / float(spread)))
    return -float(slope), stderr
