"""The registered analyzers: ``langevin.sweep`` (error and specific heat versus sampling temperature,
transformer vs feed-forward) and ``langevin.contacts`` (mean attention versus the contact map)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from pydantic import Field

from analyzers.base import Analyzer, AnalyzerParams, AnalyzerResult, GpuNeed, NotRunnable, Resources, RunContext
from analyzers.langevin.analysis import precision_at_l, tolerance_precision
from analyzers.langevin.pipeline import ModelSweep, build_models, prepare_data, sweep_model
from analyzers.registry import register
from schemas.run import EvidenceScale


class LangevinParams(AnalyzerParams):
    """Parameters shared by both Langevin analyzers (defaults = the 'smoke' scale)."""

    structure_file: str | None = Field(default=None, description="PDB/mmCIF file; default: idealized bundle.")
    pdb_id: str | None = Field(default=None, description="RCSB id to download (online only), e.g. '2ABD'.")
    cache_dir: str = Field(default=".cache/pdb", description="Where downloaded structures are kept.")
    chain: str | None = Field(default=None, description="Chain id; default: the first chain.")
    model_index: int = Field(default=1, ge=1, description="Model of an NMR ensemble (1-based).")
    cutoff: float = Field(default=4.5, gt=0, description="Heavy-atom contact cutoff in A (not published).")
    num_sequences: int = Field(default=120, ge=10, description="Designed sequences (authors: 11,989).")
    design_temperatures: list[float] = Field(
        default=[3.0, 2.0, 1.4, 1.0, 0.7, 0.5], description="Simulated-tempering ladder; samples from the lowest."
    )
    design_sweeps_between: int = Field(default=2, ge=1, description="Sweeps between kept samples (decorrelation).")
    train_size: int = Field(default=60, ge=1, description="Training sequences (authors: 1000).")
    val_size: int = Field(default=10, ge=0, description="Validation sequences.")
    test_size: int = Field(default=50, ge=1, description="Test sequences.")
    embed_dim: int = Field(default=16, ge=2, description="Transformer d.")
    hidden_dim: int = Field(default=64, ge=2, description="Transformer FFN width m (4d in the paper).")
    num_layers: int = Field(default=1, ge=1, description="Transformer blocks.")
    attention_layer: int = Field(default=0, ge=0, description="Block whose attention is compared with contacts.")
    train_steps: int = Field(default=100, ge=1, description="Adam steps of the briefly trained (ES-like) model.")
    warmup: int = Field(default=50, ge=1, description="Noam warm-up steps (paper: 4000).")
    batch_size: int = Field(default=64, ge=1, description="Training and gradient-variance minibatch.")
    temperatures: list[float] = Field(default=[1e-6, 1e-5, 1e-4], min_length=1, description="Sampling temperatures.")
    sampling_steps: int = Field(default=30, ge=2, description="Sampler steps per temperature.")
    snapshot_every: int = Field(default=15, ge=1, description="Steps between error/attention snapshots.")
    sampling_batch_size: int = Field(default=128, ge=1, description="Sampler minibatch (>= train size: full batch).")
    dt: float = Field(default=1.0, gt=0, description="Sampler time step (authors: 1).")
    m1: float = Field(default=0.1, gt=0, lt=1, description="Friction parameter, c1 = sqrt(1 - m1^2) (authors: 0.1).")
    r: float = Field(
        default=1e-4,
        gt=0,
        le=1,
        description="Share of thermostat noise from minibatch noise (authors: 1e-2; templates 5e-8..1e-7).",
    )
    uniform_mass: bool = Field(
        default=True,
        description="Use the median variance-derived mass for every weight "
        "(per-weight masses can make the SHAKE step unsolvable at these sizes).",
    )
    variance_batches: int = Field(default=5, ge=2, description="Minibatches for the gradient-variance estimate.")


class SweepParams(LangevinParams):
    """``langevin.sweep`` parameters."""

    include_ffn: bool = Field(default=True, description="Also sample the pooling feed-forward baseline.")
    ffn_embed_dim: int = Field(default=16, ge=2, description="Feed-forward d (paper: 64).")
    ffn_hidden_dim: int = Field(default=80, ge=2, description="Feed-forward m (paper: 320).")


class ContactsParams(LangevinParams):
    """``langevin.contacts`` parameters."""

    p_at_l_min_separation: int = Field(default=6, ge=1, description="P@L counts pairs with |i-j| >= this.")
    tolerance_min_separation: int = Field(default=6, ge=0, description="Tolerant metric: pairs with |i-j| > this.")
    tolerance_delta: int = Field(default=1, ge=0, description="Tolerant metric: hit if within Delta of a contact.")


class SweepResult(AnalyzerResult):
    """Errors and specific heats along the temperature list."""

    temperatures: list[float] = Field(description="Sampling temperatures.")
    test_error_by_temperature: list[float] = Field(description="Transformer masked test error per temperature.")
    test_error_min_is_interior: bool = Field(description="Minimum test error at neither end of the list.")
    mean_loss_by_temperature: dict[str, list[float]] = Field(description="Mean training loss per model.")
    specific_heat_by_temperature: dict[str, list[float]] = Field(description="C = var(L)/T^2 per model.")
    specific_heat_peak_ratio_ffn_over_transformer: float | None = Field(
        description="(max C / mean C) of the ffn over the same for the transformer; None without ffn."
    )


class ContactsResult(AnalyzerResult):
    """Attention-derived contact precision along the temperature list."""

    temperatures: list[float] = Field(description="Sampling temperatures.")
    p_at_l_by_temperature: list[float] = Field(description="P@L of the symmetrized mean attention.")
    tolerance_precision_by_temperature: list[float] = Field(description="The paper's tolerant precision.")
    test_error_by_temperature: list[float] = Field(description="Transformer masked test error per temperature.")
    best_contact_temperature_over_best_error_temperature: float = Field(
        description="T of the highest P@L divided by T of the lowest test error."
    )
    rule: str = Field(description="The pair-selection rules of the metrics.")


SCALES: dict[str, dict[str, Any]] = {
    "smoke": {},
    "small": {
        "num_sequences": 1500,
        "train_size": 1000,
        "val_size": 100,
        "test_size": 400,
        "embed_dim": 32,
        "hidden_dim": 128,
        "train_steps": 2000,
        "warmup": 1000,
        "temperatures": [1e-7, 1e-6, 1e-5, 1e-4, 1e-3],
        "sampling_steps": 600,
        "snapshot_every": 100,
        "ffn_embed_dim": 32,
        "ffn_hidden_dim": 160,
    },
    "paper": {
        "num_sequences": 12000,
        "train_size": 1000,
        "val_size": 1000,
        "test_size": 10000,
        "embed_dim": 64,
        "hidden_dim": 256,
        "num_layers": 4,
        "train_steps": 20000,
        "warmup": 4000,
        "temperatures": [1e-7, 1e-6, 1e-5, 3e-5, 1e-4, 3e-4, 1e-3],
        "sampling_steps": 20000,
        "snapshot_every": 1000,
        "variance_batches": 500,
        "ffn_embed_dim": 64,
        "ffn_hidden_dim": 320,
        "r": 1e-7,
        "device": "cuda",
    },
}
NOTES = [
    "Contact cutoff, tempering ladder, training length (no ensemble-based early stopping: a fixed step "
    "count stands in for ES) and metric thresholds are not published; they are parameters here.",
    "Sampling runs on the CPU in float32; the 'paper' scale is sized for a GPU.",
]


def _check_device(device: str) -> None:
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise NotRunnable(f"device {device!r} requested but CUDA is not available here")
    if device.startswith("cuda"):
        raise NotRunnable("the Langevin pipeline runs on the CPU only in this version; use device='cpu'")


def _run_models(params: LangevinParams, ctx: RunContext) -> tuple[dict[str, ModelSweep], dict[str, Any], np.ndarray]:
    _check_device(params.device)
    torch.manual_seed(params.seed)
    steps = {"done": 0}
    total = 2 + len(params.temperatures) * (2 if getattr(params, "include_ffn", False) else 1)

    def report(message: str) -> None:
        steps["done"] += 1
        ctx.report(steps["done"] / total, message)

    contacts, source, designed, splits, data_hash = prepare_data(params, report)
    sweeps = {name: sweep_model(name, model, splits, params, report) for name, model in build_models(params).items()}
    provenance = {
        "structure_source": source,
        "data_hash": data_hash,
        "seed": params.seed,
        "device": params.device,
        "design": {
            "acceptance_swap": designed.acceptance_swap,
            "acceptance_temperature": designed.acceptance_temperature,
            "mean_energy": designed.mean_energy,
            "mean_pairwise_identity": designed.mean_pairwise_identity,
        },
        "models": {
            n: {
                "parameters": s.num_parameters,
                "es_test_error": s.es_test_error,
                "squared_norm": s.squared_norm,
                "final_train_loss": s.train_trace[-1],
            }
            for n, s in sweeps.items()
        },
    }
    return sweeps, provenance, contacts


def _plot_sweep(sweeps: dict[str, ModelSweep], temperatures: list[float], ctx: RunContext) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 3, figsize=(12, 3.5))
    for name, sweep in sweeps.items():
        for axis, key in zip(axes, ("mean_loss", "specific_heat", "test_error"), strict=True):
            axis.plot(temperatures, [getattr(r, key) for r in sweep.records], "o-", label=name)
            axis.set_xscale("log")
            axis.set_xlabel("T")
            axis.set_ylabel(key)
    axes[0].legend()
    figure.tight_layout()
    figure.savefig(ctx.out_dir / "sweep.png", dpi=80)
    plt.close(figure)
    return "sweep.png"


def _scale(name: str, params: LangevinParams, sweeps: dict[str, ModelSweep]) -> EvidenceScale:
    return EvidenceScale(
        name=name,
        parameters=float(sweeps["transformer"].num_parameters),
        data=f"{params.num_sequences} designed sequences",
        description=f"{params.num_layers} block(s), d={params.embed_dim}",
    )


def _scale_name(params: LangevinParams, scales: dict[str, dict[str, Any]], defaults: LangevinParams) -> str:
    dumped = params.model_dump()
    for name, preset in scales.items():
        expected = defaults.model_copy(update=preset).model_dump()
        if all(dumped[k] == expected[k] for k in dumped if k not in ("device", "seed")):
            return name
    return "custom"


@register
class LangevinSweep(Analyzer[SweepParams, SweepResult]):
    """Sample a briefly trained masked LM at several temperatures on the norm sphere; error and C vs T."""

    name = "langevin.sweep"
    summary = "Test error and specific heat vs pseudo-Langevin temperature (transformer vs feed-forward)."
    Params = SweepParams
    Result = SweepResult
    metrics = {
        "test_error_by_temperature": "transformer masked test error per temperature",
        "test_error_min_is_interior": "True when the minimum test error is at neither end of the temperatures",
        "specific_heat_peak_ratio_ffn_over_transformer": "peakedness (max C / mean C) ffn over transformer",
        "temperatures": "the sampling temperatures",
    }
    resources = Resources(gpu=GpuNeed.none, memory_gb=1.0)
    scales = SCALES

    def run(self, params: SweepParams, ctx: RunContext) -> SweepResult:
        sweeps, provenance, _ = _run_models(params, ctx)
        temperatures = list(params.temperatures)
        errors = [r.test_error for r in sweeps["transformer"].records]
        best = int(np.argmin(errors))
        heats = {n: [r.specific_heat for r in s.records] for n, s in sweeps.items()}

        def peakedness(values: list[float]) -> float:
            return float(np.max(values) / max(np.mean(values), 1e-300))

        ratio = peakedness(heats["ffn"]) / peakedness(heats["transformer"]) if "ffn" in heats else None
        result = SweepResult(
            scale=_scale(_scale_name(params, self.scales, SweepParams()), params, sweeps),
            temperatures=temperatures,
            test_error_by_temperature=errors,
            test_error_min_is_interior=0 < best < len(errors) - 1,
            mean_loss_by_temperature={n: [r.mean_loss for r in s.records] for n, s in sweeps.items()},
            specific_heat_by_temperature=heats,
            specific_heat_peak_ratio_ffn_over_transformer=ratio,
            provenance=provenance,
            notes=NOTES,
        )
        result.artifacts.append(_plot_sweep(sweeps, temperatures, ctx))
        (ctx.out_dir / "metrics.json").write_text(result.model_dump_json(indent=2), encoding="utf-8")
        result.artifacts.append("metrics.json")
        return result


@register
class LangevinContacts(Analyzer[ContactsParams, ContactsResult]):
    """Compare the symmetrized mean attention of sampled transformers with the contact map, per temperature."""

    name = "langevin.contacts"
    summary = "P@L and the tolerant precision of mean attention vs contacts, per sampling temperature."
    Params = ContactsParams
    Result = ContactsResult
    metrics = {
        "p_at_l_by_temperature": "P@L (L = sequence length) of mean attention per temperature",
        "tolerance_precision_by_temperature": "tolerant precision (separation, Delta) per temperature",
        "best_contact_temperature_over_best_error_temperature": "T(best P@L) / T(lowest test error)",
    }
    resources = Resources(gpu=GpuNeed.none, memory_gb=1.0)
    scales = {name: {k: v for k, v in preset.items() if not k.startswith("ffn_")} for name, preset in SCALES.items()}

    def run(self, params: ContactsParams, ctx: RunContext) -> ContactsResult:
        sweeps, provenance, contacts = _run_models(params, ctx)
        records = sweeps["transformer"].records
        temperatures = list(params.temperatures)
        p_at_l = [precision_at_l(r.mean_attention, contacts, params.p_at_l_min_separation) for r in records]
        tolerant = [
            tolerance_precision(r.mean_attention, contacts, params.tolerance_min_separation, params.tolerance_delta)
            for r in records
        ]
        errors = [r.test_error for r in records]
        best_contact, best_error = int(np.argmax(p_at_l)), int(np.argmin(errors))
        result = ContactsResult(
            scale=_scale(_scale_name(params, self.scales, ContactsParams()), params, sweeps),
            temperatures=temperatures,
            p_at_l_by_temperature=p_at_l,
            tolerance_precision_by_temperature=tolerant,
            test_error_by_temperature=errors,
            best_contact_temperature_over_best_error_temperature=temperatures[best_contact] / temperatures[best_error],
            rule=(
                f"P@L: top L={len(contacts)} pairs with |i-j| >= {params.p_at_l_min_separation}; tolerant: top L "
                f"pairs with |i-j| > {params.tolerance_min_separation}, hit within Delta={params.tolerance_delta}"
            ),
            provenance=provenance,
            notes=NOTES,
        )
        result.artifacts.append(self._plot(records, contacts, best_contact, ctx))
        np.save(ctx.out_dir / "mean_attention.npy", np.stack([r.mean_attention for r in records]))
        (ctx.out_dir / "metrics.json").write_text(result.model_dump_json(indent=2), encoding="utf-8")
        result.artifacts += ["mean_attention.npy", "metrics.json"]
        return result

    @staticmethod
    def _plot(records, contacts: np.ndarray, best: int, ctx: RunContext) -> str:  # noqa: ANN001
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        figure, axes = plt.subplots(1, 2, figsize=(8, 4))
        axes[0].imshow(records[best].mean_attention, cmap="viridis")
        axes[0].set_title(f"mean attention, T={records[best].temperature:g}")
        axes[1].imshow(contacts, cmap="Greys")
        axes[1].set_title("contact map")
        figure.tight_layout()
        figure.savefig(ctx.out_dir / "attention_vs_contacts.png", dpi=80)
        plt.close(figure)
        return "attention_vs_contacts.png"

