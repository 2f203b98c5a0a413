"""The depth sweep (``depth.sweep``): masked PLMs of several depths trained at one parameter and token budget,
each trained until its validation loss is flat or declared unconverged, then compared and probed.

Per depth: the width is solved so parameter counts match the budget with a fixed head size; the step count
follows from ``tokens_per_parameter``; the model trains on a streamed, length-bucketed corpus with gradient
accumulation (and, on CUDA, bf16 autocast and activation checkpointing), evaluated on a fixed held-out set
``evaluations`` times; it is saved (safetensors) and probed with ``depth.probe``'s probes.

The verdict can fail. A depth is converged only when its validation loss improved by less than
``convergence_tolerance`` (relative) over its last ``convergence_window`` evaluations and its masked
accuracy beats the unigram floor by 0.02; it has learned only when its accuracy beats that floor by more than
t(n - 1) standard errors over its n validation sequences. Every per-depth number rests on its depth's two
preconditions, every comparison across depths on all of them (``sweep_checks``: "not trained to convergence at
this budget: ..."). The best depth is resolved only when every other depth is worse by at least t(n - 1)
standard errors of the paired per-sequence NLL difference (Bonferroni over the k - 1 comparisons): the depths
that are not form its interval. ``analyzers/depth/power.py`` measures each check's power.

With ``ctx.checkpoint_dir`` the sweep checkpoints every ``checkpoint_every`` steps and after each depth
(plain tensors and JSON, written atomically), and a rerun with the same folder resumes where it stopped and
ends with the result an uninterrupted run gives.
"""

from __future__ import annotations

import hashlib
import json
import math
import platform
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import transformers
from transformers import EsmForMaskedLM, EsmTokenizer

from analyzers.base import (
    MetricCheck,
    NotRunnable,
    Precondition,
    RunContext,
    extreme_interval,
    interval_quantile,
    truth_interval,
)
from analyzers.depth import plots
from analyzers.depth.compute import finite_or_none, probe_model, summarize
from analyzers.depth.data import DESIGNED_DESCRIPTION, DESIGNED_FASTA, Record, file_sha256, unigram_accuracy
from analyzers.depth.loading import ResolvedModel, check_device, load_model
from analyzers.depth.probes import ProbeOptions
from analyzers.depth.spec import DepthSweep, DepthSweepParams, DepthSweepResult
from analyzers.depth.stream import StreamedBatches, validation_records
from analyzers.depth.training import (
    MaskedLMTrainer,
    SweepTrainConfig,
    TokenScores,
    check_fits,
    count_parameters,
    esm_config,
    masked_token_scores,
    save_esm_tokenizer,
    solve_shape,
    training_memory_bytes,
)
from analyzers.depth.uncertainty import jackknife, probe_estimates, replicate_means
from analyzers.files import atomic_folder, atomic_write_bytes, json_safe
from schemas.run import EvidenceScale

#: The margin (in accuracy) a model must beat the unigram floor by, and the z the best depth must reach.
ABOVE_UNIGRAM = 0.02
MIN_Z = 2.0
#: Past this many steps the result keeps block means of the training loss (the full curve is in curves.json).
MAX_CURVE_POINTS = 2000
#: Per-depth lists of probe numbers: each element rests on its depth's model (no error bar across sequences
#: yet).
PROBE_LISTS = (
    "late_half_kl_drop_fraction_by_depth", "late_to_early_skip_effect_ratio_by_depth", "erank_ratio_by_depth",
    "attention_entropy_last_over_first_by_depth",
)


def convergence_rule(window: int, tolerance: float) -> str:
    """The rule in words, with its numbers."""
    return (
        f"a depth is converged when its validation loss (mean NLL at fixed masked positions) improved by "
        f"less than {tolerance:.1%} (relative) from the evaluation before its last {window} evaluations to "
        f"the best of those {window}, and its masked accuracy beats always predicting the most frequent "
        f"residue by at least {ABOVE_UNIGRAM}"
    )


def convergence(
    val_loss: list[float], accuracy: float, unigram: float, window: int = 5, tolerance: float = 0.01
) -> tuple[bool, str, float | None]:
    """``(converged, why with its numbers, relative improvement over the last window)`` by
    ``convergence_rule``."""
    if len(val_loss) < window + 1:
        return False, f"{len(val_loss)} validation evaluations are too few for a window of {window}", None
    before, best = val_loss[-window - 1], min(val_loss[-window:])
    improvement = (before - best) / max(abs(before), 1e-12)
    if improvement >= tolerance:
        return (
            False,
            (
                f"validation loss still falling: {before:.4f} -> {best:.4f} ({improvement:.2%} over the last "
                f"{window} evaluations, threshold {tolerance:.2%})"
            ),
            improvement,
        )
    if accuracy < unigram + ABOVE_UNIGRAM:
        return (
            False,
            (f"masked accuracy {accuracy:.3f} is at the unigram level ({unigram:.3f} + {ABOVE_UNIGRAM})"),
            improvement,
        )
    return (
        True,
        (
            f"validation loss flat: {before:.4f} -> {best:.4f} ({improvement:.2%} < {tolerance:.2%} over the "
            f"last {window} evaluations); accuracy {accuracy:.3f} > unigram {unigram:.3f}"
        ),
        improvement,
    )


