"""Sampling one model at one temperature, resumably, and many temperatures in parallel.

A ``TemperatureTask`` carries everything a worker process needs (model config, starting weights, the
splits, the sampler settings, the device and a checkpoint path). ``run_temperature`` builds the sampler
(norm-constrained pseudo-Langevin by default; unconstrained or plain SGLD selectable), re-estimates the
minibatch-gradient variance and the masses every ``variance_every`` steps, and records:

* the minibatch loss of every step;
* every ``energy_every`` steps: the full training loss (the energy whose variance gives the specific heat);
* every ``snapshot_every`` steps: train / validation / test losses and errors, |w|^2, and the mean attention
  over the test sequences;
* every ``weights_every`` steps after burn-in: a float32 copy of the weights (thinned snapshots, for the
  per-layer similarity q).

Every ``checkpoint_every`` steps the whole state (sampler, generators, records) is written atomically
to the checkpoint file, so a killed run started again continues from there and, seeded, ends with the
same result as an uninterrupted run. ``run_temperatures`` runs tasks in worker processes (one thread
each) on CPU, in this process on CUDA.
"""

from __future__ import annotations

import hashlib
import math
import multiprocessing
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch

from analyzers.base import Cancelled
from analyzers.langevin.data import Splits
from analyzers.langevin.mass_matrix import MassMatrix, NoiseSpectrum, noise_covariance_mass, noise_spectrum
from analyzers.langevin.model import ModelConfig, build_model
from analyzers.langevin.objective import FlatObjective, evaluate_split
from analyzers.langevin.sampler import (
    SGLD,
    PseudoLangevin,
    SamplerConfig,
    check_temperature,
    guarded_mass_matrix,
    guarded_masses,
)
from analyzers.langevin.spec import MASS_RULES
from analyzers.langevin.store import UnreadableCache, load_plain, save_plain
from analyzers.langevin.thermostat import safe_share


@dataclass
class SamplingSettings:
    """How to sample (defaults: the authors' dt, m1 and minibatch; lengths set by the scale)."""

    sampler: str = "pseudo-langevin"  # or "unconstrained", "sgld"
    # "minibatch": a fresh minibatch gradient per step supplies the share r of the thermostat noise (the paper);
    # "full_batch": the gradient of the whole training split and white noise for all of it (no correlated noise)
    noise: str = "minibatch"
    steps: int = 2000
    burn_in_fraction: float = 0.5  # records before this fraction of the steps are not averaged
    batch_size: int = 64
    dt: float = 1.0
    m1: float = 0.1
    r: float = 0.01  # share of the thermostat noise that the minibatch noise supplies
    # or "per-layer" (layer means of the variance), "uniform" (the median), "noise-covariance" (per-weight plus
    # a low-rank term along the minibatch noise: mass_matrix.py)
    mass_rule: str = "per-weight"
    variance_floor: float = 1e-3  # sigma_i^2 >= this x median(sigma^2)
    max_step_ratio: float = 0.02  # keeps SHAKE solvable: raises the floor / the masses above this
    variance_batches: int = 50
    variance_every: int = 1000
    fixman: bool = True
    sgld_step_size: float = 1e-4
    snapshot_every: int = 100
    energy_every: int = 25  # full training loss only (the energy for C): cheaper than a snapshot
    weights_every: int = 100
    checkpoint_every: int = 500
    eval_batch_size: int = 1024


@dataclass
class TemperatureTask:
    """One (model, start, temperature) sampling job."""

    name: str  # e.g. 'transformer@ES'
    temperature: float
    config: ModelConfig
    start_state: dict[str, torch.Tensor]
    splits: Splits
    settings: SamplingSettings
    seed: int
    device: str
    checkpoint: Path  # the state in progress (a run's checkpoint folder, or the cache)
    layer_names: list[str] = field(default_factory=list)
    finished: Path | None = None  # where the finished records are kept for reuse (the cache); None: ``checkpoint``

    @property
    def finished_path(self) -> Path:
        return self.finished or self.checkpoint


