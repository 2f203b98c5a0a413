"""The Langevin experiment end to end, with every stage cached under ``work_dir`` by a hash of what it
depends on: contact map -> designed sequences -> masked splits -> ES / OT training per model ->
sampling per (model, start, temperature), resumable. A second analyzer (or a rerun after a kill)
with the same stage parameters reuses what is done and continues what is not.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from analyzers.base import NotRunnable, RunContext
from analyzers.langevin import design, design_parallel, structure
from analyzers.langevin.chain_runs import run_temperatures
from analyzers.langevin.chain_tasks import SamplingSettings, TemperatureTask, read_checkpoint
from analyzers.langevin.data import Splits, make_splits
from analyzers.langevin.estimate import comparison_text, estimate_stages, estimate_text, stage_comparison
from analyzers.langevin.integrator import resolve_capture
from analyzers.langevin.model import ModelConfig, build_model, count_parameters, layer_slices
from analyzers.langevin.objective import evaluate_split
from analyzers.langevin.spec import LangevinParams, default_cache
from analyzers.langevin.store import UnreadableCache, load_plain, save_plain
from analyzers.langevin.train import (
    TrainingOutcome,
    TrainingSettings,
    relax_on_sphere,
    scale_onto_sphere,
    squared_norm,
    train_es_ot,
)
from analyzers.langevin.train_batched import train_es_ot_batched
from analyzers.progress import Reporter

Report = Callable[[float, str], None]


def stage_key(*parts: Any) -> str:
    """A short stable hash of JSON-able parts."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def resolve_device(device: str) -> str:
    """The torch device to use; ``NotRunnable`` when CUDA is asked for and absent."""
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise NotRunnable(f"device {device!r} requested but CUDA is not available on this machine")
        return device
    if device != "cpu":
        raise ValueError(f"device must be 'cpu', 'cuda' or 'cuda:N', got {device!r}")
    return device


@dataclass
class ModelRun:
    """One model: its training outcome and its sampling records per (start, temperature)."""

    name: str  # 'transformer' or 'ffn'
    config: ModelConfig
    num_parameters: int
    training: TrainingOutcome
    layer_slices: dict[str, slice]
    training_key: str = ""  # the training stage's cache key (what the weights depend on)
    records: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # start -> per temperature
    trained_attention: dict[str, np.ndarray] = field(default_factory=dict)  # 'ES'/'OT' -> (layers, L, L)
    # start -> the training loss before and along its relaxation onto the ES sphere (relaxed starts only)
    relaxation: dict[str, list[dict[str, float]]] = field(default_factory=dict)


@dataclass
class Experiment:
    """What one run of the experiment produced."""

    params: LangevinParams
    contact_map: structure.ContactMap
    design_summary: dict[str, Any]
    sequences: np.ndarray
    splits: Splits
    models: dict[str, ModelRun]
    provenance: dict[str, Any]


def load_contact_map(params: LangevinParams, cache_dir: Path | None = None, *, offline: bool = False,
                     ) -> structure.ContactMap:
    """The structure's contact map (a file, an RCSB id, or the shipped 1UBI), checked against the sequence."""
    if params.structure_file:
        contact_map = structure.read_contact_map(
            params.structure_file,
            params.chain,
            params.model_index,
            params.cutoff,
            params.design_min_separation,
        )
    elif params.pdb_id:
        path = structure.fetch_pdb(
            params.pdb_id, default_cache("pdb", params.cache_dir, cache_dir), offline=offline
        )
        contact_map = structure.read_contact_map(
            path, params.chain, params.model_index, params.cutoff, params.design_min_separation
        )
        contact_map.source = f"RCSB {params.pdb_id.upper()}: {contact_map.source}"
    else:
        contact_map = structure.shipped_contact_map(params.cutoff, params.design_min_separation)
    composition = getattr(params, "sequence", None) or contact_map.sequence
    if len(composition) < contact_map.length:
        raise structure.StructureError(
            f"the sequence ({len(composition)} residues) is shorter than the contact map "
            f"({contact_map.length} "
            f"residues) of {contact_map.source}; give the full sequence or choose the matching chain"
        )
    if len(composition) != contact_map.length:
        raise structure.StructureError(
            f"the sequence ({len(composition)} residues) is longer than the contact map "
            f"({contact_map.length} "
            f"residues) of {contact_map.source}"
        )
    unknown = sorted(set(composition.upper()) - set(design.AMINO_ACIDS))
    if unknown:
        raise structure.StructureError(
            f"the sequence has letters outside the 20 amino acids: {''.join(unknown)} (non-standard "
            f"residues?)"
        )
    contact_map.sequence = composition
    return contact_map


