"""How often each depth check says yes where the answer is yes and no where it is no, at each preset's size
(issue 35's power rule: >= 0.95 both ways at every preset meant to answer a claim; ``smoke`` and
``family_smoke`` only exercise the code and may stay unresolved).

Every trial builds synthetic per-sequence numbers with a known answer and runs them through the analyzers' own
builders: ``uncertainty.probe_estimates`` (the jackknife over sequences), ``compute.probe_checks`` (the
probe's *learned* precondition), ``compute.family_result`` (a family's trend and its *every member*
precondition), ``sweep.convergence`` (*converged*), ``sweep.sweep_checks`` (the sweep's *learned*, the best
depth, the deepest depth's perplexity rise, the fall and rise, and the trend across depths). A value is
*resolved* when its interval (``analyzers.base.stderr_interval``, the one ``kb.evidence.verdicts`` reads) lies
wholly past the claim's threshold; the test checks that ``kb.evidence.verdicts.evaluate`` decides the same on
these records.

Known answers (stated here, shown in the README's table):

- *learned*: a model beating the most frequent residue by ``LEARNED_GAP`` accuracy (yes), or exactly as good
  as it, sequence by sequence (no). Each designed sequence has ``RESIDUES`` residues, ``MASKED`` of them
  scored; its own most-frequent-residue share varies (sd ``SHARE_SD``) and the model's per-sequence difficulty
  too (``SKILL_SD``). The baseline is read over every residue of the same sequences, as
  ``data.unigram_accuracy`` reads it (of the letter most frequent in the population: picking the sample's most
  frequent letter only raises the baseline, so the simulated false-pass rate is an upper bound).
- *resolved*, a mean over sequences (``stable_rank_retention``, the slopes over layers): per-sequence values
  from a skewed (gamma) distribution with sd 1, mean ``EFFECT`` sd past the threshold (yes) or at it (no).
- *resolved*, a ratio of means (``late_half_kl_drop_fraction``): per-sequence logit-lens KL curves whose
  late-half share has influence sd 1 around the population share, ``EFFECT`` past 0.5 (yes) or at 0.5 (no).
- *every model* (a family's smallest late-half share, ``late_half_kl_drop_fraction_min_over_models``): every
  checkpoint's share ``EFFECT`` sd past 0.5 (yes), or all but one, which sits at 0.5 (no).
- *trend* (a family's checkpoints or a sweep's depths): each model's late/early ratio falls by
  ``TREND_FACTOR`` per doubling of depth (yes) or not at all (no), each model off the line by
  ``MODEL_SCATTER`` in log ratio, with its own relative standard error from its sequences.
- *converged*: a validation curve on its plateau (yes) or still falling by twice the rule's tolerance over its
  window (no), each evaluation off the curve by ``CURVE_JITTER`` (relative).
- *best depth resolved*: the best depth's per-sequence NLL below the runner-up's by ``EFFECT`` sd of their
  paired difference (yes) or tied with it (no); *deepest perplexity rise*: the deepest depth's NLL above the
  next one's by ``EFFECT`` paired sd (yes) or equal (no); *fall and rise*: the shallowest and the deepest
  depth's NLL each ``EFFECT`` paired sd above the next deepest's (yes), or one of the two equal to it (no).

``python -m analyzers.depth.power`` prints the table the README shows.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import torch

from analyzers.base import stderr_interval
from analyzers.depth.compute import family_result, probe_checks
from analyzers.depth.spec import DepthProbe, DepthProbeResult, DepthSweep, DepthSweepParams
from analyzers.depth.sweep import convergence, inefficiency_trend, sweep_checks
from analyzers.depth.training import TokenScores
from analyzers.depth.uncertainty import probe_estimates
from schemas.run import EvidenceScale

#: The designed corpus's sequences (86 residues, 15 % of them masked) and its most frequent residue's share.
RESIDUES = 86
MASKED = 13
UNIGRAM = 0.174
SHARE_SD = 0.03
SKILL_SD = 0.3  # log sd: a hit rate of 0.2 varies by about 0.06 between sequences
#: The smallest gap over the most frequent residue counted as 'learned' here: the 12k-parameter sweep models
#: beat it by 0.08 (README), ESM-2 by more than 0.2.
LEARNED_GAP = 0.05
#: A 'yes' effect for a value against its threshold, in sd of the per-sequence quantity (a medium effect).
EFFECT = 0.5
#: A family's or a sweep's trend: the late/early ratio falls 1.5x per doubling of depth; models scatter 0.15
#: in log ratio off the line; each model's ratio has a relative sd of 0.5 per sequence.
TREND_FACTOR = 1.5
MODEL_SCATTER = 0.15
RATIO_SD = 0.5
CURVE_JITTER = 0.002


@dataclass(frozen=True)
class ProbeSize:
    """What a ``depth.probe`` preset gives its checks: sequences per model and each model's layers."""

    name: str
    sequences: int
    layers: tuple[int, ...]
    answers: bool = True  # meant to answer a claim (not ``smoke`` / ``family_smoke``)