NOISE_MODES = ("minibatch", "full_batch")
DIRECTION_TOLERANCE = 0.2  # a direction whose kinetic temperature is off by more than this (relative) is hot
SHARE_TOLERANCE = 0.05  # the minibatch share may run a direction this much hot (r capped, or absorbed by the mass)
# the kinetic temperature is read every this many steps: (u . S^-1 p)^2 decorrelates over tau ~ 200 steps
# (thermostat_report), so the skipped steps add almost no information, and a reading costs two O(k n) passes,
# about a seventh of a step at k ~ 600 directions
KINETIC_EVERY = 10


def chain_seed(seed: int, temperature: float) -> int:
    """The seed of one temperature's chain: its own minibatches and noise, the same wherever it runs (alone,
    in a worker process, or as one replica of a batch) and whatever other temperatures run beside it."""
    digest = hashlib.sha256(f"{seed}:{float(temperature)!r}".encode()).digest()
    return int.from_bytes(digest[:6], "little")


def finished_state(sampler_state: dict[str, Any], done: bool) -> dict[str, Any]:
    """A sampler's state as a checkpoint keeps it: whole while the chain runs; once it is done (never continued,
    only its records reused) without the low-rank mass, ~100 MB at k ~ 600 directions of 44,245 weights."""
    if not done:
        return sampler_state
    return {key: value for key, value in sampler_state.items() if key != "mass_directions"}


def read_checkpoint(path: Path) -> dict[str, Any] | None:
    """The checkpoint at ``path``, or None when there is none or it is not plain data (then sampling restarts)."""
    if not path.is_file():
        return None
    try:
        saved = load_plain(path)
    except UnreadableCache:
        return None
    return saved if isinstance(saved, dict) else None


def exact_noise(settings: SamplingSettings, objective: FlatObjective, w: torch.Tensor) -> NoiseSpectrum:
    """The minibatch-noise spectrum at ``w`` (per-sequence gradients, mass_matrix.noise_spectrum)."""
    return noise_spectrum(objective.per_sequence_gradients(w), settings.batch_size, settings.variance_floor)


def gradient_noise(
    settings: SamplingSettings, objective: FlatObjective, w: torch.Tensor, known: NoiseSpectrum | None = None
) -> tuple[torch.Tensor | NoiseSpectrum, torch.Tensor]:
    """What the masses are built from at ``w`` (the exact noise spectrum for the noise-covariance rule, ``known``
    when it was computed at this w already; else the per-weight variance over ``variance_batches`` minibatches)
    and the per-weight variance (n,)."""
    if settings.mass_rule == "noise-covariance":
        spectrum = known or exact_noise(settings, objective, w)
        return spectrum, spectrum.variance
    variance = objective.gradient_variance(w, settings.variance_batches)
    return variance, variance


def _masses(
    task: TemperatureTask, noise: torch.Tensor | NoiseSpectrum, w: torch.Tensor, slices: list[slice], r: float
) -> tuple[MassMatrix, dict[str, float]]:
    settings = task.settings
    max_ratio = settings.max_step_ratio if settings.sampler == "pseudo-langevin" else math.inf
    if isinstance(noise, NoiseSpectrum):
        mass = noise_covariance_mass(noise, task.temperature, settings.dt, settings.m1, r, SHARE_TOLERANCE)
        guarded, used = guarded_mass_matrix(mass, w, task.temperature, settings.dt, max_ratio)
        if used["effective_r"] < r:  # a smaller share: fewer directions run hot enough to need the low-rank term
            mass = noise_covariance_mass(noise, task.temperature, settings.dt, settings.m1, used["effective_r"],
                                         SHARE_TOLERANCE)  # fmt: skip
            guarded, used = guarded_mass_matrix(mass, w, task.temperature, settings.dt, max_ratio)
        return guarded, used
    variance = noise
    if settings.mass_rule == "per-layer":  # the authors' 'mean' option: one variance per parameter tensor
        variance = variance.clone()
        for part in slices:
            variance[part] = variance[part].mean()
    elif settings.mass_rule == "uniform":
        variance = torch.full_like(variance, float(variance.median()))
    elif settings.mass_rule != "per-weight":
        raise ValueError(f"unknown mass rule {settings.mass_rule!r}; use one of {', '.join(MASS_RULES)}")
    masses, used = guarded_masses(
        variance, w, task.temperature, settings.dt, settings.m1, r, settings.variance_floor, max_ratio
    )
    return MassMatrix.per_weight(masses), used


