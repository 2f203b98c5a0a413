"""The chains a sampling run advances, behind one interface, so that ``chain_runs.ChainRun`` is the one run
loop of both paths: ``SingleChain`` (one task: ``dynamics.PseudoLangevin`` or ``SGLD`` on a ``FlatObjective``,
the CPU's path, one temperature per process) and ``BatchedChains`` (every start and temperature of one model:
``dynamics.ReplicaPseudoLangevin`` on a ``ReplicaObjective``, the GPU's path, the step captured in a CUDA
graph).

Each builds its sampler and records from its tasks, continues from their checkpoints, and does what the loop
asks at a step (advance, refresh the masses, read the kinetic temperature, an energy, a snapshot, the weights)
in its own way: the single chain reads everything at once, the batch keeps on the device what it can
(minibatch losses, kinetic sums, SHAKE failures, energies) until :meth:`Chains.park` moves it into the records
at a snapshot or a checkpoint. Both integrate with ``integrator.langevin_update``; each keeps its own
reductions, so each path gives the numbers it gave before they shared the loop.

Also here: the masses of a chain from its gradient noise (``gradient_noise``, ``chain_masses``) and one
snapshot of a chain's weights (``record_snapshot``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from analyzers.langevin.chain_tasks import NOISE_MODES, SamplingSettings, TemperatureTask, chain_seed
from analyzers.langevin.data import Splits
from analyzers.langevin.dynamics import (
    SGLD,
    LockstepReplicas,
    PseudoLangevin,
    ReplicaPseudoLangevin,
    SamplerConfig,
)
from analyzers.langevin.integrator import resolve_capture
from analyzers.langevin.mass_matrix import (
    MassMatrix,
    NoiseSpectrum,
    guarded_mass_matrix,
    guarded_masses,
    noise_covariance_mass,
    noise_spectrum,
)
from analyzers.langevin.model import build_model, layer_slices
from analyzers.langevin.objective import FlatObjective, ReplicaObjective, evaluate_split
from analyzers.langevin.spec import MASS_RULES
from analyzers.langevin.thermostat import (
    SHARE_TOLERANCE,
    accumulate_kinetic,
    kinetic_values_batch,
    noise_setup,
    thermostat_report,
)

SAMPLERS = ("pseudo-langevin", "unconstrained", "sgld")


def new_records(task: TemperatureTask, start_norm: float) -> dict[str, Any]:
    """A chain's records before its first step (``chain_runs`` says what each holds)."""
    settings = task.settings
    return {
        "name": task.name,
        "temperature": task.temperature,
        "sampler": settings.sampler,
        "steps": settings.steps,
        "losses": np.zeros(settings.steps, dtype=np.float32),
        "snapshots": [],
        "weights": [],
        "attention_sum": None,
        "attention_count": 0,
        "mass_log10": [],
        "mass_guard": [],
        "seconds": 0.0,
        "energies": [],
        "start_norm": start_norm,
    }


def check_settings(settings: SamplingSettings) -> None:
    """One clear error for an unknown sampler or noise mode, before any work."""
    if settings.sampler not in SAMPLERS:
        raise ValueError(f"unknown sampler {settings.sampler!r}; use pseudo-langevin, unconstrained or sgld")
    if settings.noise not in NOISE_MODES:
        raise ValueError(f"unknown noise {settings.noise!r}; use minibatch or full_batch")


def exact_noise(settings: SamplingSettings, objective: FlatObjective, w: torch.Tensor) -> NoiseSpectrum:
    """The minibatch-noise spectrum at ``w`` (per-sequence gradients, mass_matrix.noise_spectrum)."""
    return noise_spectrum(objective.per_sequence_gradients(w), settings.batch_size, settings.variance_floor)


def gradient_noise(
    settings: SamplingSettings, objective: FlatObjective, w: torch.Tensor, known: NoiseSpectrum | None = None
) -> tuple[torch.Tensor | NoiseSpectrum, torch.Tensor]:
    """What the masses are built from at ``w`` (the exact noise spectrum for the noise-covariance rule,
    ``known`` when it was computed at this w already; else the per-weight variance over ``variance_batches``
    minibatches) and the per-weight variance (n,)."""
    if settings.mass_rule == "noise-covariance":
        spectrum = known or exact_noise(settings, objective, w)
        return spectrum, spectrum.variance
    variance = objective.gradient_variance(w, settings.variance_batches)
    return variance, variance