def external_sequences(
    params: LangevinParams, contact_map: structure.ContactMap
) -> tuple[np.ndarray, dict[str, Any]]:
    """The operator's sequences (``sequences_file``) in place of the design, checked against the structure."""
    assert params.sequences_file is not None
    sequences = design.read_sequences(params.sequences_file, contact_map.length, contact_map.source)
    needed = params.train_size + params.val_size + params.test_size
    if len(sequences) < needed:
        raise ValueError(
            f"{params.sequences_file}: {len(sequences)} sequences, but train + validation + test = {needed}; "
            "give more sequences or smaller splits"
        )
    summary = {
        "source": f"external sequences from {Path(params.sequences_file).name}",
        "num_sequences": len(sequences),
        "mean_pairwise_identity": design.mean_pairwise_identity(sequences),
        "site_entropy": design.mean_site_entropy(sequences),
    }
    return sequences, summary


def _cached_design(
    params: LangevinParams, contact_map: structure.ContactMap, work: Path, report: Report
) -> tuple[np.ndarray, dict[str, Any], bool]:
    if params.sequences_file:
        sequences, summary = external_sequences(params, contact_map)
        return sequences, summary, False
    key = stage_key(
        "design-v4",
        contact_map.digest(),
        contact_map.sequence,
        params.interaction_seed,
        params.num_sequences,
        params.design_temperatures,
        params.design_burn_in_sweeps,
        params.design_sweeps_between,
        params.design_chains,
        params.seed,
        # shards of independent tempering runs (design_parallel): one shard is the unsharded design, same key
        *(
            ["shard-plan", plan]
            if len(
                plan := design_parallel.shard_plan(
                    params.num_sequences,
                    params.design_chains or design.default_chains(params.num_sequences),
                    params.design_shards,
                )
            )
            > 1
            else []
        ),
    )
    path = work / "design" / f"{key}.npz"
    if path.is_file():
        saved = np.load(path, allow_pickle=False)
        return saved["sequences"], json.loads(str(saved["summary"])), True
    result = design_parallel.design_sequences(  # the shards on every core: the same result for any core count
        contact_map.contacts,
        design.interaction_matrix(params.interaction_seed),
        design.encode(contact_map.sequence),
        params.num_sequences,
        params.design_temperatures,
        sweeps_between=params.design_sweeps_between,
        burn_in_sweeps=params.design_burn_in_sweeps,
        num_chains=params.design_chains,
        seed=params.seed,
        shards=params.design_shards,
        workers=params.design_workers,
        progress=report,
    )
    summary = result.summary()
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.stem}.{os.getpid()}.tmp.npz")
    np.savez(temporary, sequences=result.sequences, summary=json.dumps(summary))
    os.replace(temporary, path)
    return result.sequences, summary, False


def onto_sphere(
    state: dict[str, torch.Tensor], config: ModelConfig, sphere_of: dict[str, torch.Tensor]
) -> dict[str, torch.Tensor]:
    """``state`` with its weights scaled by one factor so that |w|^2 is that of ``sphere_of``. The constrained
    sampler's sphere is the ES norm (Appendix D: Q = |w_ES|^2), so an OT start is scaled onto it: a second,
    distant start of the same target distribution, which is what comparing chains by R-hat needs (on its own
    sphere the OT chain would sample a different distribution)."""
    model, reference = build_model(config), build_model(config)
    model.load_state_dict(state)
    reference.load_state_dict(sphere_of)
    scale_onto_sphere(model, squared_norm(reference))
    return model.state_dict()