def noise_setup(spectrum: NoiseSpectrum, settings: SamplingSettings) -> dict[str, Any]:
    """The minibatch share r to use and the leading minibatch-noise directions, from the starting weights' spectrum.

    The noise's covariance is exact (the per-sequence gradients, mass_matrix.noise_spectrum) and does not depend
    on T, so every temperature started from the same weights uses the same r (no silent change between
    temperatures). With per-weight masses its worst direction caps r so that it stays within 5% of T
    (thermostat.py); the noise-covariance masses absorb every direction that would run hotter, so r stays as
    asked. Full-batch gradients keep the cap of their mass rule: the directions where the per-weight rule
    underestimates the noise are the loss's stiff directions (the noise covariance is close to the Fisher
    matrix), where light masses make the integrator itself heat (measured on the small preset's transformer:
    uncapped r = 0.05 with full batches and per-weight masses ran 10-80 T along them)."""
    top = spectrum.eigenvalues[:3]
    if settings.mass_rule == "noise-covariance":
        r_used = settings.r
        absorbed = settings.r * (top - 1.0) > SHARE_TOLERANCE  # these directions carry their share in the mass
        seen = torch.where(absorbed, torch.ones_like(top), top)
    else:
        r_used, seen = safe_share(settings.r, float(top[0]), tolerance=SHARE_TOLERANCE), top
    return {
        "noise": settings.noise, "noise_amplification": seen.tolist(), "noise_amplification_per_weight": top.tolist(),
        "noise_directions": spectrum.directions[:3].float(), "r_used": r_used,
        "kinetic_blocks": [], "kinetic_block_steps": [],
    }  # fmt: skip


def accumulate_kinetic(records: dict[str, Any], momenta: torch.Tensor, mass: MassMatrix) -> None:
    """Add one step's p^T M^-1 p / n and (u . S^-1 p)^2 along each noise direction u (S S^T = M)."""
    scaled = mass.inverse_sqrt(momenta)  # (n,)
    along = scaled @ records["noise_directions"].to(scaled).T  # (k,)
    values = torch.cat([(scaled * scaled).mean()[None], along * along])  # (1 + k,)
    previous = records.get("directional_sum")
    records["directional_sum"] = values if previous is None else previous + values
    records["directional_count"] = records.get("directional_count", 0) + 1


def close_kinetic_block(records: dict[str, Any]) -> None:
    """End the current block of kinetic-temperature sums (one per snapshot): its mean and its length."""
    count = records.get("directional_count", 0)
    if count:
        records["kinetic_blocks"].append((records.pop("directional_sum") / count).cpu().tolist())
        records["kinetic_block_steps"].append(count * KINETIC_EVERY)  # steps covered: the error counts steps / tau
        records["directional_count"] = 0


