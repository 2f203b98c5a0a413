"""The registered Langevin analyzers. Three of them share one cached experiment (``pipeline``):

* ``langevin.sweep``: loss, specific heat and errors against the sampling temperature, transformer vs
  the pooling feed-forward baseline (claims: test error minimal at intermediate T; the feed-forward net's
  sharper specific-heat peak);
* ``langevin.contacts``: the mean attention against the contact map (P@L, the tolerant metric, best
  block, ES vs OT; claim: contacts best at temperatures above the best-learning one);
* ``langevin.similarity``: per-layer similarity q of sampled weights (claim: LayerNorm weights conserved);

and ``langevin.design`` checks the designed sequences alone (seconds).

Importing this module registers the analyzers and stays cheap: numpy, torch and the result computations
(``result_builders``, ``pipeline``) are imported inside ``run``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import Field

from analyzers.base import Analyzer, AnalyzerParams, AnalyzerResult, GpuNeed, Resources, RunContext, operator_only
from analyzers.langevin import cli  # noqa: F401  (registers the `kb langevin` commands)
from analyzers.langevin.params import DEFAULT_LADDER, SCALES, LangevinParams
from analyzers.langevin.results import ContactsResult, SimilarityResult, SweepResult
from analyzers.registry import register
from schemas.run import EvidenceScale

if TYPE_CHECKING:
    from analyzers.langevin.pipeline import Experiment

# Where and how the experiment runs, not what it measures: a run keeps its preset's scale name whatever
# these are (the paper preset run on a CPU is still the paper scale, only slower).
RUN_SETUP_FIELDS = frozenset({"device", "work_dir", "workers", "cache_dir"})


def write_json(path: Path, payload: Any) -> None:
    """Write JSON atomically (temp file, then rename)."""
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(json.dumps(payload, indent=2, default=str), encoding="utf-8")
    temporary.replace(path)


def _run(params: LangevinParams, ctx: RunContext, models: list[str] | None) -> Experiment:
    from analyzers.langevin.pipeline import run_experiment  # torch and numpy: imported when an analyzer runs

    ctx.out_dir.mkdir(parents=True, exist_ok=True)
    return run_experiment(params, lambda fraction, message: ctx.report(fraction, message), models)


def _finish(result: AnalyzerResult, ctx: RunContext) -> None:
    ctx.out_dir.mkdir(parents=True, exist_ok=True)
    write_json(ctx.out_dir / "metrics.json", result.model_dump(mode="json"))
    result.artifacts.append("metrics.json")
    ctx.report(1.0, "done")


class SweepParams(LangevinParams):
    """``langevin.sweep`` parameters (the shared experiment's)."""


class ContactsParams(LangevinParams):
    """``langevin.contacts`` parameters; the feed-forward baseline is not needed."""

    include_ffn: bool = Field(default=False, description="Also train and sample the feed-forward baseline.")


class SimilarityParams(LangevinParams):
    """``langevin.similarity`` parameters (the shared experiment's)."""


def _contacts_scales() -> dict[str, dict[str, Any]]:
    return {name: {**preset, "include_ffn": False} for name, preset in SCALES.items()}


@register
class LangevinSweep(Analyzer[SweepParams, SweepResult]):
    """Sample trained masked LMs at several temperatures on the norm sphere; loss, C and errors vs T."""

    name = "langevin.sweep"
    summary = "Loss, specific heat and train/validation/test error vs pseudo-Langevin temperature (transformer vs FFN)."
    version = "2"
    Params = SweepParams
    Result = SweepResult
    metrics: ClassVar[dict[str, str]] = {
        "test_error_min_is_interior": "True when the transformer's lowest test error is at neither end of the list",
        "specific_heat_peak_ratio_ffn_over_transformer": "peakedness (max C / mean C) ffn over transformer",
        "loss_jump_ratio_ffn_over_transformer": "largest loss rise between neighbouring T, ffn over transformer",
        "best_test_error_minus_es": "lowest sampled test error minus the ES model's (negative: sampling helps)",
        "test_error_by_temperature": "transformer masked test error per temperature",
        "peak_temperature": "temperature of the specific-heat peak per model",
        "max_norm_drift": "largest deviation of |w|^2 from its constraint while sampling",
        "temperatures": "the sampling temperatures",
    }
    resources = Resources(gpu=GpuNeed.recommended, memory_gb=2.0)
    scales = SCALES
    scale_ignored_fields = RUN_SETUP_FIELDS

    def run(self, params: SweepParams, ctx: RunContext) -> SweepResult:
        from analyzers.langevin.result_builders import sweep_result

        experiment = _run(params, ctx, None)
        result = sweep_result(experiment, ctx.out_dir, self.scale_name(params))
        _finish(result, ctx)
        return result


@register
class LangevinContacts(Analyzer[ContactsParams, ContactsResult]):
    """Compare the symmetrized mean attention of sampled transformers with the contact map, per temperature."""

    name = "langevin.contacts"
    summary = "P@L and the tolerant precision of mean attention vs contacts per temperature; ES vs OT."
    version = "2"
    Params = ContactsParams
    Result = ContactsResult
    metrics: ClassVar[dict[str, str]] = {
        "best_contact_temperature_over_best_error_temperature": "T(best tolerant precision) / T(lowest test error)",
        "best_p_at_l_temperature_over_best_error_temperature": "T(best P@L) / T(lowest test error)",
        "p_at_l_by_temperature": "P@L (L = sequence length) of the best block's mean attention per temperature",
        "p_at_l_chance_by_temperature": "Per temperature: P@L, chance level and shuffled-contact p-value",
        "tolerance_precision_by_temperature": "tolerant precision (separation, Delta) per temperature",
        "ot_minus_es_tolerance_precision": "tolerant precision of the OT weights minus the ES weights'",
        "ot_minus_es_p_at_l": "P@L of the OT weights minus the ES weights'",
    }
    resources = Resources(gpu=GpuNeed.recommended, memory_gb=2.0)
    scales = _contacts_scales()
    scale_ignored_fields = RUN_SETUP_FIELDS

    def run(self, params: ContactsParams, ctx: RunContext) -> ContactsResult:
        from analyzers.langevin.result_builders import contacts_result

        experiment = _run(params, ctx, ["transformer"])
        result = contacts_result(experiment, ctx.out_dir, self.scale_name(params))
        _finish(result, ctx)
        return result


@register
class LangevinSimilarity(Analyzer[SimilarityParams, SimilarityResult]):
    """Per-layer similarity q between weight vectors sampled at the best temperature."""

    name = "langevin.similarity"
    summary = "Distribution of the per-layer similarity q of sampled weights; LayerNorm vs other layers."
    version = "1"
    Params = SimilarityParams
    Result = SimilarityResult
    metrics: ClassVar[dict[str, str]] = {
        "normalization_q_minus_other_q": "transformer: mean q of LayerNorm weights minus that of the other layers",
        "normalization_mean_q": "mean q of LayerNorm weights per model",
        "mean_q_by_layer": "mean q per model and layer",
    }
    resources = Resources(gpu=GpuNeed.recommended, memory_gb=2.0)
    scales = SCALES
    scale_ignored_fields = RUN_SETUP_FIELDS

    def run(self, params: SimilarityParams, ctx: RunContext) -> SimilarityResult:
        from analyzers.langevin.result_builders import similarity_result

        experiment = _run(params, ctx, None)
        result = similarity_result(experiment, ctx.out_dir, self.scale_name(params))
        _finish(result, ctx)
        return result


# -- sequence design alone -----------------------------------------------------------------------------
class DesignParams(AnalyzerParams):
    """``langevin.design`` parameters: the structure and the simulated tempering."""

    structure_file: str | None = operator_only(description="PDB/mmCIF file; default: the idealized bundle.")
    pdb_id: str | None = Field(default=None, description="RCSB id to download (online only, cached).")
    cache_dir: str | None = operator_only(description="Downloaded structures (default: <KB_HOME>/cache/pdb).")
    chain: str | None = Field(default=None, description="Chain id; default: the first chain with amino acids.")
    model_index: int = Field(default=1, ge=1, description="Model of an NMR ensemble (1-based).")
    cutoff: float = Field(default=4.5, gt=0, description="Heavy-atom contact cutoff in A.")
    bundle_cutoff: float = Field(default=6.5, gt=0, description="Pseudo-atom cutoff of the idealized bundle, A.")
    design_min_separation: int = Field(default=1, ge=1, description="Design energy uses contacts with |i-j| >= this.")
    sequence: str | None = Field(default=None, description="Composition; default: the structure's (bundle: ACBP).")
    num_sequences: int = Field(default=600, ge=2, description="Sequences to design (authors: 11,989).")
    interaction_seed: int = Field(default=0, description="Seed of the random 20x20 interaction matrix B.")
    design_temperatures: list[float] = Field(default=list(DEFAULT_LADDER), min_length=2)
    design_burn_in_sweeps: int = Field(default=150, ge=0, description="Tempering sweeps before sampling.")
    design_sweeps_between: int = Field(default=30, ge=1, description="Sweeps between two samples of one chain.")
    design_decorrelation_level: float = Field(default=0.15, ge=0, le=1, description="Ladder share climbed between.")
    num_chains: int | None = Field(default=None, ge=1, description="Tempering chains (default: about n / 3).")


class DesignResult(AnalyzerResult):
    """Diagnostics of the designed sequences."""

    num_sequences: int = Field(description="Sequences designed.")
    temperatures: list[float] = Field(description="Tempering ladder, high to low.")
    mean_energy_by_temperature: list[float] = Field(description="Mean energy per tempering temperature.")
    acceptance_swap_by_temperature: list[float] = Field(description="Swap acceptance per temperature.")
    acceptance_temperature_moves: float = Field(description="Accepted share of temperature moves.")
    energy_decreases_with_temperature: bool = Field(description="Mean energy strictly lower at every lower T.")
    composition_exact: bool = Field(description="Every sequence has exactly the native composition.")
    mean_pairwise_identity: float = Field(description="Mean identity between sequences (authors: about 0.34).")
    consecutive_identity: float = Field(description="Identity of consecutive samples of one chain.")
    sequences_per_second: float = Field(description="Designed sequences per second of wall time.")
    mean_sample_energy: float = Field(description="Mean energy of the sampled sequences.")


@register
class LangevinDesign(Analyzer[DesignParams, DesignResult]):
    """Design sequences on a contact map by adaptive simulated tempering and report their diagnostics."""

    name = "langevin.design"
    summary = "Designed sequences by vectorized adaptive simulated tempering: energies, acceptance, identity."
    version = "1"
    Params = DesignParams
    Result = DesignResult
    metrics: ClassVar[dict[str, str]] = {
        "mean_pairwise_identity": "mean identity between designed sequences (authors: about 0.34)",
        "energy_decreases_with_temperature": "True when the mean energy falls at every lower tempering temperature",
        "composition_exact": "True when every sequence keeps the native composition",
        "sequences_per_second": "throughput of the vectorized tempering",
    }
    resources = Resources(gpu=GpuNeed.none, memory_gb=1.0)
    scales: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": {"num_sequences": 600},
        "small": {"num_sequences": 3000},
        "paper": {"num_sequences": 12000},
    }

    def run(self, params: DesignParams, ctx: RunContext) -> DesignResult:
        import numpy as np

        from analyzers.langevin import design, plots, structure
        from analyzers.langevin.pipeline import load_contact_map

        contact_map = load_contact_map(params)  # type: ignore[arg-type]
        composition = design.encode(contact_map.sequence)
        started = time.perf_counter()
        report = design.simulated_tempering(
            contact_map.contacts, design.interaction_matrix(params.interaction_seed), composition,
            params.num_sequences, params.design_temperatures, sweeps_between=params.design_sweeps_between,
            burn_in_sweeps=params.design_burn_in_sweeps, seed=params.seed, num_chains=params.num_chains,
            decorrelation_level=params.design_decorrelation_level, progress=ctx.report,
        )  # fmt: skip
        seconds = time.perf_counter() - started
        ctx.out_dir.mkdir(parents=True, exist_ok=True)
        design.write_fasta(ctx.out_dir / "designed.fasta", report.sequences)
        summary = report.summary()
        plots.plot_design(ctx.out_dir / "design.png", summary)
        energies = np.asarray(report.mean_energy)
        preset = next((k for k, v in self.scales.items() if v["num_sequences"] == params.num_sequences), "custom")
        result = DesignResult(
            scale=EvidenceScale(name=preset, data=f"{params.num_sequences} sequences on {contact_map.source}"),
            num_sequences=len(report.sequences),
            temperatures=report.temperatures,
            mean_energy_by_temperature=report.mean_energy,
            acceptance_swap_by_temperature=report.acceptance_swap,
            acceptance_temperature_moves=report.acceptance_temperature,
            energy_decreases_with_temperature=bool((np.diff(energies) < 0).all()),
            composition_exact=bool((np.sort(report.sequences, axis=1) == np.sort(composition)).all()),
            mean_pairwise_identity=report.mean_pairwise_identity,
            consecutive_identity=report.consecutive_identity,
            sequences_per_second=len(report.sequences) / seconds,
            mean_sample_energy=float(report.sample_energies.mean()),
            provenance={"structure_source": contact_map.source, "contact_map_digest": contact_map.digest(),
                        "seed": params.seed, "device": "cpu", "num_chains": report.num_chains,
                        "swaps_attempted": report.swaps_attempted, "seconds": seconds},  # fmt: skip
            notes=[
                "The tempering ladder is not published; the default ends where swaps still mix on this map.",
                "Chains are sampled about three times each; consecutive_identity shows how much of a chain's "
                "memory survives between its samples (mean_pairwise_identity is between all sequences).",
                *([] if params.structure_file or params.pdb_id else [f"Structure: {structure.IDEAL_BUNDLE_NAME}."]),
            ],
            artifacts=["designed.fasta", "design.png"],
        )
        _finish(result, ctx)
        return result