@dataclass(frozen=True)
class SweepSize:
    """What a ``depth.sweep`` preset gives its checks: depths, validation and probed sequences,
    evaluations."""

    name: str
    depths: tuple[int, ...]
    validation: int
    probed: int
    masked: int = MASKED
    answers: bool = True


def _probe(name: str, layers: tuple[int, ...], answers: bool = True) -> ProbeSize:
    return ProbeSize(name, int(DepthProbe.scales[name]["max_sequences"]), layers, answers)


def _sweep(
    name: str, default_depths: tuple[int, ...], masked: int = MASKED, answers: bool = True
) -> SweepSize:
    scale = DepthSweep.scales[name]
    fields = DepthSweepParams.model_fields
    depths = tuple(scale.get("depths", default_depths))
    validation = int(scale.get("max_val_sequences", fields["max_val_sequences"].default))
    probed = int(scale.get("probe_sequences", fields["probe_sequences"].default))
    return SweepSize(name, depths, validation, probed, masked, answers)


#: Each preset's size, read from the presets themselves (layers from the model catalog's cards).
PROBE_SIZES = [
    _probe("smoke", (4,), answers=False),
    _probe("small", (8,)),
    _probe("esm2_8m", (6,)),
    _probe("paper", (33,)),
    _probe("esm2_3b", (36,)),
    _probe("family_smoke", (2, 4, 8), answers=False),
    _probe("plms_smoke", (4, 8), answers=False),
    _probe("esm2_family", (6, 12, 30, 33, 36, 48)),
    _probe("six_plms", (33, 36, 27, 33, 33, 30)),
]
#: Presets of one checkpoint per PLM family (similar depths), for claims about every model, not about depth.
ACROSS_FAMILIES = ("six_plms", "plms_smoke")
#: The paper sweep's UniRef50 sequences are longer (mean ~300 residues, 45 masked); the others are designed.
SWEEP_SIZES = [
    _sweep("smoke", (2, 4, 8), answers=False),
    _sweep("small", (2, 4, 8, 16)),
    _sweep("paper", (6, 12, 24, 36, 48), masked=45),
]


def _tensor(values: np.ndarray) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)


def _sequences(
    rng: np.random.Generator, n: int, gap: float, masked: int = MASKED
) -> tuple[np.ndarray, np.ndarray, float]:
    """``(correct, counts, unigram)``: per-sequence correct predictions at ``masked`` positions of a model
    whose hit rate is its sequence's most-frequent-residue share plus ``gap`` (and its own per-sequence
    difficulty), and the most frequent residue's share over every residue of the ``n`` sequences."""
    share = np.clip(rng.normal(UNIGRAM, SHARE_SD, n), 0.01, 0.99)
    residues = max(RESIDUES, round(masked / 0.15))
    unigram = float(rng.binomial(residues, share).sum() / (n * residues))
    # each sequence's difficulty multiplies the model's hit rate by a log-normal factor of mean 1 (no
    # clipping, which would bias the mean hit rate upward and fake a gap)
    skill = np.exp(rng.normal(-(SKILL_SD**2) / 2, SKILL_SD, n))
    hit = np.minimum((share + gap) * skill, 1.0)
    return rng.binomial(masked, hit).astype(float), np.full(n, float(masked)), unigram


def probe_learned(rng: np.random.Generator, size: ProbeSize, yes: bool) -> bool:
    """One probe run's *learned* precondition (``probe_checks``)."""
    n = size.sequences
    correct, counts, unigram = _sequences(rng, n, LEARNED_GAP if yes else 0.0)
    rows = {"baseline_accuracy": (_tensor(correct), _tensor(counts))}
    estimates = dict(probe_estimates(rows, size.layers[-1]))
    accuracy = estimates["baseline_accuracy"][0]
    learned = probe_checks(float(accuracy), unigram, estimates, n)["baseline_perplexity"].preconditions[0]  # type: ignore[arg-type]
    return learned.passed is True