def thermostat_report(records: dict[str, Any], temperature: float, settings: SamplingSettings) -> dict[str, Any]:
    """Kinetic temperature on average and along the leading minibatch-noise directions after burn-in, with
    standard errors, and whether every direction is at T.

    The standard error of a direction's temperature comes from the ESS of its block means when there are
    at least 8 blocks, else from the thermostat's own time scale: (u . M^-1/2 p)^2 decorrelates over
    tau = (2 - m1^2) / m1^2 steps (200 at the authors' m1 = 0.1), so N steps give N / tau samples of a
    chi-square with one degree of freedom, a relative error sqrt(2 tau / N). A direction fails when it is
    off by more than 20% beyond twice its standard error (a test that can say no: 16 T or 80 T fails
    at any length); ``resolved`` says whether twice the standard error is at most 20%, so that a
    direction 40% off could not pass (at the authors' m1 that takes ~40,000 steps after burn-in)."""
    from analyzers.langevin.convergence import effective_sample_size

    report: dict[str, Any] = {
        "noise": records.get("noise", settings.noise), "r_requested": settings.r, "r_used": records.get("r_used"),
        "effective_r": min((g["effective_r"] for g in records.get("mass_guard", [])), default=records.get("r_used")),
        "noise_amplification": records.get("noise_amplification", []),
    }  # fmt: skip
    blocks = np.asarray(records.get("kinetic_blocks") or [], dtype=float) / temperature  # (blocks, 1 + k)
    if not len(blocks):
        return {**report, "thermalized_every_direction": None, "resolved": False}
    weights = np.asarray(records["kinetic_block_steps"], dtype=float)
    mean = weights @ blocks / weights.sum()  # (1 + k,)
    steps = weights.sum()
    tau = (2.0 - settings.m1**2) / settings.m1**2
    error = np.full(blocks.shape[1], math.sqrt(2.0 * tau / steps))
    if len(blocks) >= 8:
        ess = np.array([effective_sample_size(column) for column in blocks.T])
        spread = blocks.std(axis=0, ddof=1) / np.sqrt(np.where(np.isfinite(ess), ess, 1.0))
        error = np.where(np.isfinite(spread), spread, error)
    offset = np.abs(mean[1:] - 1.0)
    predicted = [1.0 - report["effective_r"] + report["effective_r"] * a for a in report["noise_amplification"]]
    return {
        **report,
        "predicted_directions_over_t": predicted if report["noise"] == "minibatch" else [1.0] * len(offset),
        "kinetic_temperature_mean": float(mean[0]) * temperature,
        "kinetic_temperature_directions": [float(x) * temperature for x in mean[1:]],
        "kinetic_temperature_standard_error": [float(x) * temperature for x in error[1:]],
        "worst_direction_offset": float(offset.max()),
        "resolved": bool((2.0 * error[1:] <= DIRECTION_TOLERANCE).all()),
        "thermalized_every_direction": bool((offset - 2.0 * error[1:] <= DIRECTION_TOLERANCE).all()),
    }