def paired_z(best: TokenScores, other: TokenScores) -> float:
    """How many standard errors ``other``'s total validation NLL lies above ``best``'s, pairing the two
    models' NLL sums sequence by sequence (same sequences, same masked positions): ``mean(d) / (std(d) /
    sqrt(n))``."""
    diffs = [o - b for o, b in zip(other.nll_sums, best.nll_sums, strict=True)]
    n = len(diffs)
    mean = sum(diffs) / n
    variance = sum((d - mean) ** 2 for d in diffs) / max(1, n - 1)
    if variance == 0:
        return math.inf if mean > 0 else 0.0
    return mean / math.sqrt(variance / n)


def _slope(x: list[float], y: list[float | None]) -> float | None:
    pairs = [(a, b) for a, b in zip(x, y, strict=True) if b is not None and math.isfinite(b)]
    if len(pairs) < 2:
        return None
    mean_x = sum(a for a, _ in pairs) / len(pairs)
    mean_y = sum(b for _, b in pairs) / len(pairs)
    spread = sum((a - mean_x) ** 2 for a, _ in pairs)
    return sum((a - mean_x) * (b - mean_y) for a, b in pairs) / spread if spread else None


def inefficiency_trend(depths: list[int], ratios: list[float | None]) -> float | None:
    """Minus the slope of log(late/early skip output effect) over log2(depth) (see ``spec``)."""
    logs = [math.log(r) if r is not None and r > 0 else None for r in ratios]
    slope = _slope([math.log2(d) for d in depths], logs)
    return None if slope is None else -slope


def trend_members(depths: list[int], ratios: list[float | None]) -> Precondition:
    """Every depth gives the trend a point: a finite, positive late/early ratio (its log). A depth whose ratio
    is missing or not positive fails it, named, rather than being left out of the slope."""
    bad = [
        f"{d} layers ({'no ratio' if r is None or not math.isfinite(r) else f'ratio {r:.3g}: log undefined'})"
        for d, r in zip(depths, ratios, strict=True)
        if r is None or not math.isfinite(r) or r <= 0
    ]
    detail = (
        ("member left out of the trend: " + "; ".join(bad))
        if bad
        else f"all {len(depths)} depths have a ratio"
    )
    return Precondition(name="every member", passed=not bad, detail=detail)


def trend_stderr(depths: list[int], ratios: list[float | None]) -> float | None:
    """Standard error of ``inefficiency_trend``'s least-squares slope from its residuals (3+ depths
    needed)."""
    pairs = [
        (math.log2(d), math.log(r)) for d, r in zip(depths, ratios, strict=True) if r is not None and r > 0
    ]
    if len(pairs) < 3:
        return None
    mean_x = sum(x for x, _ in pairs) / len(pairs)
    spread = sum((x - mean_x) ** 2 for x, _ in pairs)
    slope = _slope([x for x, _ in pairs], [y for _, y in pairs])
    if slope is None or not spread:
        return None
    mean_y = sum(y for _, y in pairs) / len(pairs)
    residuals = sum((y - mean_y - slope * (x - mean_x)) ** 2 for x, y in pairs)
    return math.sqrt(residuals / (len(pairs) - 2) / spread)


def ratio_stderr(numerators: list[float], counts: list[int]) -> float:
    """Standard error of sum(numerators) / sum(counts) over sequences (the ratio estimator)."""
    n, total = len(counts), sum(counts)
    ratio = sum(numerators) / total
    if n < 2:
        return math.inf
    return (
        math.sqrt(n / (n - 1) * sum((a - ratio * c) ** 2 for a, c in zip(numerators, counts, strict=True)))
        / total
    )


