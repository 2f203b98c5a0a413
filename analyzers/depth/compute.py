"""The heavy work of the depth analyzers, imported only when a run starts.

``probe`` (``depth.probe``) resolves, loads and probes one model and writes its metrics and plots
(``probe_one``, also used by ``kb probe``); ``probe_model`` probes a loaded model on a list of sequences
(batched by length) and ``summarize`` turns the per-layer lists into the metrics claims reference.

``sweep`` (``depth.sweep``): for each depth, solve the width for the parameter budget, train an
``EsmForMaskedLM`` with seeded masking, evaluate it on held-out sequences, save it with
``save_pretrained`` and probe it with the probes above; then the trend across depths.
"""

from __future__ import annotations

import json
import math
import platform
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import transformers
from transformers import EsmForMaskedLM, EsmTokenizer

from analyzers.base import NotRunnable, RunContext
from analyzers.depth import plots, tiny
from analyzers.depth.batches import check_lengths, encode
from analyzers.depth.catalog import MODELS, kb_home
from analyzers.depth.data import (
    DESIGNED_DESCRIPTION,
    DESIGNED_FASTA,
    Record,
    attach_structures,
    file_sha256,
    length_batches,
    read_fasta,
    read_structures,
    split_records,
)
from analyzers.depth.loading import LoadedModel, OutOfMemory, ResolvedModel, check_device, load_model
from analyzers.depth.probes import ProbeAccumulator, ProbeOptions, clean_pass, reshape_contributions
from analyzers.depth.skips import skip_probes
from analyzers.depth.spec import (
    DepthProbe,
    DepthProbeParams,
    DepthProbeResult,
    DepthSweep,
    DepthSweepParams,
    DepthSweepResult,
)
from analyzers.depth.training import (
    TrainConfig,
    count_parameters,
    esm_config,
    evaluate_masked_lm,
    save_esm_tokenizer,
    solve_shape,
    train_masked_lm,
)
from schemas.run import EvidenceScale


def probe_model(
    loaded: LoadedModel,
    records: list[Record],
    options: ProbeOptions,
    batch_size: int = 8,
    mask_fraction: float = 0.15,
    seed: int = 0,
    report: Callable[[float, str], None] = lambda fraction, message: None,
    noise_level: float = 0.5,
) -> dict[str, Any]:
    """Every probe over ``records``; returns the per-layer lists (``summarize`` makes the metrics).

    Masked LMs see ``mask_fraction`` of their residues masked, diffusion LMs (DPLM) ``noise_level`` (the
    per-residue masking probability t/T of their training at step t), causal LMs nothing."""
    adapter, device = loaded.adapter, next(loaded.model.parameters()).device
    accumulator = ProbeAccumulator(adapter.num_layers, adapter.objective, adapter.pre_ln)
    masking = {"masked": mask_fraction, "diffusion": noise_level}.get(adapter.objective, 0.0)
    batches = length_batches(records, batch_size)
    for index, batch_records in enumerate(batches):
        batch = encode(batch_records, loaded.tokenizer, loaded.input_format, masking, seed).to(device)
        try:
            record = clean_pass(loaded.model, adapter, batch, accumulator, options)
            if options.skips:
                skip_probes(loaded.model, adapter, record, batch, accumulator, options)
        except torch.OutOfMemoryError as error:
            raise OutOfMemory(
                f"out of memory on {device} probing a batch of {batch.size} sequences of {batch.input_ids.shape[1]} "
                f"tokens: lower --batch-size (now {batch_size}) or --replay-tokens "
                f"(now {options.replay_tokens or 'auto'}), or drop long sequences with --max-length"
            ) from error
        del record
        shape = f"{batch.size} x {batch.input_ids.shape[1]}"
        report((index + 1) / len(batches), f"batch {index + 1}/{len(batches)} ({shape})")
    layers = accumulator.finish()
    reshape_contributions(layers)
    for name in ("deletion_nll", "baseline_nll"):
        if name in layers:
            values = layers.pop(name)
            perplexity_name = name.replace("_nll", "_perplexity")
            layers[perplexity_name] = [math.exp(v) for v in values] if isinstance(values, list) else math.exp(values)
    layers["num_sequences"] = len(records)
    over = " over amino acids (probability summed over 3Di letters)" if adapter.residue_onehot is not None else ""
    layers["evaluation"] = (
        f"masked positions (seeded {masking:.0%}){over}" if adapter.objective == "masked" and masking > 0 else
        f"masked positions at diffusion noise level {masking:g} (step {round(masking * 500)} of 500)"
        if adapter.objective == "diffusion" else
        "next-token prediction" if adapter.objective == "causal" else "all residue positions (nothing masked)"
    )
    return layers