def run_temperature(
    task: TemperatureTask,
    progress: Callable[[int, int], None] = lambda done, total: None,
    should_stop: Callable[[], bool] = lambda: False,
    on_checkpoint: Callable[[], None] = lambda: None,
) -> dict[str, Any]:
    """Sample one task to the end (continuing from its checkpoint when one exists); returns the records.

    ``progress(steps_done, steps_total)`` is called at every snapshot and may raise (e.g. ``Cancelled``);
    ``should_stop()`` is polled there too. Either way a rerun continues from the last checkpoint and,
    seeded, reproduces the uninterrupted result. ``on_checkpoint()`` is called after each checkpoint file
    is complete (the run context then makes it durable).
    """
    check_temperature(task.temperature)
    settings, device = task.settings, torch.device(task.device)
    for path in dict.fromkeys((task.finished_path, task.checkpoint)):
        stored = read_checkpoint(path)
        if stored is not None and stored.get("done"):
            if path != task.finished_path:  # finished on another node: keep it in this node's cache too
                save_plain(stored, task.finished_path)
            return dict(stored["records"])
    saved = read_checkpoint(task.checkpoint)
    torch.manual_seed(task.seed)
    model = build_model(task.config).to(device)
    model.load_state_dict(task.start_state)
    splits = task.splits.to(device)
    seed = chain_seed(task.seed, task.temperature)
    batch_generator = torch.Generator(device=device).manual_seed(seed)
    noise_generator = torch.Generator(device=device).manual_seed(seed + 1)
    objective = FlatObjective(model, splits.train, settings.batch_size, batch_generator)
    slices = _layer_slices(model)
    w0 = objective.weights()
    kind = settings.sampler
    if kind not in ("pseudo-langevin", "unconstrained", "sgld"):
        raise ValueError(f"unknown sampler {kind!r}; use pseudo-langevin, unconstrained or sgld")
    if settings.noise not in NOISE_MODES:
        raise ValueError(f"unknown noise {settings.noise!r}; use minibatch or full_batch")
    if settings.noise == "full_batch":
        objective.full_batch = True  # exact gradients: the white noise is all the noise, isotropic in M^-1/2 p
    minibatch_noise = not objective.full_batch

    records: dict[str, Any] = {
        "name": task.name, "temperature": task.temperature, "sampler": kind, "steps": settings.steps,
        "losses": np.zeros(settings.steps, dtype=np.float32), "snapshots": [], "weights": [],
        "attention_sum": None, "attention_count": 0, "mass_log10": [], "mass_guard": [], "seconds": 0.0,
        "energies": [],
        "start_norm": float(w0 @ w0),
    }  # fmt: skip

    initial = exact_noise(settings, objective, w0) if kind != "sgld" else None
    if initial is not None:
        records.update(noise_setup(initial, settings))
    else:
        records["r_used"] = settings.r

    def fresh_masses(w: torch.Tensor, step: int, known: NoiseSpectrum | None = None) -> tuple[MassMatrix, torch.Tensor]:
        noise, variance = gradient_noise(settings, objective, w, known)
        mass, used = _masses(task, noise, w, slices, float(records["r_used"]))
        records["mass_guard"].append({"step": step, **used})
        return mass, variance

    # On a resume the sampler is built as at the start (consuming the same random numbers), then its
    # state, the generators' states and the records are replaced by the checkpoint's.
    sampler: PseudoLangevin | SGLD
    if kind == "sgld":
        sampler = SGLD(w0, objective, settings.sgld_step_size, task.temperature, noise_generator)
    else:
        masses, variance = fresh_masses(w0, 0, initial)
        config = SamplerConfig(task.temperature, settings.dt, settings.m1, kind == "pseudo-langevin", settings.fixman)
        sampler = PseudoLangevin(w0, objective, masses, config, variance if minibatch_noise else None, noise_generator)
    if saved is not None:
        sampler.load_state_dict(saved["sampler"])
        batch_generator.set_state(saved["batch_generator"])
        noise_generator.set_state(saved["noise_generator"])
        records = saved["records"]
    losses_device = torch.zeros(settings.snapshot_every, dtype=torch.float64, device=device)
    open_block = sampler.steps_done % settings.snapshot_every  # resumed inside a block: its losses so far
    losses_device[:open_block] = torch.from_numpy(records["losses"][sampler.steps_done - open_block :
                                                                    sampler.steps_done].astype(np.float64))  # fmt: skip
    burn_in = int(settings.burn_in_fraction * settings.steps)
    started = time.perf_counter() - records["seconds"]
    is_transformer = task.config.kind == "transformer"

    def checkpoint(done: bool) -> None:
        records["seconds"] = time.perf_counter() - started
        state = {
            "sampler": finished_state(sampler.state_dict(), done), "batch_generator": batch_generator.get_state(),
            "noise_generator": noise_generator.get_state(), "records": records, "done": done,
        }  # fmt: skip
        save_plain(state, task.checkpoint)
        if done and task.finished_path != task.checkpoint:
            save_plain(state, task.finished_path)  # the cache: other analyzers of this experiment reuse it
        on_checkpoint()

    step = sampler.steps_done
    while step < settings.steps:
        if (
            isinstance(sampler, PseudoLangevin)
            and step > 0
            and step % settings.variance_every == 0
            and step != records.get("variance_step")
        ):
            masses, variance = fresh_masses(sampler.w, step)
            sampler.set_masses(masses, variance if minibatch_noise else None)
            records["variance_step"] = step
        losses_device[step % settings.snapshot_every] = sampler.step()
        step = sampler.steps_done
        kinetic_due = step > burn_in and step % KINETIC_EVERY == 0
        if isinstance(sampler, PseudoLangevin) and "noise_directions" in records and kinetic_due:
            accumulate_kinetic(records, sampler.p, sampler.mass)
        snapshot_due = step % settings.snapshot_every == 0 or step == settings.steps
        if snapshot_due:
            close_kinetic_block(records)
            chunk = (step - 1) % settings.snapshot_every + 1
            records["losses"][step - chunk : step] = losses_device[:chunk].cpu().numpy()
            sampler.check()
            _snapshot(task, objective, sampler, splits, records, step, burn_in, is_transformer)
        if step % settings.energy_every == 0 and not snapshot_due:
            objective.load(sampler.w)
            loss = evaluate_split(objective.model, splits.train, settings.eval_batch_size)[0]
            records["energies"].append((step, loss))
        if step % settings.weights_every == 0 and step > burn_in:
            records["weights"].append(sampler.w.float().cpu())
        if step % settings.checkpoint_every == 0 and step < settings.steps:
            open_block = step % settings.snapshot_every  # a checkpoint inside a block keeps its losses so far
            records["losses"][step - open_block : step] = losses_device[:open_block].cpu().numpy()
            checkpoint(False)
        if snapshot_due:  # a stop here loses nothing: a rerun replays from the last checkpoint
            progress(step, settings.steps)
            if should_stop():
                raise Cancelled(f"{task.name} at T={task.temperature:g} stopped at step {step}")
    if isinstance(sampler, PseudoLangevin):
        records["mass_log10"] = np.percentile(np.log10(sampler.mass.diagonal.cpu().numpy()), [0, 50, 100]).tolist()
        records["kinetic_temperature"] = sampler.kinetic_temperature()
        records["thermostat"] = thermostat_report(records, task.temperature, settings)
        records.pop("noise_directions", None)
    records["final_norm"] = float(sampler.w @ sampler.w)
    checkpoint(True)
    return records