def chain_masses(
    task: TemperatureTask, noise: torch.Tensor | NoiseSpectrum, w: torch.Tensor, slices: list[slice], r: float
) -> tuple[MassMatrix, dict[str, float]]:
    """The masses of ``task``'s chain at ``w`` from the gradient noise there (``gradient_noise``) by its mass
    rule, guarded for the constraint, with the minibatch share ``r``; and what the guard used."""
    settings = task.settings
    max_ratio = settings.max_step_ratio if settings.sampler == "pseudo-langevin" else math.inf
    if isinstance(noise, NoiseSpectrum):
        mass = noise_covariance_mass(noise, task.temperature, settings.dt, settings.m1, r, SHARE_TOLERANCE)
        guarded, used = guarded_mass_matrix(mass, w, task.temperature, settings.dt, max_ratio)
        # a smaller share: fewer directions run hot enough to need the low-rank term
        if used["effective_r"] < r:
            mass = noise_covariance_mass(
                noise, task.temperature, settings.dt, settings.m1, used["effective_r"], SHARE_TOLERANCE
            )
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


def record_snapshot(
    task: TemperatureTask,
    objective: FlatObjective,
    w: torch.Tensor,
    splits: Splits,
    records: dict[str, Any],
    step: int,
    burn_in: int,
) -> None:
    """Full-split losses and errors at the weights ``w`` (n,); attention accumulated after burn-in."""
    objective.load(w)
    is_transformer = task.config.kind == "transformer"
    model, batch = objective.model, task.settings.eval_batch_size
    train_loss, train_error, _ = evaluate_split(model, splits.train, batch)
    validation_error = (
        evaluate_split(model, splits.validation, batch)[1] if len(splits.validation) else math.nan
    )
    test_loss, test_error, attention = evaluate_split(model, splits.test, batch, attention=is_transformer)
    records["energies"].append((step, train_loss))
    records["snapshots"].append(
        {
            "step": step,
            "train_loss": train_loss,
            "train_error": train_error,
            "validation_error": validation_error,
            "test_loss": test_loss,
            "test_error": test_error,
            "squared_norm": float(w @ w),
        }
    )
    if attention is not None and step > burn_in:
        previous = records["attention_sum"]
        records["attention_sum"] = attention if previous is None else previous + attention
        records["attention_count"] += 1


class Chains:
    """R chains of one model advanced in lockstep (R = 1 for ``SingleChain``): what ``chain_runs.ChainRun``
    asks of them. ``records``, ``batch_generators`` and ``noise_generators`` are per chain, in task order."""

    tasks: list[TemperatureTask]
    records: list[dict[str, Any]]
    batch_generators: list[torch.Generator]
    noise_generators: list[torch.Generator]
    splits: Splits
    device: torch.device
    refreshes_masses: bool  # False for SGLD: no masses
    stop_message: str  # what a stop at a snapshot says, before " at step N"

    @property
    def steps_done(self) -> int:
        raise NotImplementedError

    def step(self) -> torch.Tensor:
        """Advance every chain by one step; their minibatch losses (R,) (or () for one chain) on the
        device."""
        raise NotImplementedError

    def refresh_masses(self, step: int) -> None:
        """Masses from the gradient noise at the current weights (momenta redrawn)."""
        raise NotImplementedError

    def read_kinetic(self) -> None:
        """Add this step's kinetic temperature along the noise directions to the open block."""
        raise NotImplementedError

    def check(self) -> None:
        """Raise ``dynamics.ConstraintError`` if a SHAKE step failed."""
        raise NotImplementedError

    def park(self) -> None:
        """Move what waits on the device (kinetic sums, energies) into the records."""

    def snapshot(self, step: int, burn_in: int) -> None:
        raise NotImplementedError

    def record_energy(self, step: int) -> None:
        """The full training loss of every chain at ``step``."""
        raise NotImplementedError

    def weights(self) -> list[torch.Tensor]:
        """A float32 copy of each chain's weights on the host."""
        raise NotImplementedError

    def sampler_state(self, index: int) -> dict[str, Any]:
        """Chain ``index``'s sampler state in ``PseudoLangevin.state_dict``'s format."""
        raise NotImplementedError

    def finish(self) -> None:
        """The records' closing fields (masses, kinetic temperature, thermostat report, final norm)."""
        raise NotImplementedError