def _mean(values: list[float]) -> float:
    finite = [v for v in values if v is not None and not math.isnan(v)]
    return sum(finite) / len(finite) if finite else float("nan")


def late_half_share(kl: list[float]) -> float:
    """Share of the logit-lens KL decrease ``KL_0 - KL_L`` made by layers ``L//2 .. L-1``."""
    num_layers = len(kl) - 1
    total = kl[0] - kl[-1]
    if not num_layers or abs(total) < 1e-12:
        return float("nan")
    return (kl[num_layers // 2] - kl[-1]) / total


def _effect_on_later_layers(heatmap: list[list[float]], rows: range) -> float:
    """Mean of ``heatmap[s][l]`` over ``s`` in ``rows`` and ``l > s`` (a layer's effect on later computation)."""
    values = [heatmap[s][layer] for s in rows for layer in range(s + 1, len(heatmap))]
    return _mean(values)


def summarize(layers: dict[str, Any]) -> dict[str, float]:
    """Summary metrics a claim can reference, from the per-layer lists. The early half is layers
    ``0 .. L//2 - 1``, the late half ``L//2 .. L-1``."""
    num_layers = layers["num_layers"]
    half = num_layers // 2
    early, late = range(0, half), range(half, num_layers)
    nan = float("nan")
    summary: dict[str, float] = {
        "late_half_kl_drop_fraction": late_half_share(layers["logit_lens_kl"]),
        "late_half_kl_drop_fraction_masked": (
            late_half_share(layers["logit_lens_kl_masked"]) if "logit_lens_kl_masked" in layers else nan
        ),
        "final_layer_erank": layers["erank"][-1],
        "erank_ratio": layers["erank"][-1] / layers["erank"][0] if layers["erank"][0] else nan,
        "stable_rank_ratio": layers["stable_rank"][-1] / layers["stable_rank"][0] if layers["stable_rank"][0] else nan,
    }
    entropy = layers.get("attention_entropy_mean") or []
    summary["attention_entropy_last_over_first"] = entropy[-1] / entropy[0] if entropy and entropy[0] else nan
    effects = layers.get("skip_output_effect")
    if effects:
        summary["mean_skip_output_effect_early_half"] = _mean([effects[i] for i in early])
        summary["mean_skip_output_effect_late_half"] = _mean([effects[i] for i in late])
        early_mean = summary["mean_skip_output_effect_early_half"]
        summary["late_to_early_skip_effect_ratio"] = (
            summary["mean_skip_output_effect_late_half"] / early_mean if early_mean else nan
        )
        summary["early_half_effect_on_later_layers"] = _effect_on_later_layers(layers["skip_heatmap"], early)
        summary["late_half_effect_on_later_layers"] = _effect_on_later_layers(layers["skip_heatmap"], late)
    if "baseline_perplexity" in layers:
        base_ppl, base_acc = layers["baseline_perplexity"], layers["baseline_accuracy"]
        summary["baseline_perplexity"] = base_ppl
        summary["baseline_accuracy"] = base_acc
        summary["max_deletion_perplexity_increase"] = max(p - base_ppl for p in layers["deletion_perplexity"])
        summary["mean_deletion_accuracy_drop_late_half"] = _mean(
            [base_acc - layers["deletion_accuracy"][i] for i in late]
        )
    return summary


def _finite(value: Any) -> float | None:
    """A number for a metric, or None where it is missing or not finite (NaN/inf are not strict JSON)."""
    return float(value) if value is not None and math.isfinite(value) else None


def json_safe(value: Any) -> Any:
    """NaN / inf -> None recursively, so files are strict JSON."""
    if isinstance(value, dict):
        return {key: json_safe(v) for key, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def resolve_spec(
    model: str, seed: int, report: Any = lambda f, m: None, *, cache_dir: Path
) -> tuple[str | ResolvedModel, list[str]]:
    """A built-in name becomes its trained folder (trained on first use, kept under ``cache_dir``);
    notes say what it is."""
    if model in tiny.BUILTINS:
        folder = tiny.trained_tiny_esm(model, seed=seed, report=report, cache=cache_dir / "depth")
        return ResolvedModel(model, folder, "builtin"), [tiny.describe(model)]
    if model.startswith("builtin:"):
        raise ValueError(f"unknown built-in model {model!r}; built-ins: {', '.join(tiny.BUILTINS)}")
    return model, []


def select_records(
    fasta: str | None, max_length: int | None, max_sequences: int, structure_fasta: str | None = None
) -> tuple[Path, list[Record], list[str]]:
    """The sequences to probe (with their 3Di strings when ``structure_fasta`` is given) and notes on
    where they come from."""
    notes: list[str] = []
    path = Path(fasta) if fasta else DESIGNED_FASTA
    records = read_fasta(path, max_length=max_length)
    if path == DESIGNED_FASTA:
        records = split_records(records)[1]
        notes.append(f"sequences: held-out chains of the shipped {DESIGNED_DESCRIPTION}")
    if not records:
        raise ValueError(f"{path}: no sequence left after the length filter (--max-length {max_length})")
    records = records[:max_sequences]
    if structure_fasta is not None:
        records = attach_structures(records, read_structures(structure_fasta), structure_fasta)
        notes.append(f"3Di structure strings from {Path(structure_fasta).name}")
    return path, records, notes


def probe_one(params: DepthProbeParams, ctx: RunContext, out_dir: Path, title: str = "") -> DepthProbeResult:
    """Load, probe and write ``depth_metrics.json`` and plots into ``out_dir``; the typed result.

    Built-in models are trained into ``ctx.cache_dir`` (kept) or, without one, a scratch folder
    (trained again next time); imported models are looked up there too."""
    with tempfile.TemporaryDirectory(prefix="kb-depth-") as scratch:
        return _probe_one(params, ctx, out_dir, title, Path(ctx.cache_dir) if ctx.cache_dir else Path(scratch))


def _probe_one(params: DepthProbeParams, ctx: RunContext, out_dir: Path, title: str, cache: Path) -> DepthProbeResult:
    check_device(params.device)
    torch.manual_seed(params.seed)
    out_dir.mkdir(parents=True, exist_ok=True)
    ctx.report(0.0, f"preparing {params.model}")
    spec, notes = resolve_spec(params.model, params.seed, lambda f, m: ctx.report(0.3 * f, m), cache_dir=cache)
    fasta, records, data_notes = select_records(
        params.fasta, params.max_length, params.max_sequences, params.structure_fasta
    )
    notes += data_notes
    ctx.report(0.3, f"loading {params.model}")
    loaded: LoadedModel = load_model(
        spec, params.device, params.dtype, params.trust_remote_code, allow_download=not ctx.offline,
        cache_dir=ctx.cache_dir,
    )
    check_lengths(records, loaded.tokenizer, loaded.input_format, loaded.adapter.max_tokens, params.model)
    if params.structure_fasta is not None and loaded.input_format != "saprot":
        raise ValueError(f"structure_fasta given, but {params.model} takes no structure tokens (SaProt does)")
    if not loaded.adapter.pre_ln:
        notes.append("post-LN model: the residual decomposition (contributions, sublayer skips) is not defined")
    if loaded.input_format == "saprot" and params.structure_fasta is None:
        notes.append("SaProt fed residues as '<aa>#' (structure tokens unknown)")
    if loaded.adapter.objective == "diffusion":
        notes.append(f"diffusion LM probed at noise level {params.noise_level:g} (residues masked with that "
                     f"probability, diffusion step {round(params.noise_level * 500)} of 500)")
    if loaded.adapter.residual_scale != 1.0:
        notes.append(f"residual branches divided by {loaded.adapter.residual_scale:.4g} inside each layer (ESM-C); "
                     "contributions are of the scaled updates the residual stream receives")
    options = ProbeOptions(
        top_k=params.top_k, skips=params.skips, sublayer_skips=params.sublayer_skips, future=params.future,
        replay_tokens=params.replay_tokens,
    )
    layers = probe_model(
        loaded, records, options, params.batch_size, params.mask_fraction, params.seed,
        lambda f, m: ctx.report(0.35 + 0.6 * f, f"{params.model}: {m}"), params.noise_level,
    )
    notes += layers.pop("notes", [])
    summary = summarize(layers)
    metrics_path = out_dir / "depth_metrics.json"
    metrics_path.write_text(
        json.dumps(json_safe({"model": params.model, **summary, "layers": layers}), indent=2, allow_nan=False),
        encoding="utf-8",
    )
    artifacts = [metrics_path.name, *plots.write_plots(layers, out_dir, title)]
    card = MODELS.get(loaded.resolved.model_id)
    provenance = {
        **loaded.provenance,
        "data": str(fasta),
        "data_hash": file_sha256(fasta),
        "num_sequences": len(records),
        "seed": params.seed,
        "python": platform.python_version(),
        "gpu_name": torch.cuda.get_device_name(params.device) if params.device.startswith("cuda") else None,
    }
    if loaded.resolved.source == "builtin":
        provenance["training"] = json.loads((loaded.resolved.folder / "training.json").read_text(encoding="utf-8"))
    parameters = float(loaded.provenance["num_parameters"])
    nan = float("nan")
    ctx.report(1.0, "done")
    return DepthProbeResult(
        model=params.model,
        num_layers=loaded.adapter.num_layers,
        **{name: _finite(summary.get(name, nan)) for name in DepthProbe.metrics},
        layers=json_safe(layers),
        scale=EvidenceScale(
            name="custom", parameters=parameters,
            data=f"{len(records)} sequences from {fasta.name}",
            description=card.family if card else None,
        ),
        artifacts=artifacts,
        provenance=provenance,
        notes=notes,
    )


CONVERGENCE_RULE = ("a depth is converged when its training loss over the last 10 % of steps is within 1 % of "
                    "its mean over the 10 % before (no longer falling) and its masked accuracy beats always "
                    "predicting the most frequent residue by at least 0.02")


def unigram_accuracy(records: list[Any]) -> float:
    """Accuracy of always predicting the most frequent residue of ``records`` (the unigram floor)."""
    counts: dict[str, int] = {}
    for record in records:
        for letter in record.sequence:
            counts[letter] = counts.get(letter, 0) + 1
    total = sum(counts.values())
    return max(counts.values()) / total if total else 0.0


def convergence(losses: list[float], accuracy: float, unigram: float) -> tuple[bool, str]:
    """Whether a training run is converged by ``CONVERGENCE_RULE``, and why (numbers included)."""
    window = max(1, len(losses) // 10)
    if len(losses) < 20:
        return False, f"{len(losses)} steps are too few to tell"
    last = sum(losses[-window:]) / window
    before = sum(losses[-2 * window : -window]) / window
    falling = (before - last) / max(abs(before), 1e-12)
    if falling > 0.01:
        return False, (f"training loss still falling ({before:.3f} -> {last:.3f}, {falling:.1%} over the last "
                       "10 % of steps)")
    if accuracy < unigram + 0.02:
        return False, f"masked accuracy {accuracy:.3f} is at the unigram level ({unigram:.3f})"
    return True, f"loss flat ({before:.3f} -> {last:.3f}), accuracy {accuracy:.3f} > unigram {unigram:.3f}"


def _corpus(fasta: str | None) -> Path:
    if fasta is None:
        return DESIGNED_FASTA
    path = Path(fasta).expanduser()
    if not path.exists() and not path.is_absolute() and (kb_home() / "data" / path).exists():
        path = kb_home() / "data" / path
    if not path.exists():
        raise NotRunnable(
            f"training corpus {fasta} not found (looked here and under {kb_home() / 'data'}); this scale trains on "
            "a UniRef50 FASTA you provide: download UniRef50 (uniprot.org) and pass fasta=PATH or put it there"
        )
    return path


def _scaled(report: Callable[[float, str], None], offset: float, width: float) -> Callable[[float, str], None]:
    """``report`` for a sub-task occupying ``[offset, offset + width]`` of the progress bar."""

    def scaled(fraction: float, message: str) -> None:
        report(offset + width * fraction, message)

    return scaled


def run_sweep(params: DepthSweepParams, ctx: RunContext, scale_name: str) -> DepthSweepResult:
    """Train and probe one model per depth, write ``sweep_metrics.json``, plots and checkpoints into
    ``ctx.out_dir``; the result's evidence scale is named ``scale_name``."""
    corpus = _corpus(params.fasta)
    check_device(params.device)
    records = read_fasta(corpus, min_length=8)
    train, val = split_records(records, params.val_fraction)
    if not train or not val:
        raise ValueError(f"{corpus}: needs both training and validation sequences ({len(train)} / {len(val)})")
    val = val[: params.max_val_sequences]
    notes = [f"corpus: {DESIGNED_DESCRIPTION}"] if corpus == DESIGNED_FASTA else []
    checkpoints = ctx.out_dir / "checkpoints"
    checkpoints.mkdir(parents=True, exist_ok=True)
    save_esm_tokenizer(checkpoints)
    tokenizer = EsmTokenizer.from_pretrained(checkpoints)
    shapes = [solve_shape(depth, params.parameter_budget, params.num_heads) for depth in params.depths]
    unigram = unigram_accuracy(val)
    widths = [width for width, _ in shapes]
    rows: list[dict[str, Any]] = []
    per_depth_layers: dict[int, dict[str, Any]] = {}
    share = 1.0 / len(params.depths)
    for index, (depth, (width, intermediate)) in enumerate(zip(params.depths, shapes, strict=True)):
        base = index * share

        def report(fraction: float, message: str, base: float = base, depth: int = depth) -> None:
            ctx.report(base + share * fraction, f"{depth} layers: {message}")

        torch.manual_seed(params.seed)
        model = EsmForMaskedLM(
            esm_config(depth, width, params.num_heads, intermediate, max_tokens=params.max_residues + 2)
        )
        config = TrainConfig(
            steps=params.steps, batch_size=params.batch_size, learning_rate=params.learning_rate,
            warmup_steps=params.warmup_steps, max_residues=params.max_residues, seed=params.seed,
            device=params.device, dtype=params.dtype,
        )
        losses = train_masked_lm(model, tokenizer, train, config, _scaled(report, 0.0, 0.8))
        perplexity, accuracy = evaluate_masked_lm(
            model, tokenizer, val, seed=params.seed, device=params.device, max_residues=params.max_residues
        )
        folder = checkpoints / f"depth-{depth:02d}"
        model.save_pretrained(folder)
        save_esm_tokenizer(folder)
        del model
        report(0.85, f"val perplexity {perplexity:.2f}; probing")
        loaded = load_model(ResolvedModel(f"sweep-depth-{depth}", folder, "trained"), params.device)
        layers = probe_model(
            loaded, [r for r in val if len(r.sequence) <= params.max_residues][: params.probe_sequences],
            ProbeOptions(sublayer_skips=params.sublayer_skips), params.probe_batch_size, 0.15, params.seed,
            _scaled(report, 0.85, 0.15),
        )
        layers.pop("notes", None)
        per_depth_layers[depth] = layers
        tail = losses[-max(1, len(losses) // 10) :]
        converged, why = convergence(losses, accuracy, unigram)
        rows.append({"converged": converged, "convergence": why,
            "depth": depth, "width": width, "intermediate": intermediate,
            "parameters": count_parameters(depth, width, params.num_heads, intermediate),
            "train_loss": sum(tail) / len(tail), "val_perplexity": perplexity, "masked_accuracy": accuracy,
            **summarize(layers), "weights_hash": loaded.provenance["weights_hash"],
        })

    def column(key: str) -> list[float | None]:
        return [_finite(row.get(key)) for row in rows]

    parameters = [row["parameters"] for row in rows]
    summary: dict[str, Any] = {
        "depths": params.depths,
        "widths_by_depth": widths,
        "intermediate_by_depth": [intermediate for _, intermediate in shapes],
        "parameters_by_depth": parameters,
        "parameter_spread": max(parameters) / min(parameters) - 1,
        "train_loss_by_depth": [row["train_loss"] for row in rows],
        "val_perplexity_by_depth": [row["val_perplexity"] for row in rows],
        "masked_accuracy_by_depth": [row["masked_accuracy"] for row in rows],
        "best_depth": (best := min(rows, key=lambda row: row["val_perplexity"])["depth"]),
        "best_depth_is_interior": min(params.depths) < best < max(params.depths),
        "late_half_kl_drop_fraction_by_depth": column("late_half_kl_drop_fraction"),
        "late_to_early_skip_effect_ratio_by_depth": column("late_to_early_skip_effect_ratio"),
        "late_half_effect_on_later_layers_by_depth": column("late_half_effect_on_later_layers"),
        "erank_ratio_by_depth": column("erank_ratio"),
        "stable_rank_ratio_by_depth": column("stable_rank_ratio"),
        "attention_entropy_last_over_first_by_depth": column("attention_entropy_last_over_first"),
    }
    summary["depth_inefficiency_trend"] = inefficiency_trend(
        params.depths, summary["late_to_early_skip_effect_ratio_by_depth"]
    )
    summary["converged_by_depth"] = [row["converged"] for row in rows]
    summary["convergence_by_depth"] = [row["convergence"] for row in rows]
    summary["unigram_accuracy"] = unigram
    summary["convergence_rule"] = CONVERGENCE_RULE
    untestable = {}
    unconverged = [f"{row['depth']} layers: {row['convergence']}" for row in rows if not row["converged"]]
    if unconverged:
        # The sweep compares trained models; while one is still learning, the comparison measures how fast each
        # depth optimises at this budget, not what depth is worth.
        why = "not trained to convergence at this budget (" + "; ".join(unconverged) + ")"
        for metric in ("best_depth", "best_depth_is_interior", "val_perplexity_by_depth", "masked_accuracy_by_depth",
                       "depth_inefficiency_trend"):
            untestable[metric] = why
    metrics_path = ctx.out_dir / "sweep_metrics.json"
    metrics_path.write_text(
        json.dumps(json_safe({**summary, "per_depth": rows, "layers_by_depth": per_depth_layers}), indent=2,
                   allow_nan=False),
        encoding="utf-8",
    )
    artifacts = [metrics_path.name, *plots.write_sweep_plots(summary, per_depth_layers, ctx.out_dir)]
    artifacts += sorted(str(p.relative_to(ctx.out_dir)) for p in checkpoints.rglob("*") if p.is_file())
    ctx.report(1.0, "done")
    return DepthSweepResult(
        **summary,
        untestable=untestable,
        scale=EvidenceScale(
            name=scale_name, parameters=float(sum(parameters) / len(parameters)),
            data=f"{len(train)} training / {len(val)} validation sequences from {corpus.name}",
            description=(
                f"depths {params.depths} at ~{params.parameter_budget:.3g} parameters, {params.steps} steps"
            ),
        ),
        artifacts=artifacts,
        provenance={
            "data": str(corpus), "data_hash": file_sha256(corpus), "device": params.device, "dtype": params.dtype,
            "seed": params.seed, "python": platform.python_version(),
            "versions": {"torch": torch.__version__, "transformers": transformers.__version__},
            "weights_hash_by_depth": {row["depth"]: row["weights_hash"] for row in rows},
        },
        notes=notes + [
            "depth_inefficiency_trend = -slope of log(late/early mean skip output effect) over log2(depth); "
            "> 0 means deeper models use their later layers less",
            f"(width, FFN width) solved per depth for ~{params.parameter_budget:.3g} parameters: "
            f"{dict(zip(params.depths, shapes, strict=True))}",
        ],
    )

def _slope(x: list[float], y: list[float]) -> float | None:
    pairs = [(a, b) for a, b in zip(x, y, strict=True) if b is not None and math.isfinite(b)]
    if len(pairs) < 2:
        return None
    mean_x = sum(a for a, _ in pairs) / len(pairs)
    mean_y = sum(b for _, b in pairs) / len(pairs)
    spread = sum((a - mean_x) ** 2 for a, _ in pairs)
    return sum((a - mean_x) * (b - mean_y) for a, b in pairs) / spread if spread else None


def inefficiency_trend(depths: list[int], ratios: list[float | None]) -> float | None:
    """Minus the slope of log(late/early skip output effect) over log2(depth) (see the module docstring)."""
    logs = [math.log(r) if r is not None and r > 0 else None for r in ratios]
    slope = _slope([math.log2(d) for d in depths], logs)  # type: ignore[arg-type]
    return None if slope is None else -slope


def probe(analyzer: DepthProbe, params: DepthProbeParams, ctx: RunContext) -> DepthProbeResult:
    """``depth.probe``: probe one model into ``ctx.out_dir``."""
    result = probe_one(params, ctx, ctx.out_dir)
    result.scale.name = analyzer.scale_name(params)
    return result


def sweep(analyzer: DepthSweep, params: DepthSweepParams, ctx: RunContext) -> DepthSweepResult:
    """``depth.sweep``: train and probe one model per depth into ``ctx.out_dir``."""
    return run_sweep(params, ctx, analyzer.scale_name(params))