def model_configs(params: LangevinParams, length: int) -> dict[str, ModelConfig]:
    """The transformer and (optionally) the pooling feed-forward baseline."""
    configs = {
        "transformer": ModelConfig(
            length, params.embed_dim, params.hidden_dim, params.num_layers, params.dropout
        )
    }
    if params.include_ffn:
        configs["ffn"] = ModelConfig(
            length, params.ffn_embed_dim, params.ffn_hidden_dim, 1, params.dropout, kind="feedforward"
        )
    return configs


def _training_settings(params: LangevinParams) -> TrainingSettings:
    return TrainingSettings(
        batch_size=params.batch_size,
        warmup=params.warmup,
        max_steps=params.max_train_steps,
        eval_every=params.eval_every,
        patience=params.patience,
        ensemble_size=params.es_ensemble_size,
        saturation_tolerance=params.saturation_tolerance,
        ot_max_steps=params.ot_max_steps,
        lr_scale=params.lr_scale,
        references=params.references,
    )


def _sampling_settings(params: LangevinParams) -> SamplingSettings:
    return SamplingSettings(
        sampler=params.sampler,
        steps=params.sampling_steps,
        burn_in_fraction=params.burn_in_fraction,
        batch_size=params.sampling_batch_size,
        dt=params.dt,
        m1=params.m1,
        r=params.r,
        mass_rule=params.mass_rule,
        variance_floor=params.variance_floor,
        max_step_ratio=params.max_step_ratio,
        variance_batches=params.variance_batches,
        variance_every=params.variance_every,
        fixman=params.fixman,
        sgld_step_size=params.sgld_step_size,
        snapshot_every=params.snapshot_every,
        energy_every=params.energy_every,
        weights_every=params.weights_every,
        checkpoint_every=params.checkpoint_every,
        noise=params.noise,
    )


def _cached_training(
    name: str,
    config: ModelConfig,
    splits: Splits,
    params: LangevinParams,
    device: str,
    work: Path,
    report: Report,
) -> tuple[TrainingOutcome, str, bool]:
    settings = _training_settings(params)
    # on a GPU every seed of a stage in one batched call (train_batched); its dropout draws differ from the
    # one-at-a-time path's, so its weights are cached apart (the CPU's keys are unchanged)
    batched = device != "cpu"
    key = stage_key("train-v3", name, config.to_dict(), settings.__dict__, splits.digest, params.seed, device,
                    *(["batched"] if batched else []))  # fmt: skip
    path = work / "train" / f"{key}.pt"
    if path.is_file():
        try:  # plain data only: a planted or damaged file is retrained over, never unpickled
            return TrainingOutcome(**load_plain(path)), key, True
        except (UnreadableCache, TypeError) as error:
            report(-1, f"{name}: {error}")

    def make_model(seed: int) -> torch.nn.Module:
        torch.manual_seed(seed)
        return build_model(config).to(device)

    train = train_es_ot_batched if batched else train_es_ot
    outcome = train(
        make_model,
        splits.to(device),
        settings,
        params.seed,
        lambda m: report(-1, f"{name}: {m}"),
        progress=lambda share: report(share, ""),
    )
    save_plain(dataclasses.asdict(outcome), path)
    return outcome, key, False


def _cached_relaxation(
    run: ModelRun,
    start: str,
    state: dict[str, torch.Tensor],
    splits: Splits,
    params: LangevinParams,
    device: str,
    work: Path,
    train_key: str,
) -> tuple[dict[str, torch.Tensor], bool]:
    """``state`` relaxed onto a nearby minimum of the training loss on its sphere (``train.relax_on_sphere``),
    cached by what it depends on; the loss along the way goes to ``run.relaxation[start]``."""
    key = stage_key(
        "relax-v2",
        train_key,
        start,
        params.relax_steps,
        params.relax_lr,
        params.batch_size,
        params.seed,
        device,
    )
    path = work / "relax" / f"{key}.pt"
    if path.is_file():
        try:  # plain data only, as every cache here
            saved = load_plain(path)
            run.relaxation[start] = saved["trace"]
            return saved["state"], True
        except (UnreadableCache, KeyError, TypeError):
            pass  # relaxed again over it
    torch.manual_seed(params.seed)
    model = build_model(run.config).to(device)
    model.load_state_dict(state)
    trace = relax_on_sphere(
        model, splits.train.to(device), params.relax_steps, params.relax_lr, params.batch_size, params.seed
    )
    relaxed = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
    save_plain({"state": relaxed, "trace": trace}, path)
    run.relaxation[start] = trace
    return relaxed, False