def _resolved_above(
    value: float, stderr: Any, units: int | None, threshold: float, dof: int | None = None
) -> bool:
    """The value's interval lies wholly above the threshold (a claim '> threshold' decided)."""
    interval = stderr_interval(value, stderr if isinstance(stderr, float) else None, units, dof)
    return interval is not None and interval[0] > threshold


def _skewed(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` draws with mean 0 and sd 1, right-skewed (gamma with shape 4: skewness 1)."""
    return (rng.gamma(4.0, 1.0, n) - 4.0) / 2.0


def mean_result(rng: np.random.Generator, size: ProbeSize, yes: bool) -> DepthProbeResult:
    """A probe result whose ``stable_rank_retention`` is the mean of skewed per-sequence values ``EFFECT`` sd
    above
    0 (yes) or at 0 (no), with ``probe_estimates``' jackknife standard error over them; the model learned."""
    n = size.sequences
    values = _skewed(rng, n) + (EFFECT if yes else 0.0)
    rows = {"stable_rank_retention": (_tensor(values), _tensor(np.ones(n)))}
    estimates = dict(probe_estimates(rows, size.layers[-1]))
    return member(estimates, size.layers[-1], n)


def probe_resolved_mean(rng: np.random.Generator, size: ProbeSize, yes: bool) -> bool:
    """A per-sequence mean (``stable_rank_retention``) resolved above its threshold 0."""
    return resolved_above(mean_result(rng, size, yes), "stable_rank_retention", 0.0)


def resolved_above(result: DepthProbeResult, metric: str, threshold: float) -> bool:
    """The metric's preconditions passed and its interval lies wholly above ``threshold`` (what a claim
    'metric > threshold' needs to be supported)."""
    check = result.checks[metric]
    value = getattr(result, metric)
    return (
        all(c.passed is True for c in check.preconditions)
        and value is not None
        and _resolved_above(value, check.stderr, check.units, threshold, check.dof)
    )


LENS_SCALE_SD = 0.5  # log-normal spread of each sequence's KL scale


def _share_estimates(rng: np.random.Generator, sequences: int, layers: int, share: float) -> tuple[Any, Any]:
    """``(value, stderr)`` of ``late_half_kl_drop_fraction`` (``probe_estimates``' jackknife) over
    per-sequence logit-lens KL curves whose late-half share is ``share`` in the population (influence sd 1 x
    0.1)."""
    scale = rng.lognormal(0.0, LENS_SCALE_SD, sequences)
    # influence of sequence i on the ratio: scale_i (share_i - share) / E[scale]; its sd is 1 with this spread
    spread = 1.0 / math.exp(LENS_SCALE_SD**2 / 2)
    shares = share + 0.1 * spread * rng.normal(0.0, 1.0, sequences)
    depth = np.linspace(0.0, 1.0, layers + 1)
    kl = scale[:, None] * np.clip(1.0 - depth[None, :], 0.0, None)  # a straight fall to 0 at the last layer
    kl[:, layers // 2] = scale * shares
    rows = {"logit_lens_kl": (_tensor(kl), _tensor(np.ones_like(kl)))}
    return probe_estimates(rows, layers)["late_half_kl_drop_fraction"]


def probe_resolved_ratio(rng: np.random.Generator, size: ProbeSize, yes: bool) -> bool:
    """The logit lens's late-half share of the KL drop (a ratio of means) resolved above 0.5."""
    share = 0.5 + (EFFECT if yes else 0.0) * 0.1
    value, stderr = _share_estimates(rng, size.sequences, size.layers[-1], share)
    return _resolved_above(float(value), stderr, size.sequences, 0.5)


def family_bound(rng: np.random.Generator, size: ProbeSize, yes: bool) -> bool:
    """A family's ``late_half_kl_drop_fraction_min_over_models`` (every member's interval, Bonferroni over the
    members) resolved above 0.5: every checkpoint's share ``EFFECT`` sd past 0.5 (yes), or all but the last
    (no: one model at the threshold)."""
    members = []
    for index, layers in enumerate(size.layers):
        past = yes or index < len(size.layers) - 1
        share = _share_estimates(rng, size.sequences, layers, 0.5 + (EFFECT if past else 0.0) * 0.1)
        estimates = {"late_half_kl_drop_fraction": share, "late_to_early_skip_effect_ratio": (0.5, 0.01)}
        members.append(member(estimates, layers, size.sequences))
    check = family_result(members).checks["late_half_kl_drop_fraction_min_over_models"]
    passed = all(c.passed is True for c in check.preconditions)
    return passed and check.interval is not None and check.interval[0] > 0.5


def member(estimates: dict[str, tuple[Any, Any]], layers: int, sequences: int) -> DepthProbeResult:
    """A probe result of one model with ``estimates`` (metric -> (value, standard error over ``sequences``))
    as
    ``probe_checks`` reads them; the model learned (accuracy 0.5 against a baseline of 0.1, SE 0.01)."""
    estimates = {**estimates, "baseline_accuracy": (0.5, 0.01)}
    metrics: dict[str, Any] = {name: None for name in DepthProbe.metrics if not name.endswith("_by_model")}
    metrics |= {name: value for name, (value, _) in estimates.items()}
    return DepthProbeResult(
        **metrics,
        model=f"{layers} layers",
        num_layers=layers,
        layers={},
        scale=EvidenceScale(name="power", parameters=1e6),
        checks=probe_checks(0.5, 0.1, estimates, sequences),
    )


def _trend_ratios(
    rng: np.random.Generator, depths: tuple[int, ...], sequences: int, yes: bool, factor: float
) -> tuple[list[float], list[float]]:
    """Each model's late/early ratio and its standard error (module doc)."""
    slope = math.log(factor) if yes else 0.0
    relative = RATIO_SD / math.sqrt(sequences)
    ratios, errors = [], []
    for layers in depths:
        true = math.exp(-slope * math.log2(layers) + MODEL_SCATTER * rng.normal())
        measured = true * math.exp(relative * rng.normal())
        ratios.append(measured)
        errors.append(relative * measured)
    return ratios, errors


def family_trend(rng: np.random.Generator, size: ProbeSize, yes: bool, factor: float = TREND_FACTOR) -> bool:
    """A family run's ``depth_inefficiency_trend`` decided above 0 (``family_result``: every member counted,
    the
    slope's interval over t(checkpoints - 2))."""
    ratios, errors = _trend_ratios(rng, size.layers, size.sequences, yes, factor)
    ratio = "late_to_early_skip_effect_ratio"
    members = [
        member({ratio: (r, e)}, layers, size.sequences)
        for r, e, layers in zip(ratios, errors, size.layers, strict=True)
    ]
    return resolved_above(family_result(members), "depth_inefficiency_trend", 0.0)


def _curve(
    rng: np.random.Generator, evaluations: int, yes: bool, tolerance: float, window: int, jitter: float
) -> list[float]:
    """A validation-loss curve: an exponential fall onto a plateau of 2.0 (yes), or one still falling by twice
    the
    tolerance over the rule's window (no), each evaluation off it by ``CURVE_JITTER`` (relative)."""
    k = np.arange(evaluations, dtype=float)
    if yes:
        clean = 2.0 * (1.0 + 0.5 * np.exp(-k / (evaluations / 8)))
    else:
        per_step = (2 * tolerance) / window
        clean = 2.0 * (1.0 + per_step * (evaluations - 1 - k))
    return list(clean * (1.0 + jitter * rng.normal(0.0, 1.0, evaluations)))


def sweep_converged(
    rng: np.random.Generator, size: SweepSize, yes: bool, jitter: float = CURVE_JITTER
) -> bool:
    """One depth's *converged* (``sweep.convergence`` with the preset's evaluations, window and tolerance)."""
    scale = DepthSweep.scales[size.name]
    fields = DepthSweepParams.model_fields
    evaluations = int(scale.get("evaluations", fields["evaluations"].default)) + 1  # and at the last step
    window = int(scale.get("convergence_window", fields["convergence_window"].default))
    tolerance = float(scale.get("convergence_tolerance", fields["convergence_tolerance"].default))
    curve = _curve(rng, evaluations, yes, tolerance, window, jitter)
    return convergence(curve, UNIGRAM + 0.1, UNIGRAM, window, tolerance)[0]


def _scores(
    rng: np.random.Generator, size: SweepSize, nll: list[float], gaps: list[float]
) -> tuple[list[TokenScores], float]:
    """Per-depth validation scores over the same sequences: each sequence's difficulty shared by every depth,
    each depth's own noise on top; ``nll`` the depths' mean NLL per token, ``gaps`` their accuracy over the
    baseline."""
    n, masked = size.validation, size.masked
    difficulty = rng.normal(0.0, 0.3, n)
    correct, counts, unigram = _sequences(rng, n, 0.0, masked)
    scores = []
    for mean, gap in zip(nll, gaps, strict=True):
        own = rng.normal(0.0, PAIRED_SD / math.sqrt(2), n)
        sums = masked * (mean + difficulty + own)
        hits = correct if gap == 0.0 else _sequences(rng, n, gap, masked)[0]
        scores.append(TokenScores([float(x) for x in sums], [int(c) for c in hits], [masked] * n))
    return scores, unigram


#: sd of the paired per-sequence difference of two depths' mean NLL (nats per token).
PAIRED_SD = 0.3


def _sweep_checks(
    scores: list[TokenScores],
    unigram: float,
    depths: tuple[int, ...],
    ratios: list[float | None] | None = None,
) -> dict[str, Any]:
    rows = [
        {"depth": d, "converged": True, "convergence": "flat", "val_perplexity": s.perplexity}
        for d, s in zip(depths, scores, strict=True)
    ]
    return sweep_checks(list(depths), rows, scores, unigram, ratios or [1.0] * len(depths))


def sweep_learned(rng: np.random.Generator, size: SweepSize, yes: bool) -> bool:
    """One depth's *learned* in ``sweep_checks`` (its accuracy against the validation set's most frequent
    residue)."""
    depths = size.depths[:2]
    scores, unigram = _scores(rng, size, [2.5, 2.6], [LEARNED_GAP if yes else 0.0, LEARNED_GAP])
    condition = _sweep_checks(scores, unigram, depths)["val_perplexity_by_depth.0"].preconditions[1]
    return condition.passed is True


def sweep_best_depth(rng: np.random.Generator, size: SweepSize, yes: bool) -> bool:
    """The best depth resolved to one depth (``sweep_checks``' paired test against every other)."""
    nll = [2.5 + (0.0 if i == 1 else 1.0) for i in range(len(size.depths))]
    nll[0] = 2.5 + (EFFECT * PAIRED_SD if yes else 0.0)  # the runner-up: EFFECT paired sd worse, or tied
    scores, unigram = _scores(rng, size, nll, [LEARNED_GAP] * len(nll))
    low, high = _sweep_checks(scores, unigram, size.depths)["best_depth"].interval
    return low == high


def sweep_deepest_rise(rng: np.random.Generator, size: SweepSize, yes: bool) -> bool:
    """``deepest_perplexity_rise`` (the deepest depth against the next, paired jackknife) resolved above 0."""
    nll = [2.5] * len(size.depths)
    nll[-1] += EFFECT * PAIRED_SD if yes else 0.0
    scores, unigram = _scores(rng, size, nll, [LEARNED_GAP] * len(nll))
    check = _sweep_checks(scores, unigram, size.depths)["deepest_perplexity_rise"]
    rise = scores[-1].perplexity - scores[-2].perplexity
    return _resolved_above(rise, check.stderr, check.units, 0.0, check.dof)


def sweep_fall_and_rise(rng: np.random.Generator, size: SweepSize, yes: bool, missing: str = "rise") -> bool:
    """``perplexity_fall_and_rise`` resolved above 0: the shallowest and the deepest depth's NLL each above
    the
    next deepest's by ``EFFECT`` paired sd (yes), or one of them (``missing``) equal to it (no)."""
    nll = [2.5] * len(size.depths)
    step = EFFECT * PAIRED_SD
    nll[0] += step if yes or missing != "fall" else 0.0
    nll[-1] += step if yes or missing != "rise" else 0.0
    scores, unigram = _scores(rng, size, nll, [LEARNED_GAP] * len(nll))
    check = _sweep_checks(scores, unigram, size.depths)["perplexity_fall_and_rise"]
    return check.interval is not None and check.interval[0] > 0.0


def sweep_trend(rng: np.random.Generator, size: SweepSize, yes: bool, factor: float = TREND_FACTOR) -> bool:
    """The sweep's ``depth_inefficiency_trend`` (residual standard error over depths, t(depths - 2)) above
    0."""
    ratios, _ = _trend_ratios(rng, size.depths, size.probed, yes, factor)
    check = _sweep_checks(
        _scores(rng, size, [2.5] * len(size.depths), [LEARNED_GAP] * len(size.depths))[0],
        UNIGRAM,
        size.depths,
        list(ratios),
    )["depth_inefficiency_trend"]
    value = inefficiency_trend(list(size.depths), list(ratios))
    return value is not None and _resolved_above(value, check.stderr, check.units, 0.0, check.dof)


Trial = Callable[[np.random.Generator, Any, bool], bool]

#: check -> (its trial, what its known yes and known no are); a family's trend is read at the family presets
#: only
PROBE_CHECKS: dict[str, tuple[Trial, str, str]] = {
    "learned": (probe_learned, f"gap {LEARNED_GAP} over the most frequent residue", "gap 0"),
    "resolved (a mean)": (probe_resolved_mean, f"{EFFECT} sd past the threshold", "at the threshold"),
    "resolved (a ratio of means)": (
        probe_resolved_ratio,
        f"{EFFECT} sd past the threshold",
        "at the threshold",
    ),
}
FAMILY_CHECKS: dict[str, tuple[Trial, str, str]] = {
    "every model resolved (smallest share)": (
        family_bound, f"every model {EFFECT} sd past", "one model at the threshold"),
    **{
        f"trend resolved ({factor:g}x)": (
            partial(family_trend, factor=factor),
            f"ratio / {factor:g} per doubling",
            "flat",
        )
        for factor in (TREND_FACTOR, 2.0)
    },
}
SWEEP_CHECKS: dict[str, tuple[Trial, str, str]] = {
    **{
        f"converged (jitter {jitter:.1%})": (
            partial(sweep_converged, jitter=jitter),
            "on its plateau",
            "falling 2x the tolerance over the window",
        )
        for jitter in (0.002, 0.003)
    },
    "learned": (sweep_learned, f"gap {LEARNED_GAP}", "gap 0"),
    "best depth resolved": (sweep_best_depth, f"runner-up {EFFECT} paired sd worse", "tied"),
    "deepest perplexity rise resolved": (sweep_deepest_rise, f"rise {EFFECT} paired sd", "no rise"),
    **{
        f"fall and rise resolved (no {missing})": (
            partial(sweep_fall_and_rise, missing=missing),
            f"fall and rise {EFFECT} paired sd each",
            f"no {missing}",
        )
        for missing in ("rise", "fall")
    },
    **{
        f"trend resolved ({factor:g}x)": (
            partial(sweep_trend, factor=factor),
            f"ratio / {factor:g} per doubling",
            "flat",
        )
        for factor in (TREND_FACTOR, 2.0)
    },
}


def rates(trial: Trial, size: Any, trials: int, seed: int = 0) -> tuple[float, float]:
    """``(pass rate on the known yes, fail rate on the known no)`` over ``trials`` each."""
    rng = np.random.default_rng(seed)
    passed = sum(trial(rng, size, True) for _ in range(trials))
    failed = sum(not trial(rng, size, False) for _ in range(trials))
    return passed / trials, failed / trials


def power_table(trials: int = 400, seed: int = 0) -> list[dict[str, Any]]:
    """Each check x preset: the pass rate on its known yes and the fail rate on its known no."""
    plan: list[tuple[str, dict[str, tuple[Trial, str, str]], list[Any]]] = [
        ("depth.probe", PROBE_CHECKS, [s for s in PROBE_SIZES if len(s.layers) == 1]),
        (
            "depth.probe",
            {"learned": PROBE_CHECKS["learned"], **FAMILY_CHECKS},
            [s for s in PROBE_SIZES if len(s.layers) > 1 and s.name not in ACROSS_FAMILIES],
        ),
        # one checkpoint per PLM family, at similar depths: no depth trend to test, only the every-model bound
        (
            "depth.probe",
            {"learned": PROBE_CHECKS["learned"], "every model resolved (smallest share)": FAMILY_CHECKS[
                "every model resolved (smallest share)"]},
            [s for s in PROBE_SIZES if s.name in ACROSS_FAMILIES],
        ),
        ("depth.sweep", SWEEP_CHECKS, SWEEP_SIZES),
    ]
    rows = []
    for analyzer, checks, sizes in plan:
        for check, (trial, yes, no) in checks.items():
            for size in sizes:
                passed, failed = rates(trial, size, trials, seed)
                rows.append(
                    {
                        "analyzer": analyzer,
                        "check": check,
                        "preset": size.name,
                        "answers": size.answers,
                        "units": getattr(size, "sequences", None) or size.validation,
                        "yes": yes,
                        "no": no,
                        "pass": passed,
                        "fail": failed,
                    }
                )
    return rows


if __name__ == "__main__":
    for row in power_table():
        mark = "" if not row["answers"] or min(row["pass"], row["fail"]) >= 0.95 else "  < 0.95"
        print(
            f"{row['analyzer']:12} {row['check']:34} {row['preset']:13} {row['units']:5}  "
            f"yes ({row['yes']}): pass {row['pass']:.2f}  no ({row['no']}): fail {row['fail']:.2f}{mark}"
        )