class SingleChain(Chains):
    """One task: ``PseudoLangevin`` (constrained or not) or ``SGLD`` on a ``FlatObjective``, built as at the
    start (consuming the same random numbers) and then, on a resume, given its checkpoint's state, generators
    and records."""

    def __init__(self, task: TemperatureTask, saved: dict[str, Any] | None) -> None:
        settings, device = task.settings, torch.device(task.device)
        self.task, self.tasks, self.settings, self.device = task, [task], settings, device
        torch.manual_seed(task.seed)
        model = build_model(task.config).to(device)
        model.load_state_dict(task.start_state)
        self.splits = task.splits.to(device)
        seed = chain_seed(task.seed, task.temperature)
        self.batch_generators = [torch.Generator(device=device).manual_seed(seed)]
        self.noise_generators = [torch.Generator(device=device).manual_seed(seed + 1)]
        self.objective = FlatObjective(
            model, self.splits.train, settings.batch_size, self.batch_generators[0]
        )
        self.slices = list(layer_slices(model).values())
        w0 = self.objective.weights()
        check_settings(settings)
        if settings.noise == "full_batch":
            self.objective.full_batch = True  # exact gradients: the white noise is all the noise, isotropic
        self.minibatch_noise = not self.objective.full_batch
        records = new_records(task, float(w0 @ w0))
        self.records = [records]
        self.refreshes_masses = settings.sampler != "sgld"
        self.stop_message = f"{task.name} at T={task.temperature:g} stopped"
        self.sampler: PseudoLangevin | SGLD
        if settings.sampler == "sgld":
            records["r_used"] = settings.r
            self.sampler = SGLD(w0, self.objective, settings.sgld_step_size, task.temperature,
                                self.noise_generators[0])  # fmt: skip
        else:
            initial = exact_noise(settings, self.objective, w0)
            records.update(noise_setup(initial, settings))
            masses, variance = self._masses(w0, 0, initial)
            config = SamplerConfig(
                task.temperature,
                settings.dt,
                settings.m1,
                settings.sampler == "pseudo-langevin",
                settings.fixman,
            )
            self.sampler = PseudoLangevin(
                w0,
                self.objective,
                masses,
                config,
                variance if self.minibatch_noise else None,
                self.noise_generators[0],
            )
        if saved is not None:
            self.sampler.load_state_dict(saved["sampler"])
            self.batch_generators[0].set_state(saved["batch_generator"])
            self.noise_generators[0].set_state(saved["noise_generator"])
            self.records = [saved["records"]]

    def _masses(self, w: torch.Tensor, step: int, known: NoiseSpectrum | None = None
                ) -> tuple[MassMatrix, torch.Tensor]:  # fmt: skip
        noise, variance = gradient_noise(self.settings, self.objective, w, known)
        mass, used = chain_masses(self.task, noise, w, self.slices, float(self.records[0]["r_used"]))
        self.records[0]["mass_guard"].append({"step": step, **used})
        return mass, variance

    @property
    def steps_done(self) -> int:
        return self.sampler.steps_done

    def step(self) -> torch.Tensor:
        return self.sampler.step()

    def refresh_masses(self, step: int) -> None:
        assert isinstance(self.sampler, PseudoLangevin)
        masses, variance = self._masses(self.sampler.w, step)
        self.sampler.set_masses(masses, variance if self.minibatch_noise else None)

    def read_kinetic(self) -> None:
        if isinstance(self.sampler, PseudoLangevin) and "noise_directions" in self.records[0]:
            accumulate_kinetic(self.records[0], self.sampler.p, self.sampler.mass)

    def check(self) -> None:
        self.sampler.check()

    def snapshot(self, step: int, burn_in: int) -> None:
        record_snapshot(
            self.task, self.objective, self.sampler.w, self.splits, self.records[0], step, burn_in
        )

    def record_energy(self, step: int) -> None:
        self.objective.load(self.sampler.w)
        loss = evaluate_split(self.objective.model, self.splits.train, self.settings.eval_batch_size)[0]
        self.records[0]["energies"].append((step, loss))

    def weights(self) -> list[torch.Tensor]:
        return [self.sampler.w.float().cpu()]

    def sampler_state(self, index: int) -> dict[str, Any]:
        return self.sampler.state_dict()

    def finish(self) -> None:
        records, sampler = self.records[0], self.sampler
        if isinstance(sampler, PseudoLangevin):
            records["mass_log10"] = np.percentile(
                np.log10(sampler.mass.diagonal.cpu().numpy()), [0, 50, 100]
            ).tolist()
            records["kinetic_temperature"] = sampler.kinetic_temperature()
            records["thermostat"] = thermostat_report(records, self.task.temperature, self.settings)
            records.pop("noise_directions", None)
        records["final_norm"] = float(sampler.w @ sampler.w)