def _layer_slices(model: torch.nn.Module) -> list[slice]:
    slices, offset = [], 0
    for parameter in model.parameters():
        slices.append(slice(offset, offset + parameter.numel()))
        offset += parameter.numel()
    return slices


class _HasWeights(Protocol):
    w: torch.Tensor  # (n,)


def _snapshot(
    task: TemperatureTask,
    objective: FlatObjective,
    sampler: _HasWeights,
    splits: Splits,
    records: dict[str, Any],
    step: int,
    burn_in: int,
    is_transformer: bool,
) -> None:
    """Full-split losses and errors at the current weights; attention accumulated after burn-in."""
    objective.load(sampler.w)
    model, batch = objective.model, task.settings.eval_batch_size
    train_loss, train_error, _ = evaluate_split(model, splits.train, batch)
    validation_error = evaluate_split(model, splits.validation, batch)[1] if len(splits.validation) else math.nan
    test_loss, test_error, attention = evaluate_split(model, splits.test, batch, attention=is_transformer)
    records["energies"].append((step, train_loss))
    records["snapshots"].append(
        {"step": step, "train_loss": train_loss, "train_error": train_error, "validation_error": validation_error,
         "test_loss": test_loss, "test_error": test_error, "squared_norm": float(sampler.w @ sampler.w)}
    )  # fmt: skip
    if attention is not None and step > burn_in:
        previous = records["attention_sum"]
        records["attention_sum"] = attention if previous is None else previous + attention
        records["attention_count"] += 1