def _workers(params: LangevinParams, device: str, tasks: int) -> int:
    if device != "cpu":
        return 1  # one GPU: the temperatures run one after another in this process
    available = os.cpu_count() or 1
    return max(1, min(tasks, available if params.workers == 0 else params.workers))


def run_experiment(
    params: LangevinParams, report: Report, models: list[str] | None = None, ctx: RunContext | None = None
) -> Experiment:
    """Run (or reuse and resume) every stage; ``models`` limits which models are trained and sampled.

    ``ctx`` gives the cache folder (designed data, trained weights, finished samples; default ~/.cache/kb)
    and the checkpoint folder: the sampler's checkpoints go there, and each one written is announced with
    ``ctx.checkpoint_saved()`` so a run killed on one node resumes on another from the same folder."""
    device = resolve_device(params.device)
    threads = torch.get_num_threads()
    if device == "cpu" and params.threads:
        torch.set_num_threads(params.threads)  # small models: extra threads only contend for the cores
    try:
        return _run_experiment(params, report, models, device, ctx or RunContext(Path(".")))
    finally:
        torch.set_num_threads(threads)


def _run_experiment(
    params: LangevinParams, report: Report, models: list[str] | None, device: str, ctx: RunContext
) -> Experiment:
    work = default_cache("langevin", params.work_dir, ctx.cache_dir)
    # in progress: the checkpoint folder when the run has one (it follows the run to another node), else the
    # cache
    in_progress = (
        ctx.checkpoint_dir / "langevin-samples" if ctx.checkpoint_dir is not None else work / "samples"
    )
    torch.manual_seed(params.seed)
    reused: list[str] = []
    contact_map = load_contact_map(params, ctx.cache_dir, offline=ctx.offline)
    report(0.0, f"contact map: {contact_map.source}, {int(contact_map.contacts.sum()) // 2} contacts")
    estimates: dict[str, float] = {}
    measured: dict[str, float] = {}  # seconds each stage took: checked against the estimate at the end
    if params.estimate_stages:  # what the run commits to, before it starts (the paper preset: hours on a GPU)
        estimates = estimate_stages(params, contact_map.contacts, design.encode(contact_map.sequence),
                                    {k: v for k, v in model_configs(params, contact_map.length).items()
                                     if models is None or k in models}, device)  # fmt: skip
        report(0.0, estimate_text(estimates))
    # Each long stage reports through a Reporter: at least every ctx.report_every seconds, its fraction
    # moving.
    designing = Reporter(report, ctx.report_every, 0.0, 0.05, ctx.is_cancelled)
    # Each stage named with where it ends on the bar: kb times it and reads the time left from its own rate.
    ctx.enter_stage("design", 0.05)
    started = time.perf_counter()
    sequences, design_summary, cached = _cached_design(
        params, contact_map, work, lambda fraction, message: designing(fraction, 1.0, message))
    if not params.sequences_file:
        measured["design"] = time.perf_counter() - started
    if cached:
        reused.append("design")
    report(
        0.05, f"designed {len(sequences)} sequences, identity {design_summary['mean_pairwise_identity']:.3f}"
    )
    splits = make_splits(
        sequences, (params.train_size, params.val_size, params.test_size), params.mask_fraction, params.seed
    )
    configs = {
        k: v for k, v in model_configs(params, contact_map.length).items() if models is None or k in models
    }
    ctx.enter_stage("training", 0.3)
    runs = _train_models(configs, splits, params, device, work, report, ctx, reused, measured)
    report(0.3, f"trained {len(runs)} model(s); preparing the samplers")
    ctx.enter_stage("sampling", 0.95)
    tasks = _sampling_tasks(runs, splits, params, device, work, in_progress, report, reused, measured)
    done_before = sum(1 for t in tasks if _is_done(t.finished_path) or _is_done(t.checkpoint))
    if done_before:
        reused.append(f"sampling:{done_before}/{len(tasks)} temperatures")
    sampling = Reporter(report, ctx.report_every, 0.3, 0.95, ctx.is_cancelled)
    started = time.perf_counter()
    records = run_temperatures(
        tasks, _workers(params, device, len(tasks)), lambda f, m: sampling(f, 1.0, m), ctx.checkpoint_saved,
        batched=device != "cpu",  # one GPU: every chain in one loop, each model's in one batched model call
        step_capture=params.step_capture,
    )
    measured["sampling"] = time.perf_counter() - started
    for task, record in zip(tasks, records, strict=True):
        name, start = task.name.split("@")
        runs[name].records.setdefault(start, []).append(record)
    provenance = _provenance(params, contact_map, splits, sequences, runs, device, len(tasks), reused, work)
    # the run's record keeps both, and the ratio: how far the estimate printed before the run can be trusted
    provenance["stage_seconds"] = stage_comparison(estimates, measured, reused)
    if estimates:
        report(0.95, comparison_text(provenance["stage_seconds"]))
    return Experiment(params, contact_map, design_summary, sequences, splits, runs, provenance)