def _depth_preconditions(rows: list[dict[str, Any]], scores: list[TokenScores],
                         unigram: float) -> list[list[Precondition]]:
    """Each depth's *converged* and *learned* (against the most frequent residue, t over its sequences)."""
    per_depth: list[list[Precondition]] = []
    for row, score in zip(rows, scores, strict=True):
        accuracy = sum(score.correct) / sum(score.counts)
        # the sequences are the units: masked tokens of one sequence share its difficulty, so a binomial error
        # over tokens read a model at the baseline as learned one run in sixteen at `paper` (README, Power)
        error = ratio_stderr([float(c) for c in score.correct], score.counts)
        quantile = interval_quantile(len(score.counts))
        margin = quantile * error if quantile is not None and math.isfinite(error) else math.inf
        beats = accuracy - unigram > margin
        per_depth.append([
            Precondition(name="converged", passed=bool(row["converged"]), detail=f"{row['depth']} layers: "
                         f"{row['convergence']}"),
            Precondition(name="learned", passed=bool(beats), detail=f"{row['depth']} layers "
                         f"{'learned' if beats else 'did not learn'} beyond the unigram baseline (accuracy "
                         f"{accuracy:.4f} vs {unigram:.4f}, t({len(score.counts) - 1}) x SE over sequences = "
                         f"{margin:.4f})"),
        ])
    return per_depth


def sweep_checks(depths: list[int], rows: list[dict[str, Any]], scores: list[TokenScores], unigram: float,
                 ratios: list[float | None]) -> dict[str, MetricCheck]:
    """Every sweep metric path's uncertainty and preconditions (module docstring)."""
    per_depth = _depth_preconditions(rows, scores, unigram)
    every = []
    for index, kind in enumerate(("converged", "learned")):
        bad = [conditions[index] for conditions in per_depth if not conditions[index].passed]
        detail = ("not trained to convergence at this budget: " if kind == "converged" else "") + "; ".join(
            c.detail for c in bad) if bad else f"every depth {kind}"
        every.append(Precondition(name=kind, passed=not bad, detail=detail))
    checks: dict[str, MetricCheck] = {}
    for index, (row, score, conditions) in enumerate(zip(rows, scores, per_depth, strict=True)):
        log_error = ratio_stderr(score.nll_sums, score.counts)
        validation = len(score.counts)
        checks[f"val_perplexity_by_depth.{index}"] = MetricCheck(
            stderr=row["val_perplexity"] * log_error if math.isfinite(log_error) else None,
            source="sequences",
            units=validation,
            preconditions=conditions,
            note="ratio-estimator standard error over validation sequences",
        )
        accuracy_error = ratio_stderr([float(c) for c in score.correct], score.counts)
        checks[f"masked_accuracy_by_depth.{index}"] = MetricCheck(
            stderr=accuracy_error if math.isfinite(accuracy_error) else None, source="sequences",
            units=validation, preconditions=conditions)
        errors = row.get("probe_stderr") or {}  # absent from a depth checkpointed by an earlier version
        probed = (row.get("layers") or {}).get("num_sequences")
        for metric in PROBE_LISTS:
            probe_error = errors.get(metric.removesuffix("_by_depth"))
            checks[f"{metric}.{index}"] = MetricCheck(
                stderr=probe_error if isinstance(probe_error, float) and math.isfinite(probe_error) else None,
                source="sequences", units=probed if isinstance(probed, int) else None,
                preconditions=conditions, note="jackknife standard error across the probed sequences")
    for metric in ("val_perplexity_by_depth", "masked_accuracy_by_depth", *PROBE_LISTS):
        checks[metric] = MetricCheck(source="sequences")
    order = sorted(range(len(rows)), key=lambda i: rows[i]["val_perplexity"])
    best = order[0]
    paired = len(scores[best].counts)
    # a depth is told apart from the best by the paired t test over the validation sequences (t(n - 1)); the
    # best of k needs all k - 1 comparisons, each Bonferroni-corrected: uncorrected, a tie is resolved one run
    # in twenty, the power rule's whole error budget (analyzers/depth/README.md, Power)
    needed = interval_quantile(paired, comparisons=len(rows) - 1) or math.inf
    tied = [best] + [i for i in order[1:] if not paired_z(scores[best], scores[i]) >= max(MIN_Z, needed)]
    tied_depths = sorted(depths[i] for i in tied)
    note = (f"depths within {max(MIN_Z, needed):.3g} standard errors (t over {paired} validation sequences, "
            f"Bonferroni over {len(rows) - 1} comparisons) of "
            f"the paired per-sequence NLL difference of the best: {tied_depths}")
    checks["best_depth"] = MetricCheck(interval=(tied_depths[0], tied_depths[-1]), source="sequences",
                                       units=paired, preconditions=every, note=note)
    interior = [min(depths) < d < max(depths) for d in tied_depths]
    checks["best_depth_is_interior"] = MetricCheck(
        interval=truth_interval(all(interior), not any(interior)),
        source="sequences",
        units=paired,
        preconditions=every,
        note=note,
    )
    checks["deepest_perplexity_rise"] = MetricCheck(
        stderr=deepest_rise(scores)[1], source="sequences", units=len(scores[-1].counts), preconditions=every,
        derived_from=["val_perplexity_by_depth"],
        note="paired jackknife over the validation sequences (same positions)")
    checks["perplexity_fall_and_rise"] = fall_and_rise_check(scores, every)
    points = sum(1 for r in ratios if r is not None and math.isfinite(r) and r > 0)
    checks["depth_inefficiency_trend"] = MetricCheck(
        stderr=trend_stderr(depths, ratios), source="depths", units=points, dof=max(points - 2, 0),
        preconditions=[*every, trend_members(depths, ratios)],
        derived_from=["late_to_early_skip_effect_ratio_by_depth"],
        note="least-squares standard error of the slope from its residuals across depths, t(depths - 2)")
    return checks


