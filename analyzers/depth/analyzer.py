"""``depth.probe``: how much each layer of a PLM changes the residual stream and the prediction."""

from __future__ import annotations

import hashlib
import json
import math
import os
import platform
import tempfile
from pathlib import Path
from typing import Any, Literal

import torch
from pydantic import Field

from analyzers.base import Analyzer, AnalyzerParams, AnalyzerResult, GpuNeed, NotRunnable, Resources, RunContext
from analyzers.depth import plots
from analyzers.depth.data import read_fasta
from analyzers.depth.models import MODELS, adapter_for, build_tiny_esm, load_model, weight_files
from analyzers.depth.probes import mask_tokens, probe_batch, summarize
from analyzers.registry import register
from schemas.run import EvidenceScale

BUILTIN_TINY = "builtin:tiny-esm"
DEFAULT_FASTA = Path(__file__).parent / "data" / "designed.fasta"
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


class DepthProbeParams(AnalyzerParams):
    """Which model to probe, on which sequences."""

    model: str = Field(
        default=BUILTIN_TINY,
        description=f"Hub id or local folder; {BUILTIN_TINY!r} is a RANDOM tiny ESM (smoke tests, not a real PLM).",
    )
    fasta: str | None = Field(default=None, description="FASTA of sequences; default: the shipped synthetic set.")
    max_sequences: int = Field(default=16, ge=1, description="Sequences probed (first N after filtering).")
    max_length: int = Field(default=256, ge=8, description="Longer sequences are dropped.")
    batch_size: int = Field(default=4, ge=1, description="Sequences per forward pass.")
    dtype: Literal["float32", "float16", "bfloat16"] = Field(default="float32", description="Model dtype.")
    mask_fraction: float = Field(default=0.15, ge=0, lt=1, description="Masked-LM: fraction of residues masked.")
    skips: bool = Field(default=True, description="Run the layer-skip perturbation (one extra pass per layer).")


class DepthProbeResult(AnalyzerResult):
    """Summary metrics and per-layer lists."""

    late_half_kl_drop_fraction: float = Field(description="Share of the logit-lens KL decrease in later half.")
    mean_skip_output_effect_early_half: float = Field(description="Mean output effect of skipping an early layer.")
    mean_skip_output_effect_late_half: float = Field(description="Mean output effect of skipping a late layer.")
    final_layer_erank: float = Field(description="Effective rank (Roy & Vetterli) of the last residual state.")
    num_layers: int = Field(description="Layers of the probed model.")
    layers: dict[str, Any] = Field(description="Per-layer lists (logit lens, contributions, ranks, skips, ...).")