def _train_models(
    configs: dict[str, ModelConfig],
    splits: Splits,
    params: LangevinParams,
    device: str,
    work: Path,
    report: Report,
    ctx: RunContext,
    reused: list[str],
    measured: dict[str, float],
) -> dict[str, ModelRun]:
    """ES and OT training of each model (cached), reported as the run's 5-30 %; the seconds each took into
    ``measured``."""
    runs: dict[str, ModelRun] = {}
    for position, (name, config) in enumerate(configs.items()):
        fraction = 0.05 + 0.25 * position / len(configs)
        report(
            fraction,
            f"{name}: training (ES ensemble of {params.es_ensemble_size}, then {params.references} ES/OT "
            "references)",
        )
        training = Reporter(report, ctx.report_every, fraction, 0.05 + 0.25 * (position + 1) / len(configs),
                            ctx.is_cancelled)
        latest = [0.0, f"{name}: training"]  # the share done and the last message: a call brings either

        def training_report(share: float, message: str, training: Reporter = training,
                            latest: list[Any] = latest) -> None:
            latest[0] = share if share >= 0 else latest[0]  # < 0: a message alone
            latest[1] = message or latest[1]
            training(latest[0], 1.0, f"{latest[1]} · training {latest[0]:.0%} of its step caps")

        started = time.perf_counter()
        outcome, key, cached = _cached_training(name, config, splits, params, device, work, training_report)
        measured[f"training {name}"] = time.perf_counter() - started
        if cached:
            reused.append(f"training:{name}")
        model = build_model(config)
        runs[name] = ModelRun(
            name, config, count_parameters(model), outcome, layer_slices(model), training_key=key
        )
        runs[name].trained_attention = _trained_attention(config, outcome, splits, device)
    return runs