class BatchedChains(Chains):
    """Tasks of one model (any starts and temperatures, one shared seed, device and settings) as replicas of
    one batch: one ``ReplicaPseudoLangevin``, its step run as ``step_capture`` says. A ``FlatObjective``
    beside it computes what is per chain (each start's noise spectrum, the snapshots)."""

    def __init__(
        self, tasks: list[TemperatureTask], saved: list[dict[str, Any] | None], step_capture: str
    ) -> None:
        first = tasks[0]
        settings, device = first.settings, torch.device(first.device)
        self.tasks, self.settings, self.device = tasks, settings, device
        self.step_capture = resolve_capture(step_capture, device)
        if settings.noise not in NOISE_MODES:
            raise ValueError(f"unknown noise {settings.noise!r}; use minibatch or full_batch")
        torch.manual_seed(first.seed)
        self.splits = first.splits.to(device)
        seeds = [chain_seed(task.seed, task.temperature) for task in tasks]
        self.batch_generators = [torch.Generator(device=device).manual_seed(seed) for seed in seeds]
        self.noise_generators = [torch.Generator(device=device).manual_seed(seed + 1) for seed in seeds]
        self.objective = ReplicaObjective(
            self._model(first.start_state), self.splits.train, settings.batch_size, self.batch_generators
        )
        if settings.noise == "full_batch":
            self.objective.full_batch = True
        self.minibatch_noise = not self.objective.full_batch
        # A plain single-weight-vector objective: the noise setup (shared by every temperature) and the
        # evaluations.
        self.evaluator = FlatObjective(self._model(first.start_state), self.splits.train, settings.batch_size,
                                       torch.Generator(device=device))  # fmt: skip
        self.slices = list(layer_slices(self.evaluator.model).values())
        self.refreshes_masses = True
        self.stop_message = f"{first.name} replicas stopped"
        start = self._starts(saved)
        masses, variance = self._masses(start, 0)
        self.sampler = ReplicaPseudoLangevin(
            start, self.objective, masses, [task.temperature for task in tasks], self.noise_generators,
            variance if self.minibatch_noise else None, settings.dt, settings.m1,
            settings.sampler == "pseudo-langevin", settings.fixman, self.step_capture,
        )  # fmt: skip
        for index, state in enumerate(saved):
            # built as at the start, then replaced by the checkpoint (as a single chain is)
            if state is not None:
                self.sampler.load_replica_state(index, state["sampler"])
                self.batch_generators[index].set_state(state["batch_generator"])
                self.noise_generators[index].set_state(state["noise_generator"])
                self.records[index] = state["records"]
        # (R, k, n), each replica its start's leading noise directions; a resumed batch keeps those it started
        # with
        self.directions = torch.stack([record["noise_directions"] for record in self.records]).to(
            self.sampler.p
        )
        # the open block's kinetic sums live here while sampling and in each record (as a single chain keeps
        # them) at a checkpoint or a block's end
        self.kinetic_sum = (
            torch.stack([record["directional_sum"] for record in self.records]).to(self.sampler.p)
            if all("directional_sum" in record for record in self.records)
            else None
        )
        # the full training loss of every replica, one vmapped call, kept on the device until the next
        # snapshot
        self.pending_energies: list[tuple[int, torch.Tensor]] = []

    def _model(self, state: dict[str, torch.Tensor]) -> torch.nn.Module:
        model = build_model(self.tasks[0].config).to(self.device)
        model.load_state_dict(state)
        return model

    def _starts(self, saved: list[dict[str, Any] | None]) -> torch.Tensor:
        """The replicas' starting weights (R, n); the records, with each start's noise spectrum and setup
        (shared by its temperatures: one start per task name, 'transformer@ES')."""
        weights: dict[str, torch.Tensor] = {}
        self.initial: dict[str, NoiseSpectrum] = {}
        for task in self.tasks:
            if task.name not in weights:
                parameters = self._model(task.start_state).parameters()
                weights[task.name] = torch.cat([p.detach().reshape(-1) for p in parameters
                                                if p.requires_grad]).double()  # fmt: skip
                self.initial[task.name] = exact_noise(self.settings, self.evaluator, weights[task.name])
        setups = {name: noise_setup(spectrum, self.settings) for name, spectrum in self.initial.items()}
        self.records = [
            {**new_records(task, float(weights[task.name] @ weights[task.name])), **setups[task.name],
             "kinetic_blocks": [], "kinetic_block_steps": [], "replicas": len(self.tasks)}
            for task in self.tasks
        ]  # fmt: skip
        return torch.stack([weights[task.name] for task in self.tasks])  # (R, n)

    def _masses(self, w: torch.Tensor, step: int) -> tuple[MassMatrix, torch.Tensor]:
        settings = self.settings
        # per replica: its own spectrum (N per-sequence gradients)
        if settings.mass_rule == "noise-covariance":
            noises, variances = zip(*(gradient_noise(settings, self.evaluator, w[index],
                                                     self.initial[task.name] if step == 0 else None)
                                      for index, task in enumerate(self.tasks)), strict=True)  # fmt: skip
            variance = torch.stack(variances)
        else:  # every replica's minibatch variance in one batched call
            variance = self.objective.gradient_variance(w, settings.variance_batches)  # (R, n)
            noises = tuple(variance)
        masses = []
        for index, task in enumerate(self.tasks):
            mass, used = chain_masses(
                task, noises[index], w[index], self.slices, float(self.records[index]["r_used"])
            )
            self.records[index]["mass_guard"].append({"step": step, **used})
            masses.append(mass)
        return MassMatrix.stack(masses), variance

    @property
    def steps_done(self) -> int:
        return self.sampler.steps_done

    def step(self) -> torch.Tensor:
        return self.sampler.step()

    def refresh_masses(self, step: int) -> None:
        masses, variance = self._masses(self.sampler.w, step)
        self.sampler.set_masses(masses, variance if self.minibatch_noise else None)

    def read_kinetic(self) -> None:
        values = kinetic_values_batch(self.sampler.p, self.sampler.mass, self.directions)  # (R, 1 + k)
        self.kinetic_sum = values if self.kinetic_sum is None else self.kinetic_sum + values
        for record in self.records:
            record["directional_count"] = record.get("directional_count", 0) + 1

    def check(self) -> None:
        self.sampler.check()

    def park(self) -> None:
        if self.kinetic_sum is not None:
            for index, record in enumerate(self.records):
                record["directional_sum"] = self.kinetic_sum[index].clone()
        if self.pending_energies:
            values = torch.stack([losses for _, losses in self.pending_energies]).cpu().tolist()  # (count, R)
            for (step_of, _), row in zip(self.pending_energies, values, strict=True):
                for index, record in enumerate(self.records):
                    record["energies"].append((step_of, row[index]))
            self.pending_energies.clear()

    def snapshot(self, step: int, burn_in: int) -> None:
        self.kinetic_sum = None  # parked: the records' blocks close next
        for index, (task, record) in enumerate(zip(self.tasks, self.records, strict=True)):
            record_snapshot(task, self.evaluator, self.sampler.w[index], self.splits, record, step, burn_in)

    def record_energy(self, step: int) -> None:
        self.pending_energies.append(
            (step, self.objective.full_losses(self.sampler.w, self.settings.eval_batch_size))
        )

    def weights(self) -> list[torch.Tensor]:
        weights = self.sampler.w.float().cpu()  # one copy for every replica
        return [weights[index].clone() for index in range(len(self.tasks))]

    def sampler_state(self, index: int) -> dict[str, Any]:
        return self.sampler.replica_state(index)

    def finish(self) -> None:
        kinetic = self.sampler.kinetic_temperature()
        for index, (task, record) in enumerate(zip(self.tasks, self.records, strict=True)):
            diagonal = self.sampler.mass.diagonal[index].cpu().numpy()
            record["mass_log10"] = np.percentile(np.log10(diagonal), [0, 50, 100]).tolist()
            record["kinetic_temperature"] = float(kinetic[index])
            record["thermostat"] = thermostat_report(record, task.temperature, self.settings)
            record.pop("noise_directions", None)
            record["final_norm"] = float(self.sampler.w[index] @ self.sampler.w[index])