# -- many temperatures ----------------------------------------------------------------------------------
def _worker(task: TemperatureTask, queue: Any, stop: Any) -> dict[str, Any]:
    torch.set_num_threads(1)  # one process per core
    return run_temperature(
        task, lambda done, total: queue.put((task.name, task.temperature, done, total)), stop.is_set,
        lambda: queue.put(None),  # a checkpoint is complete: the parent tells the run context
    )  # fmt: skip


def run_temperatures(
    tasks: list[TemperatureTask],
    workers: int,
    report: Callable[[float, str], None],
    on_checkpoint: Callable[[], None] = lambda: None,
    batched: bool = False,
    step_capture: str = "auto",
) -> list[dict[str, Any]]:
    """Run every task (in ``workers`` processes when > 1); ``report(fraction, message)`` may raise
    ``Cancelled``, which checkpoints and stops the workers. ``on_checkpoint()`` is called in this process
    after every checkpoint a task wrote. ``batched``: every start and temperature of each model run as
    replicas of one batch in this process (``replica_sampling``; for a GPU), its step run as ``step_capture``
    says (``batched_step``). Returns the records in task order."""
    total = sum(t.settings.steps for t in tasks) or 1
    done: dict[int, int] = {}
    latest = ["sampling"]  # the last step a worker announced: what the periodic report repeats

    def note(index: int, steps: int, message: str) -> None:
        done[index] = steps
        latest[0] = message
        report(sum(done.values()) / total, message)

    if batched:
        from analyzers.langevin.replica_sampling import run_replicas

        groups: dict[str, list[int]] = {}  # one batch per model (one weight shape): its starts x temperatures
        for index, task in enumerate(tasks):
            groups.setdefault(task.name.split("@")[0], []).append(index)
        by_index: dict[int, dict[str, Any]] = {}
        for name, members in groups.items():

            def group_progress(done_steps: int, steps: int, members: list[int] = members, name: str = name) -> None:
                for index in members:
                    done[index] = done_steps
                starts = len({tasks[i].name for i in members})
                report(sum(done.values()) / total, f"{name}: {len(members)} chains ({starts} start(s) x "
                       f"{len(members) // starts} temperatures), step {done_steps}/{steps}")

            group = run_replicas([tasks[i] for i in members], group_progress, on_checkpoint=on_checkpoint,
                                 step_capture=step_capture)
            by_index.update(zip(members, group, strict=True))
        return [by_index[index] for index in range(len(tasks))]

    if workers <= 1 or len(tasks) <= 1:
        results = []
        for index, task in enumerate(tasks):

            def progress(done_steps: int, steps: int, index: int = index, task: TemperatureTask = task) -> None:
                note(index, done_steps, f"{task.name} T={task.temperature:g}: step {done_steps}/{steps}")

            results.append(run_temperature(task, progress, on_checkpoint=on_checkpoint))
        return results
    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager:
        queue, stop = manager.Queue(), manager.Event()
        index_of = {(t.name, t.temperature): i for i, t in enumerate(tasks)}
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            futures = {pool.submit(_worker, task, queue, stop): i for i, task in enumerate(tasks)}
            pending = set(futures)
            try:
                while pending:
                    finished, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                    while not queue.empty():
                        message = queue.get()
                        if message is None:
                            on_checkpoint()
                            continue
                        name, temperature, steps, count = message
                        note(index_of[(name, temperature)], steps, f"{name} T={temperature:g}: step {steps}/{count}")
                    report(sum(done.values()) / total, latest[0])
                    for future in finished:
                        future.result()  # re-raise a worker's error here
            except BaseException:
                stop.set()
                for future in pending:
                    future.cancel()
                raise
            return [future.result() for future in sorted(futures, key=lambda future: futures[future])]