def _sampling_tasks(
    runs: dict[str, ModelRun],
    splits: Splits,
    params: LangevinParams,
    device: str,
    work: Path,
    in_progress: Path,
    report: Report,
    reused: list[str],
    measured: dict[str, float],
) -> list[TemperatureTask]:
    """One task per model, start and temperature; a start in ``relax_starts`` relaxed on the ES sphere
    first (the seconds each model's relaxations took into ``measured``)."""
    settings = _sampling_settings(params)
    tasks: list[TemperatureTask] = []
    for name, run in runs.items():
        # the weights' own cache key too: samples of weights trained otherwise are never reused for these
        train_key = stage_key("train-key", name, run.config.to_dict(), splits.digest, run.training_key)
        for start in params.sample_from:
            state = run.training.es_state if start == "ES" else run.training.ot_state
            if start == "OT" and settings.sampler == "pseudo-langevin":
                state = onto_sphere(state, run.config, run.training.es_state)
            if start in params.relax_starts:
                started = time.perf_counter()
                state, cached = _cached_relaxation(run, start, state, splits, params, device, work, train_key)
                measured[f"relaxing {name}"] = (measured.get(f"relaxing {name}", 0.0)
                                                + time.perf_counter() - started)  # fmt: skip
                if cached:
                    reused.append(f"relaxed:{name}@{start}")
                report(
                    0.3,
                    f"{name}: {start} start relaxed on the ES sphere, train loss "
                    f"{run.relaxation[start][0]['train_loss']:.4f} -> "
                    f"{run.relaxation[start][-1]['train_loss']:.4f}",
                )
            # another start
            relaxed = [[params.relax_steps, params.relax_lr]] if start in params.relax_starts else []
            for temperature in params.temperatures:
                key = stage_key(
                    "sample-v4",
                    train_key,
                    start,
                    temperature,
                    settings.__dict__,
                    params.seed,
                    device,
                    *relaxed,
                )
                tasks.append(
                    TemperatureTask(
                        f"{name}@{start}",
                        float(temperature),
                        run.config,
                        state,
                        splits,
                        settings,
                        params.seed,
                        device,
                        in_progress / f"{key}.pt",
                        list(run.layer_slices),
                        work / "samples" / f"{key}.pt",
                    )
                )
    return tasks


def _provenance(
    params: LangevinParams,
    contact_map: structure.ContactMap,
    splits: Splits,
    sequences: np.ndarray,
    runs: dict[str, ModelRun],
    device: str,
    task_count: int,
    reused: list[str],
    work: Path,
) -> dict[str, Any]:
    """Where the experiment's inputs came from and how it ran."""
    return {
        "structure_source": contact_map.source,
        "contact_map_digest": contact_map.digest(),
        "contacts": int(contact_map.contacts.sum()) // 2,
        "data_hash": splits.digest,
        "sequences_hash": hashlib.sha256(sequences.tobytes()).hexdigest()[:16],
        "seed": params.seed,
        "device": device,
        "gpu_name": torch.cuda.get_device_name(torch.device(device)) if device.startswith("cuda") else None,
        "dtype": "float32 models; float64 sampler state (SHAKE/RATTLE)",
        "sampling_path": f"batched replicas: every start and temperature of a model in one model call, every "
        f"model in one loop, step capture {resolve_capture(params.step_capture, device)}" if device != "cpu"
        else f"one temperature at a time, {_workers(params, device, task_count)} process(es)",
        "weights_hash": _weights_hash(runs),
        "versions": _versions(),
        "reused_from_cache": reused,
        "relaxed_starts": {name: run.relaxation for name, run in runs.items() if run.relaxation},
        "work_dir": str(work),
    }


def _is_done(path: Path) -> bool:
    saved = read_checkpoint(path)
    return bool(saved is not None and saved.get("done"))


@torch.no_grad()
def _trained_attention(
    config: ModelConfig, outcome: TrainingOutcome, splits: Splits, device: str
) -> dict[str, Any]:
    """Mean test-set attention (layers, L, L) of the ES and OT weights (transformers only)."""
    if config.kind != "transformer":
        return {}
    model = build_model(config).to(device)
    test = splits.test.to(device)
    result = {}
    for name, state in (("ES", outcome.es_state), ("OT", outcome.ot_state)):
        model.load_state_dict(state)
        model.eval()
        attention = evaluate_split(model, test, attention=True)[2]
        assert attention is not None  # a transformer returns its attention
        result[name] = attention.numpy()
    return result


def _weights_hash(runs: dict[str, ModelRun]) -> str:
    """SHA-256 over the ES and OT weights of every model (the starting points of the sampling)."""
    digest = hashlib.sha256()
    for name in sorted(runs):
        for state in (runs[name].training.es_state, runs[name].training.ot_state):
            for key in sorted(state):
                digest.update(key.encode() + state[key].numpy().tobytes())
    return digest.hexdigest()[:16]


def _versions() -> dict[str, str]:
    import gemmi

    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "numpy": np.__version__,
        "gemmi": str(getattr(gemmi, "__version__", "unknown")),
        "cuda": str(torch.version.cuda),
    }