def perplexity_difference(upper: TokenScores, lower: TokenScores) -> tuple[float, float | None]:
    """``(difference, stderr)``: validation perplexity of ``upper`` minus that of ``lower``, with the paired
    delete-one-sequence jackknife standard error (both scored on the same sequences and positions)."""
    rows = {
        name: (
            torch.tensor(score.nll_sums, dtype=torch.float64),
            torch.tensor(score.counts, dtype=torch.float64),
        )
        for name, score in (("upper", upper), ("lower", lower))
    }
    full, left_out = replicate_means(rows)
    value, error = jackknife(lambda m: m["upper"].exp() - m["lower"].exp(), full, left_out)
    return float(value), (float(error) if math.isfinite(float(error)) else None)


def deepest_rise(scores: list[TokenScores]) -> tuple[float, float | None]:
    """The deepest depth's validation perplexity minus the next deepest's (``perplexity_difference``)."""
    return perplexity_difference(scores[-1], scores[-2])


def fall_and_rise(scores: list[TokenScores]) -> tuple[float, float | None, float, float | None] | None:
    """``(fall, its stderr, rise, its stderr)`` of the validation perplexity, both against the next deepest
    depth: the shallowest minus it (the fall) and the deepest minus it (the rise). None under three depths,
    where the shallowest is the next deepest."""
    if len(scores) < 3:
        return None
    return (*perplexity_difference(scores[0], scores[-2]), *perplexity_difference(scores[-1], scores[-2]))


def fall_and_rise_check(scores: list[TokenScores], every: list[Precondition]) -> MetricCheck:
    """``perplexity_fall_and_rise``'s check: the interval of the smaller of the fall and the rise from their
    simultaneous intervals (``extreme_interval``), so that both must be resolved above 0 to settle "falls
    and rises again", and either resolved below 0 refutes it."""
    parts = fall_and_rise(scores)
    units = len(scores[-1].counts)
    if parts is None:
        return MetricCheck(source="sequences", units=units, preconditions=[*every, Precondition(
            name="three depths", passed=False, detail="a fall and a rise need at least three depths")])
    fall, fall_error, rise, rise_error = parts
    interval = extreme_interval([(fall, fall_error, units), (rise, rise_error, units)])
    return MetricCheck(
        interval=interval, source="sequences", units=units, preconditions=every,
        derived_from=["val_perplexity_by_depth"],
        note=(f"the fall (shallowest minus next deepest) {fall:.4g} +- {_error(fall_error)} and the rise "
              f"(deepest minus next deepest) {rise:.4g} +- {_error(rise_error)} (paired jackknife over "
              f"{units} validation sequences), intervals Bonferroni-corrected over the two"),
    )


def _error(stderr: float | None) -> str:
    return "no standard error" if stderr is None else f"{stderr:.2g}"


def corpus_path(fasta: str | None, ctx: RunContext) -> Path:
    """The training FASTA: the shipped designed corpus by default; a relative name not found here is looked up
    in the KB home's ``data`` folder (the sibling of ``ctx.cache_dir``)."""
    if fasta is None:
        return DESIGNED_FASTA
    path = Path(fasta).expanduser()
    data = ctx.cache_dir.parent / "data" if ctx.cache_dir is not None else None
    if not path.exists() and not path.is_absolute() and data is not None and (data / path).exists():
        path = data / path
    if not path.is_file():
        where = f" and under {data}" if data is not None else ""
        raise NotRunnable(
            f"training corpus {fasta} not found (looked here{where}); this scale trains on a UniRef50 FASTA "
            f"you "
            "provide: download uniref50.fasta.gz from uniprot.org, decompress it, and pass fasta=PATH or "
            "put it there"
        )
    return path


def _downsample(values: list[float]) -> tuple[list[float], int]:
    """Block means so at most ``MAX_CURVE_POINTS`` remain; ``(values, block size)``."""
    block = max(1, math.ceil(len(values) / MAX_CURVE_POINTS))
    if block == 1:
        return values, 1
    return [
        sum(values[i : i + block]) / len(values[i : i + block]) for i in range(0, len(values), block)
    ], block