class ChainGroups(Chains):
    """Every chain of an experiment advanced in lockstep: one ``BatchedChains`` per model (weight shape), each
    with its starts and temperatures, every group advanced by one call per step
    (``dynamics.LockstepReplicas``: on CUDA one captured graph, one replay per step of the whole experiment).
    Each group keeps its own batched model call (two weight shapes cannot share one vmapped call), masses and
    generators, so its records equal those of the group run alone; what the groups share is the step's call,
    the loop, its snapshots and its checkpoints. Chains are numbered group after group, in task order within
    a group."""

    def __init__(self, groups: list[BatchedChains]) -> None:
        if not groups:
            raise ValueError("no chain groups")
        first = groups[0]
        if any(group.settings != first.settings or group.device != first.device for group in groups):
            raise ValueError("chain groups in lockstep must share the sampler settings and the device")
        if len({group.steps_done for group in groups}) > 1:
            raise ValueError("chain groups advanced in lockstep must stand at the same step")
        self.groups, self.settings, self.device = groups, first.settings, first.device
        self.lockstep = LockstepReplicas([group.sampler for group in groups], first.step_capture)
        self.tasks = [task for group in groups for task in group.tasks]
        self.records = [record for group in groups for record in group.records]
        self.batch_generators = [g for group in groups for g in group.batch_generators]
        self.noise_generators = [g for group in groups for g in group.noise_generators]
        self.splits = first.splits
        self.refreshes_masses = True
        self.stop_message = " and ".join(group.stop_message for group in groups)
        # chain index -> (group, index within it)
        self.owner = [(group, index) for group in groups for index in range(len(group.tasks))]

    @property
    def steps_done(self) -> int:
        return self.groups[0].steps_done

    def step(self) -> torch.Tensor:
        # (R,) over every group
        return torch.cat([losses.to(torch.float64) for losses in self.lockstep.step()])

    def refresh_masses(self, step: int) -> None:
        for group in self.groups:
            group.refresh_masses(step)

    def read_kinetic(self) -> None:
        for group in self.groups:
            group.read_kinetic()

    def check(self) -> None:
        for group in self.groups:
            group.check()

    def park(self) -> None:
        for group in self.groups:
            group.park()

    def snapshot(self, step: int, burn_in: int) -> None:
        for group in self.groups:
            group.snapshot(step, burn_in)

    def record_energy(self, step: int) -> None:
        for group in self.groups:
            group.record_energy(step)

    def weights(self) -> list[torch.Tensor]:
        return [weights for group in self.groups for weights in group.weights()]

    def sampler_state(self, index: int) -> dict[str, Any]:
        group, local = self.owner[index]
        return group.sampler_state(local)

    def finish(self) -> None:
        for group in self.groups:
            group.finish()