def _sha256_files(paths: list[Path]) -> str | None:
    if not paths:
        return None
    digest = hashlib.sha256()
    for path in paths:
        with path.open("rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


def _json_safe(value: Any) -> Any:
    """NaN -> None recursively, so the metrics file is strict JSON."""
    if isinstance(value, dict):
        return {key: _json_safe(v) for key, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _mean_lists(values: list[Any]) -> Any:
    """Element-wise mean of equally shaped nested lists (NaN-aware); strings pass through."""
    first = values[0]
    if isinstance(first, str):
        return first
    if isinstance(first, dict):
        return {key: _mean_lists([v[key] for v in values]) for key in first}
    if isinstance(first, list):
        return [_mean_lists([v[i] for v in values]) for i in range(len(first))]
    finite = [float(v) for v in values if not math.isnan(float(v))]
    return sum(finite) / len(finite) if finite else float("nan")


@register
class DepthProbe(Analyzer[DepthProbeParams, DepthProbeResult]):
    """Logit lens, residual contributions, layer skips, ranks and attention entropy of one PLM."""

    name = "depth.probe"
    summary = "Curse-of-depth probes of a PLM: logit lens, layer contributions, layer-skip effects, ranks."
    Params = DepthProbeParams
    Result = DepthProbeResult
    metrics = {
        "late_half_kl_drop_fraction": "fraction of the logit-lens KL(p_l || p_L) decrease made by the later half",
        "mean_skip_output_effect_early_half": "mean ||softmax(z)-softmax(z')|| when skipping an early-half layer",
        "mean_skip_output_effect_late_half": "mean ||softmax(z)-softmax(z')|| when skipping a late-half layer",
        "final_layer_erank": "effective rank of the final residual state's token matrix",
    }
    resources = Resources(gpu=GpuNeed.recommended, memory_gb=4.0)
    scales = {
        "smoke": {"model": BUILTIN_TINY, "max_sequences": 4, "max_length": 64},
        "small": {"model": "facebook/esm2_t6_8M_UR50D", "max_sequences": 16},
        "paper": {"model": "facebook/esm2_t33_650M_UR50D", "max_sequences": 16, "device": "cuda"},
    }

    def run(self, params: DepthProbeParams, ctx: RunContext) -> DepthProbeResult:
        if params.device.startswith("cuda") and not torch.cuda.is_available():
            raise NotRunnable("CUDA asked for but not available")
        torch.manual_seed(params.seed)
        ctx.out_dir.mkdir(parents=True, exist_ok=True)
        notes: list[str] = []
        model_id = params.model
        if model_id == BUILTIN_TINY:
            home = Path(os.environ.get("KB_HOME", tempfile.gettempdir())) / "cache" / "depth"
            model_id = str(build_tiny_esm(home / f"tiny-esm-seed{params.seed}", seed=params.seed))
            notes.append("model is a randomly initialised tiny ESM (4 layers, width 64), not a trained PLM")
        ctx.report(0.05, f"loading {params.model}")
        model, tokenizer = load_model(model_id, params.device, DTYPES[params.dtype])
        adapter = adapter_for(model)
        fasta = Path(params.fasta) if params.fasta else DEFAULT_FASTA
        if fasta == DEFAULT_FASTA:
            notes.append("sequences are synthetic uniform-random amino-acid strings, not natural proteins")
        records = read_fasta(fasta, max_length=params.max_length)[: params.max_sequences]
        if not records:
            raise ValueError(f"{fasta}: no sequence left after the length filter (max_length={params.max_length})")
        if not adapter.pre_ln:
            notes.append("post-LN: residual decomposition not defined; contributions are not computed")

        special = torch.tensor(sorted(set(tokenizer.all_special_ids)))
        batches = [records[i : i + params.batch_size] for i in range(0, len(records), params.batch_size)]
        per_batch = []
        for index, batch in enumerate(batches):
            enc = tokenizer([seq for _, seq in batch], return_tensors="pt", padding=True)
            ids, attention = enc["input_ids"], enc["attention_mask"]  # (batch, seq)
            real = attention.bool() & ~torch.isin(ids, special)
            masked = None
            if adapter.objective == "masked" and params.mask_fraction > 0 and tokenizer.mask_token_id is not None:
                ids, masked = mask_tokens(ids, real, tokenizer.mask_token_id, params.mask_fraction, params.seed + index)
            dev = params.device
            per_batch.append(
                probe_batch(
                    model,
                    adapter,
                    ids.to(dev),
                    attention.to(dev),
                    real.to(dev),
                    None if masked is None else masked.to(dev),
                    with_skips=params.skips,
                )
            )
            ctx.report(0.1 + 0.8 * (index + 1) / len(batches), f"batch {index + 1}/{len(batches)}")
        layers = _mean_lists(per_batch)
        summary = summarize(layers)

        metrics_path = ctx.out_dir / "depth_metrics.json"
        metrics_path.write_text(
            json.dumps(_json_safe({**summary, "layers": layers}), indent=2, allow_nan=False), encoding="utf-8"
        )
        artifacts = [metrics_path.name, *plots.write_plots(layers, ctx.out_dir)]
        ctx.report(1.0, "done")
        import transformers

        card = MODELS.get(params.model)
        provenance = {
            "model": params.model,
            "model_path": model_id,
            "architecture": adapter.architecture,
            "weights_sha256": _sha256_files(weight_files(model_id)),
            "data": str(fasta),
            "data_sha256": hashlib.sha256(fasta.read_bytes()).hexdigest(),
            "num_sequences": len(records),
            "device": params.device,
            "dtype": params.dtype,
            "seed": params.seed,
            "versions": {
                "torch": torch.__version__,
                "transformers": transformers.__version__,
                "python": platform.python_version(),
            },
        }
        num_params = float(sum(p.numel() for p in model.parameters()))
        scale_name = {v["model"]: k for k, v in self.scales.items()}.get(params.model, "custom")
        return DepthProbeResult(
            **summary,
            num_layers=layers["num_layers"] if isinstance(layers["num_layers"], int) else int(layers["num_layers"]),
            layers=layers,
            scale=EvidenceScale(
                name=scale_name, parameters=card.approx_params if card else num_params, data=fasta.name
            ),
            artifacts=artifacts,
            provenance=provenance,
            notes=notes,
        )