def _fingerprint(params: DepthSweepParams, corpus: Path) -> str:
    """What a checkpoint must match to be resumed: every parameter that changes the numbers, and the
    corpus."""
    kept = params.model_dump(exclude={"checkpoint_every", "probe_batch_size"})
    text = json.dumps(
        [kept, file_sha256(corpus) if corpus.stat().st_size < 1 << 30 else corpus.stat().st_size],
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _copy_folder_atomic(source: Path, target: Path) -> None:
    """Copy ``source`` to ``target`` through a temporary sibling and one rename (a reader never sees half)."""
    with atomic_folder(target) as staging:
        shutil.copytree(source, staging, dirs_exist_ok=True)


def _check_memory(params: DepthSweepParams, shapes: list[tuple[int, int]]) -> None:
    """Refuse, before any training, a depth whose training would not fit the GPU's free memory."""
    if not params.device.startswith("cuda"):
        return
    free, _ = torch.cuda.mem_get_info(torch.device(params.device))
    for depth, (width, intermediate) in zip(params.depths, shapes, strict=True):
        parameters = count_parameters(depth, width, width // params.head_size, intermediate)
        estimate = training_memory_bytes(depth, width, intermediate, parameters, params.batch_tokens,
                                         params.gradient_checkpointing, params.dtype)
        try:
            check_fits(
                estimate,
                free,
                f"training {depth} layers x width {width} on {params.device} with micro-batches "
                f"of {params.batch_tokens} tokens",
            )
        except MemoryError as error:
            raise NotRunnable(str(error)) from error


def _train_depth(
    params: DepthSweepParams, ctx: RunContext, corpus: Path, tokenizer: Any, val: list[Record], depth: int,
    shape: tuple[int, int], steps: int, folder: Path | None, report: Any,
) -> tuple[EsmForMaskedLM, dict[str, Any], TokenScores]:
    """Train one depth (resuming from ``folder`` when it holds a checkpoint); the model, curves, final
    scores."""
    width, intermediate = shape
    torch.manual_seed(params.seed)
    model = EsmForMaskedLM(esm_config(depth, width, width // params.head_size, intermediate,
                                      max_tokens=params.max_residues + 2))
    source = StreamedBatches(
        corpus,
        params.batch_tokens,
        params.max_residues,
        params.val_fraction,
        params.seed,
        params.buffer_sequences,
    )

    def score(m: Any) -> TokenScores:
        return masked_token_scores(m, tokenizer, val, seed=params.seed, device=params.device,
                                   max_residues=params.max_residues)

    config = SweepTrainConfig(
        steps=steps, learning_rate=params.learning_rate, warmup_steps=round(params.warmup_fraction * steps),
        accumulation=params.accumulation, eval_every=max(1, math.ceil(steps / params.evaluations)),
        checkpoint_every=params.checkpoint_every if folder is not None else 0,
        gradient_checkpointing=params.gradient_checkpointing, seed=params.seed, device=params.device,
        dtype=params.dtype,
    )
    trainer = MaskedLMTrainer(model, tokenizer, source, config, validate=lambda m: score(m).loss)
    if folder is not None and trainer.load(folder):
        report(trainer.step / steps * 0.8, f"resumed at step {trainer.step}/{steps}")

    def save() -> None:
        assert folder is not None
        trainer.save(folder)
        ctx.checkpoint_saved()

    curves = trainer.run(lambda f, m: report(0.8 * f, m), save if folder is not None else None)
    return model, curves.as_dict(), score(model)


def sweep(analyzer: DepthSweep, params: DepthSweepParams, ctx: RunContext) -> DepthSweepResult:
    """``depth.sweep``'s compute function: train and probe one model per depth into ``ctx.out_dir``."""
    return run_sweep(params, ctx, analyzer.scale_name(params))


def run_sweep(params: DepthSweepParams, ctx: RunContext, scale_name: str) -> DepthSweepResult:
    """Train and probe one model per depth, write ``sweep_metrics.json``, ``curves.json``, plots and the
    trained models into ``ctx.out_dir``; the result's evidence scale is named ``scale_name``."""
    corpus = corpus_path(params.fasta, ctx)
    check_device(params.device)
    val = validation_records(corpus, params.val_fraction, params.max_val_sequences)
    if not val:
        raise ValueError(f"{corpus}: no validation sequence (val_fraction {params.val_fraction})")
    mean_residues = StreamedBatches(corpus, params.batch_tokens, params.max_residues, params.val_fraction,
                                    params.seed, params.buffer_sequences).mean_residues_per_batch()
    steps = max(1, math.ceil(params.tokens_per_parameter * params.parameter_budget
                             / (params.accumulation * mean_residues)))
    shapes = [solve_shape(depth, params.parameter_budget, params.head_size) for depth in params.depths]
    _check_memory(params, shapes)
    notes = [f"corpus: {DESIGNED_DESCRIPTION}"] if corpus == DESIGNED_FASTA else []
    out_models = ctx.out_dir / "checkpoints"
    out_models.mkdir(parents=True, exist_ok=True)
    save_esm_tokenizer(out_models)
    tokenizer = EsmTokenizer.from_pretrained(out_models)
    unigram = unigram_accuracy(val)
    resume = ctx.checkpoint_dir
    if resume is not None:
        notes += _prepare_resume(resume, _fingerprint(params, corpus))
    rows: list[dict[str, Any]] = []
    scores: list[TokenScores] = []
    share = 1.0 / len(params.depths)
    for index, (depth, shape) in enumerate(zip(params.depths, shapes, strict=True)):

        def report(fraction: float, message: str, base: float = index * share, depth: int = depth) -> None:
            ctx.report(base + share * fraction, f"{depth} layers: {message}")

        folder = resume / f"depth-{depth:02d}" if resume is not None else None
        target = out_models / f"depth-{depth:02d}"
        if folder is not None and (folder / "done.json").is_file():
            row = json.loads((folder / "done.json").read_text(encoding="utf-8"))
            _copy_folder_atomic(folder / "model", target)
            report(1.0, "finished earlier (from checkpoint)")
        else:
            model, curves, final = _train_depth(
                params, ctx, corpus, tokenizer, val, depth, shape, steps, folder, report
            )
            model.save_pretrained(target)
            save_esm_tokenizer(target)
            del model
            report(0.85, f"val perplexity {final.perplexity:.3f}; probing")
            row = _probe_depth(params, target, val, unigram, depth, shape, curves, final, report)
            if folder is not None:
                _keep_depth(folder, target, row)
                ctx.checkpoint_saved()
        rows.append(row)
        scores.append(TokenScores(**row["scores"]))
    return _result(params, ctx, scale_name, corpus, rows, scores, unigram, steps, val, notes)


def _prepare_resume(resume: Path, fingerprint: str) -> list[str]:
    """Mark the checkpoint folder with this sweep's fingerprint, discarding the depths a sweep with other
    parameters left there; the note saying so, if it did."""
    resume.mkdir(parents=True, exist_ok=True)
    marker = resume / "sweep.json"
    notes = []
    if marker.is_file() and json.loads(marker.read_text(encoding="utf-8")).get("fingerprint") != fingerprint:
        notes.append("checkpoints of a sweep with other parameters were found and discarded")
        for old in resume.glob("depth-*"):
            shutil.rmtree(old)
    atomic_write_bytes(marker, json.dumps({"fingerprint": fingerprint}).encode("utf-8"))
    return notes


def _probe_depth(
    params: DepthSweepParams, target: Path, val: list[Record], unigram: float, depth: int,
    shape: tuple[int, int], curves: dict[str, Any], final: TokenScores, report: Callable[[float, str], None],
) -> dict[str, Any]:
    """Probe the model trained at ``depth`` (saved in ``target``) and judge its convergence: its row of the
    sweep (sizes, training, validation scores, probe numbers and their standard errors)."""
    loaded = load_model(ResolvedModel(f"sweep-depth-{depth}", target, "trained"), params.device)
    layers = probe_model(
        loaded,
        [r for r in val if len(r.sequence) <= params.max_residues][: params.probe_sequences],
        ProbeOptions(sublayer_skips=params.sublayer_skips),
        params.probe_batch_size,
        0.15,
        params.seed,
        lambda f, m: report(0.85 + 0.15 * f, m),
    )
    layers.pop("notes", None)
    estimates = probe_estimates(layers.pop("per_sequence"), depth)
    width, intermediate = shape
    converged, why, improvement = convergence(
        curves["val_loss"],
        final.accuracy,
        unigram,
        params.convergence_window,
        params.convergence_tolerance,
    )
    parameters = count_parameters(depth, width, width // params.head_size, intermediate)
    tail = curves["train_loss"][-max(1, len(curves["train_loss"]) // 10) :]
    row: dict[str, Any] = json_safe(
        {
            "depth": depth,
            "width": width,
            "heads": width // params.head_size,
            "intermediate": intermediate,
            "parameters": parameters,
            "tokens_per_parameter": curves["tokens_seen"] / parameters,
            "train_loss": sum(tail) / len(tail),
            "val_perplexity": final.perplexity,
            "masked_accuracy": final.accuracy,
            "converged": converged,
            "convergence": why,
            "val_loss_improvement": improvement,
            "curves": curves,
            "scores": {"nll_sums": final.nll_sums, "correct": final.correct, "counts": final.counts},
            **summarize(layers),
            "layers": layers,
            "weights_hash": loaded.provenance["weights_hash"],
            "probe_stderr": {name: error for name, (_, error) in estimates.items()},
        }
    )
    return row


def _keep_depth(folder: Path, target: Path, row: dict[str, Any]) -> None:
    """Checkpoint a finished depth: its model and row, in place of its training state."""
    _copy_folder_atomic(target, folder / "model")
    atomic_write_bytes(folder / "done.json", json.dumps(row).encode("utf-8"))
    for old in folder.glob("state-*.safetensors"):
        old.unlink()
    (folder / MaskedLMTrainer.STATE).unlink(missing_ok=True)


def _column(rows: list[dict[str, Any]], key: str) -> list[float | None]:
    """One metric across depths, non-finite values as None."""
    return [finite_or_none(row.get(key)) for row in rows]


def _learning_curves(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each depth's learning curves for the result: the training loss averaged down, the validation loss."""
    curves = []
    for row in rows:
        train, block = _downsample(row["curves"]["train_loss"])
        curves.append(
            {
                "train_loss": train,
                "train_loss_every": block,
                "val_steps": row["curves"]["val_steps"],
                "val_loss": row["curves"]["val_loss"],
            }
        )
    return curves


def _sweep_summary(
    params: DepthSweepParams, rows: list[dict[str, Any]], scores: list[TokenScores], unigram: float,
    steps: int,
) -> dict[str, Any]:
    """The result's numbers across depths: sizes, training, perplexities, the depth probes per depth, the best
    depth and how surely it beats the runner-up, and the trend of the late layers' use with depth."""
    parameters = [row["parameters"] for row in rows]
    order = sorted(range(len(rows)), key=lambda i: rows[i]["val_perplexity"])
    best, runner_up = order[0], order[1]
    z = paired_z(scores[best], scores[runner_up])
    summary: dict[str, Any] = {
        "depths": params.depths,
        "widths_by_depth": [row["width"] for row in rows],
        "heads_by_depth": [row["heads"] for row in rows],
        "intermediate_by_depth": [row["intermediate"] for row in rows],
        "parameters_by_depth": parameters,
        "parameter_spread": max(parameters) / min(parameters) - 1,
        "steps": steps,
        "tokens_per_parameter_by_depth": [row["tokens_per_parameter"] for row in rows],
        "train_loss_by_depth": [row["train_loss"] for row in rows],
        "learning_curves_by_depth": _learning_curves(rows),
        "val_loss_improvement_by_depth": _column(rows, "val_loss_improvement"),
        "converged_by_depth": [row["converged"] for row in rows],
        "convergence_by_depth": [row["convergence"] for row in rows],
        "unigram_accuracy": unigram,
        "convergence_rule": convergence_rule(params.convergence_window, params.convergence_tolerance),
        "best_depth_z": finite_or_none(z),
        "val_perplexity_by_depth": [row["val_perplexity"] for row in rows],
        "masked_accuracy_by_depth": [row["masked_accuracy"] for row in rows],
        "best_depth": rows[best]["depth"],
        "best_depth_is_interior": min(params.depths) < rows[best]["depth"] < max(params.depths),
        "late_half_kl_drop_fraction_by_depth": _column(rows, "late_half_kl_drop_fraction"),
        "late_to_early_skip_effect_ratio_by_depth": _column(rows, "late_to_early_skip_effect_ratio"),
        "late_half_effect_on_later_layers_by_depth": _column(rows, "late_half_effect_on_later_layers"),
        "erank_ratio_by_depth": _column(rows, "erank_ratio"),
        "stable_rank_ratio_by_depth": _column(rows, "stable_rank_ratio"),
        "attention_entropy_last_over_first_by_depth": _column(rows, "attention_entropy_last_over_first"),
    }
    summary["depth_inefficiency_trend"] = inefficiency_trend(
        params.depths, summary["late_to_early_skip_effect_ratio_by_depth"]
    )
    summary["deepest_perplexity_rise"] = deepest_rise(scores)[0]
    parts = fall_and_rise(scores)
    summary["perplexity_fall_and_rise"] = None if parts is None else min(parts[0], parts[2])
    return summary


def _write_sweep_files(
    out_dir: Path, summary: dict[str, Any], checks: dict[str, Any], rows: list[dict[str, Any]]
) -> list[str]:
    """``sweep_metrics.json``, ``curves.json`` and the plots; the artifacts' names, checkpoints included."""
    per_depth_layers = {row["depth"]: row["layers"] for row in rows}
    metrics_path = out_dir / "sweep_metrics.json"
    slim = [{k: v for k, v in row.items() if k not in ("layers", "curves", "scores")} for row in rows]
    metrics_path.write_text(
        json.dumps(
            json_safe(
                {
                    **summary,
                    "checks": {k: c.model_dump() for k, c in checks.items()},
                    "per_depth": slim,
                    "layers_by_depth": per_depth_layers,
                }
            ),
            indent=2,
            allow_nan=False,
        ),
        encoding="utf-8",
    )
    curves_path = out_dir / "curves.json"
    curves_path.write_text(json.dumps({row["depth"]: row["curves"] for row in rows}), encoding="utf-8")
    artifacts = [metrics_path.name, curves_path.name]
    artifacts += plots.write_sweep_plots(summary, per_depth_layers, out_dir)
    artifacts += write_learning_curves(rows, summary["convergence_rule"], out_dir)
    artifacts += sorted(
        str(p.relative_to(out_dir)) for p in (out_dir / "checkpoints").rglob("*") if p.is_file()
    )
    return artifacts


def _result(
    params: DepthSweepParams, ctx: RunContext, scale_name: str, corpus: Path, rows: list[dict[str, Any]],
    scores: list[TokenScores], unigram: float, steps: int, val: list[Record], notes: list[str],
) -> DepthSweepResult:
    """The verdict across depths, files and the typed result."""
    summary = _sweep_summary(params, rows, scores, unigram, steps)
    # While one depth is still learning, comparing depths measures how fast each optimises at this budget, not
    # what depth is worth (the best depth moved from 2 to 8 between 400 and 1,600 steps in issue 13): every
    # comparison rests on every depth's convergence.
    checks = sweep_checks(
        params.depths, rows, scores, unigram, summary["late_to_early_skip_effect_ratio_by_depth"]
    )
    artifacts = _write_sweep_files(ctx.out_dir, summary, checks, rows)
    ctx.report(1.0, "done")
    parameters = summary["parameters_by_depth"]
    solved = {row["depth"]: (row["width"], row["intermediate"]) for row in rows}
    return DepthSweepResult(
        **summary,
        checks=checks,
        scale=EvidenceScale(
            name=scale_name,
            parameters=float(sum(parameters) / len(parameters)),
            data=f"{rows[0]['tokens_per_parameter']:.0f} training residues per parameter from {corpus.name}, "
            f"{len(val)} validation sequences",
            description=f"depths {params.depths} at ~{params.parameter_budget:.3g} parameters, head size "
            f"{params.head_size}, {params.tokens_per_parameter:g} tokens/parameter ({steps} steps)",
        ),
        artifacts=artifacts,
        provenance={
            "data": str(corpus),
            "data_hash": file_sha256(corpus),
            "device": params.device,
            "dtype": params.dtype,
            "seed": params.seed,
            "python": platform.python_version(),
            "versions": {"torch": torch.__version__, "transformers": transformers.__version__},
            "weights_hash_by_depth": {row["depth"]: row["weights_hash"] for row in rows},
        },
        notes=notes
        + [
            "depth_inefficiency_trend = -slope of log(late/early mean skip output effect) over log2(depth); "
            "> 0 means deeper models use their later layers less",
            f"(width, FFN width) solved per depth for ~{params.parameter_budget:.3g} parameters at head size "
            f"{params.head_size}: {solved}",
        ],
    )


def write_learning_curves(rows: list[dict[str, Any]], rule: str, out_dir: Path) -> list[str]:
    """Training loss per step and validation loss per evaluation, one line per depth (``sweep_curves``)."""
    fig, (ax_train, ax_val) = plots.plt.subplots(1, 2, figsize=(10, 3.8))
    for row in rows:
        label = f"{row['depth']} layers" + ("" if row["converged"] else " (not converged)")
        train = row["curves"]["train_loss"]
        line = ax_train.plot(range(1, len(train) + 1), train, lw=0.7, alpha=0.8, label=label)[0]
        ax_val.plot(
            row["curves"]["val_steps"],
            row["curves"]["val_loss"],
            marker="o",
            ms=3,
            color=line.get_color(),
            ls="-" if row["converged"] else "--",
            label=label,
        )
    ax_train.set(xlabel="step", ylabel="training loss (masked NLL)", title="training loss per step")
    ax_val.set(xlabel="step", ylabel="validation loss (masked NLL)", title="validation loss")
    for ax in (ax_train, ax_val):
        ax.legend(fontsize=7)
    fig.suptitle(rule, fontsize=6, wrap=True)
    return plots._save(fig, out_dir, "sweep_curves")
