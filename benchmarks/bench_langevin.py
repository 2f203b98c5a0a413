"""Speed of the Langevin analyzer, measured in one run:

1. sampler steps per second for the Table A1 transformers (one block: T1-d26, T1-d64; four blocks:
   T4-d14, T4-d64) on the chosen device, and the cost of one norm-constrained pseudo-Langevin step, of one
   unconstrained step and of one SGLD step relative to one plain minibatch gradient step (load the flat
   weights, forward, backward; what any sampler must pay). The variance estimation (``--variance-batches``
   minibatch gradients every ``--variance-every`` steps) is amortized into the constrained step.
   Goal: constrained step with variance estimation under 1.5x the plain gradient step.
2. the design throughput: the pipeline's sharded design (``--shard-n`` sequences from ``--shard-chains`` chains in
   ``--design-shards`` shards: small's) on 1 worker and on every core, projected to 16 cores; ``--design-n``
   sequences on the shipped 1UBI by the vectorized simulated tempering
   with the calibrated protocol (8,000 burn-in sweeps, ``--design-burn-in``, then ticks; ``--design-chains``, the
   paper preset's 1,400), one thread, with the swap rate, the identity and entropy against the authors' and the
   design's own checks.

3. equilibrium sampling at one temperature (``--temperature``, the ``--ess-model`` briefly pre-trained with
   Adam so that the chain starts near its stationary loss): steps/s and the effective sample size (ESS,
   Geyer's initial monotone sequence) of the full training loss per second of sampling, for kb's sampler
   (norm-constrained pseudo-Langevin, per-weight masses with the minibatch share r capped along the
   leading noise directions, minibatch noise counted in the thermostat) and for a plain Langevin baseline
   of the same model (unconstrained, unit masses, all the thermostat noise added as white noise on top of
   the minibatch noise; its dt is set so that its thermal step equals kb's median step). The loss is
   evaluated every ``--energy-every`` steps outside the timed steps; the ESS is over the second half.
   Also the kinetic temperature on average (kb: over the weights; plain: the same) over T.
4. every chain of a run in one batched step (``--chains`` chains of ``--ess-model``: the ``small`` preset's 2 starts
   x 5 temperatures of its T1-d64 transformer, minibatch 64, masses with a low-rank term of ``--mass-rank``
   directions as its noise-covariance rule keeps): chain-steps per second one chain at a time, batched
   (``integrator``, eager) and batched from a CUDA graph, side by side from interleaved repeats (medians); the
   graph column reads "n/a (CPU)" without CUDA. ``--compile`` adds torch.compile's column (reduce-overhead on
   CUDA, the default mode on the CPU: a minute or more of compilation).
5. batched replicas: where CUDA exists, the speed-up of one batched step of ``--replicas`` temperatures
   (one vmapped model call) over one step of each temperature in turn; "no GPU" otherwise (and, with
   ``--replicas-on-cpu``, the same measurement on the CPU, for information only).
6. the analyzer's own loop (``--sections analyzer``, not in the default list): ``chain_runs.run_chain_groups``, what
   ``langevin.sweep`` runs on a GPU, for ``--analyzer-steps`` steps of the ``small`` preset's 10 chains (2 starts x 5
   temperatures of its T1-d64 shape, ``--analyzer-sizes`` sequences, noise-covariance masses from the real noise
   spectrum of two briefly trained starts; ``--analyzer-models both``: and small's feed-forward baseline's 10,
   every chain of the experiment) with small's schedule of snapshots, energies, weight copies, mass
   refresh and checkpoints scaled to that length: its chain-steps/s after the first snapshot, the host
   synchronisations per step (CUDA), the checkpoints' size, beside section 4's batched and batched + graph
   figures (both models: section 7's one call and one graph, ``--groups-scale small``) when that ran in the same
   call. The gap between them is what the loop costs around the step.

7. every chain of the experiment in one step (``--sections groups``, not in the default list): both models of the
   ``--groups-scale`` preset (small: its one-block transformer and feed-forward baseline, 2 starts x 5 temperatures
   each; paper: Table A1's T4-d64 and FF-d64, 2 x 9 each, minibatch 128), each model's chains one batch, stepped
   one group after another (each its own step: on CUDA its own graph, one replay per model) against one call for
   both (``dynamics.LockstepReplicas``: on CUDA one graph, one replay per step); chain-steps/s of all chains, medians
   of interleaved repeats. On the CPU only the eager columns run (their ratio ~1: one Python call per step apart).

Sections 1-2 report the best of interleaved repeats (other processes on a shared machine only ever add
time); sections 3-4 and 7 report medians of interleaved repeats, as asked for the sampler comparison.

Run: .venv/bin/python benchmarks/bench_langevin.py [--sections chains,equilibrium,replicas,steps,design]
     [--models T1-d26,T1-d64,T4-d14,T4-d64] [--steps 40] [--repeats 3] [--batch-size 64] [--design-n 12000]
     [--design-chains 1400] [--design-burn-in 8000] [--threads 1] [--device cpu] [--ess-model T1-d64]
     [--chain-steps 2000] [--temperature 1e-4] [--chains 10] [--mass-rank 578] [--compile] [--analyzer-steps 1000]
     [--analyzer-sizes 1000,200,500] [--analyzer-capture auto] [--analyzer-models transformer]
     [--groups-scale small] [--groups-mass-rank -1]
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from analyzers.langevin import design, structure
from analyzers.langevin.chain_runs import run_chain_groups
from analyzers.langevin.chain_tasks import SamplingSettings, TemperatureTask
from analyzers.langevin.convergence import effective_sample_size
from analyzers.langevin.data import MaskedSplit, Splits, make_splits, masked_loss
from analyzers.langevin.design_parallel import available_cores, design_sequences
from analyzers.langevin.dynamics import SGLD, LockstepReplicas, PseudoLangevin, ReplicaPseudoLangevin, SamplerConfig
from analyzers.langevin.integrator import resolve_capture
from analyzers.langevin.mass_matrix import (
    MassMatrix,
    guarded_mass_matrix,
    guarded_masses,
    noise_covariance_mass,
    noise_spectrum,
)
from analyzers.langevin.model import TABLE_A1, ModelConfig, build_model, count_parameters
from analyzers.langevin.objective import FlatObjective, ReplicaObjective, evaluate_split
from analyzers.langevin.pipeline import model_configs
from analyzers.langevin.spec import (
    CALIBRATED_BURN_IN,
    CALIBRATED_SWEEPS_BETWEEN,
    DEFAULT_LADDER,
    PAPER_DESIGN_CHAINS,
    SCALES,
    SMALL,
    LangevinParams,
)
from analyzers.langevin.thermostat import safe_share
from analyzers.langevin.train import Trainer, TrainingSettings
from analyzers.langevin.train_batched import StackedTrainer


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _timed(fn: Callable[[], object], steps: int, device: str) -> float:
    _sync(device)
    start = time.perf_counter()
    for _ in range(steps):
        fn()
    _sync(device)
    return (time.perf_counter() - start) / steps


def _interleaved(methods: dict[str, Callable[[], object] | None], steps: int, repeats: int,
                 device: str) -> dict[str, list[float]]:
    """Seconds per step of each method (None: not on this device), after three warm-up calls each (a graph is
    captured, a function compiled, there); the repeats interleaved, so that a slow spell of a shared machine
    hits every column."""
    present = {key: method for key, method in methods.items() if method is not None}
    for method in present.values():
        for _ in range(3):
            method()
    times: dict[str, list[float]] = {key: [] for key in present}
    for _ in range(repeats):
        for key, method in present.items():
            times[key].append(_timed(method, steps, device))
    return times


def bench_sampler(name: str, args: argparse.Namespace, splits: Splits) -> None:
    config = TABLE_A1[name][0]
    device = args.device
    torch.manual_seed(0)
    model = build_model(config).to(device)
    objective = FlatObjective(model, splits.train.to(device), args.batch_size, torch.Generator(device).manual_seed(0))
    w = objective.weights()
    temperature = 1e-4
    variance = objective.gradient_variance(w, 8)
    masses, _ = guarded_masses(variance, w, temperature, r=0.5)
    generator = torch.Generator(device).manual_seed(1)
    constrained = PseudoLangevin(w, objective, masses, SamplerConfig(temperature), variance, generator)
    free = PseudoLangevin(w, objective, masses, SamplerConfig(temperature, constrained=False), variance, generator)
    sgld = SGLD(w, objective, 1e-6, temperature, generator)
    methods = {
        "gradient": lambda: objective(w),
        "constrained": constrained.step,
        "unconstrained": free.step,
        "sgld": sgld.step,
        "variance": lambda: objective.gradient_variance(w, 2),  # per 2 minibatches
    }
    for method in methods.values():  # warm-up
        method()
    times: dict[str, list[float]] = {k: [] for k in methods}
    for _ in range(args.repeats):
        for key, method in methods.items():
            times[key].append(_timed(method, args.steps if key != "variance" else max(args.steps // 2, 1), device))
    best = {k: min(v) for k, v in times.items()}
    per_minibatch = best["variance"] / 2
    amortized = best["constrained"] + args.variance_batches * per_minibatch / args.variance_every
    constrained.check()
    print(f"{name:7s} {count_parameters(model):>8,} params  gradient step {best['gradient'] * 1e3:7.2f} ms  "
          f"pL constrained {1 / best['constrained']:7.1f} steps/s ({best['constrained'] / best['gradient']:.2f}x)  "
          f"+ variance every {args.variance_every} ({amortized / best['gradient']:.2f}x, goal < 1.5x)  "
          f"unconstrained {best['unconstrained'] / best['gradient']:.2f}x  sgld {best['sgld'] / best['gradient']:.2f}x")


def bench_design(args: argparse.Namespace) -> None:
    contact_map = structure.shipped_contact_map()
    composition = design.encode(contact_map.sequence)
    started = time.perf_counter()
    report = design.simulated_tempering(
        contact_map.contacts, design.interaction_matrix(0), composition, args.design_n, DEFAULT_LADDER,
        sweeps_between=CALIBRATED_SWEEPS_BETWEEN, burn_in_sweeps=args.design_burn_in,
        num_chains=args.design_chains, seed=0, max_sweeps=10**6,
    )  # fmt: skip
    seconds = time.perf_counter() - started
    exact = bool((np.sort(report.sequences, axis=1) == np.sort(composition)).all())
    check = report.sample_energy_check()
    protocol = ("the calibrated protocol" if args.design_burn_in == CALIBRATED_BURN_IN
                else f"burn-in {args.design_burn_in} sweeps, not the calibrated {CALIBRATED_BURN_IN}")
    print(f"design: {args.design_n} sequences of length {len(composition)} (1UBI, {protocol}) in "
          f"{seconds:.1f} s ({args.design_n / seconds:.0f}/s), {report.swaps_attempted / seconds / 1e6:.2f} M swap "
          f"attempts/s, {report.num_chains} chains, {report.sweeps} sweeps")
    print(f"        identity between sequences {report.mean_pairwise_identity:.3f} (authors 0.34), site entropy "
          f"{report.site_entropy:.2f} nats (authors 1.57), consecutive samples of a chain "
          f"{report.consecutive_identity:.3f}; composition exact: {exact}; at the level's mean energy: "
          f"{check.get('samples_equilibrated')}, stationary: {check.get('samples_stationary')}")
    print(f"        T      {' '.join(f'{t:7.3f}' for t in report.temperatures)}")
    # A level no chain visited while sampling has no mean energy: shown as '-', not as nan.
    energies = [f"{e:7.1f}" if np.isfinite(e) else f"{'-':>7}" for e in report.mean_energy]
    print(f"        <E>    {' '.join(energies)}")
    print(f"        accept {' '.join(f'{a:7.3f}' for a in report.acceptance_swap)}  (temperature moves "
          f"{report.acceptance_temperature:.2f})")


def bench_design_shards(args: argparse.Namespace) -> None:
    """The design as the pipeline runs it (``design_parallel``: ``--shard-chains`` chains in ``--design-shards``
    shards, small's 200 in 8 by default) on 1 worker and on every available core, from interleaved repeats
    (medians), with the projection to 16 cores (the slowest shard, the shards taking turns)."""
    contact_map = structure.shipped_contact_map()
    problem: dict[str, Any] = {
        "contacts": contact_map.contacts, "interactions": design.interaction_matrix(0),
        "composition": design.encode(contact_map.sequence), "num_samples": args.shard_n,
        "temperatures": DEFAULT_LADDER, "sweeps_between": CALIBRATED_SWEEPS_BETWEEN,
        "burn_in_sweeps": args.shard_burn_in, "num_chains": args.shard_chains, "seed": 0,
        "shards": args.design_shards, "max_sweeps": 10**6,
    }  # fmt: skip
    counts = sorted({1, available_cores()})
    seconds: dict[int, list[float]] = {count: [] for count in counts}
    results: dict[int, np.ndarray] = {}
    for _ in range(args.repeats):
        for count in counts:
            started = time.perf_counter()
            results[count] = design_sequences(**problem, workers=count).sequences
            seconds[count].append(time.perf_counter() - started)
    same = all(np.array_equal(results[count], results[1]) for count in counts)
    one = float(np.median(seconds[1]))
    shards = min(args.design_shards, args.shard_chains)
    print(f"design shards: {args.shard_n} sequences from {args.shard_chains} chains in {shards} shards, burn-in "
          f"{args.shard_burn_in} sweeps, medians of {args.repeats} interleaved repeats; same sequences on every "
          f"worker count: {same}")
    for count in counts:
        median = float(np.median(seconds[count]))
        print(f"        {count:3d} worker(s): {median:6.1f} s ({one / median:.2f}x one worker)")
    print(f"        16 cores, projected: {one / shards * -(-shards // 16):.1f} s (one worker's time per shard x the "
          "rounds of shards; the slowest shard and the workers' start come on top)")


def _pretrained_state(name: str | ModelConfig, train: MaskedSplit, steps: int, device: str) -> dict[str, torch.Tensor]:
    """Adam for ``steps`` minibatch steps from a seeded initialization: a start near the sampled region."""
    torch.manual_seed(0)
    model = build_model(TABLE_A1[name][0] if isinstance(name, str) else name).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    generator = torch.Generator(device).manual_seed(0)
    for _ in range(steps):
        batch = train.subset(torch.randint(len(train), (64,), generator=generator, device=device))
        loss, _ = masked_loss(model(batch.inputs)["logits"], batch)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def _kb_masses(objective: FlatObjective, w: torch.Tensor, args: argparse.Namespace) -> dict[str, Any]:
    """kb's masses at one temperature, from the exact minibatch-noise spectrum: per-weight with r capped along
    the worst noise direction ("kb"), and per-weight plus the low-rank noise term at the full r ("kb-cov"),
    each through the constraint's guard."""
    spectrum = noise_spectrum(objective.per_sequence_gradients(w), args.batch_size)
    share = safe_share(args.r, float(spectrum.eigenvalues[0]), tolerance=0.05)
    masses, used = guarded_masses(spectrum.variance, w, args.temperature, r=share)
    covariance, used_cov = guarded_mass_matrix(noise_covariance_mass(spectrum, args.temperature, r=args.r), w,
                                               args.temperature)  # fmt: skip
    return {"masses": masses, "mass_matrix": covariance, "variance": spectrum.variance,
            "share": float(used["effective_r"]), "share_cov": float(used_cov["effective_r"]), "rank": covariance.rank}


def _chain(
    method: str, state: dict[str, torch.Tensor], train: MaskedSplit, setup: dict[str, object], seed: int,
    args: argparse.Namespace,
) -> dict[str, float]:
    """One chain of ``args.chain_steps`` steps: steps/s of the sampler alone, ESS of the loss over the second
    half per second of that half's sampling, mean kinetic temperature over T (second half)."""
    device = args.device
    model = build_model(TABLE_A1[args.ess_model][0]).to(device)
    model.load_state_dict(state)
    objective = FlatObjective(model, train, args.batch_size, torch.Generator(device).manual_seed(seed))
    w = objective.weights()
    noise = torch.Generator(device).manual_seed(seed + 1)
    masses, variance = setup["masses"], setup["variance"]
    assert isinstance(masses, torch.Tensor) and isinstance(variance, torch.Tensor)
    if method == "kb":
        sampler = PseudoLangevin(w, objective, masses, SamplerConfig(args.temperature), variance, noise)
    elif method == "kb-cov":
        mass = setup["mass_matrix"]
        assert isinstance(mass, MassMatrix)
        sampler = PseudoLangevin(w, objective, mass, SamplerConfig(args.temperature), variance, noise)
    else:  # plain: unit masses, unconstrained, white noise for all of M T m1^2 (minibatch noise on top)
        config = SamplerConfig(args.temperature, dt=float(setup["plain_dt"]), constrained=False)  # type: ignore[arg-type]
        sampler = PseudoLangevin(w, objective, torch.ones_like(masses), config, None, noise)
    half = args.chain_steps // 2
    energies, kinetic, seconds, total = [], [], 0.0, 0.0
    for start in range(0, args.chain_steps, args.energy_every):
        _sync(device)
        began = time.perf_counter()
        for _ in range(args.energy_every):
            sampler.step()
        _sync(device)
        elapsed = time.perf_counter() - began
        total += elapsed
        if start >= half:
            seconds += elapsed
            objective.load(sampler.w)
            energies.append(evaluate_split(objective.model, train, 1024)[0])
            kinetic.append(sampler.kinetic_temperature() / args.temperature)
    if method != "plain":
        sampler.check()
    ess = effective_sample_size(np.asarray(energies))
    return {"steps_per_s": args.chain_steps / total, "ess": ess, "ess_per_s": ess / seconds,
            "mean_loss": float(np.mean(energies)), "kinetic_over_t": float(np.mean(kinetic))}  # fmt: skip


def bench_equilibrium(args: argparse.Namespace, splits: Splits) -> None:
    device = args.device
    train = splits.train.to(device)
    state = _pretrained_state(args.ess_model, train, args.pretrain_steps, device)
    model = build_model(TABLE_A1[args.ess_model][0]).to(device)
    model.load_state_dict(state)
    objective = FlatObjective(model, train, args.batch_size, torch.Generator(device).manual_seed(12345))
    setup = _kb_masses(objective, objective.weights(), args)
    # plain Langevin with unit masses: dt so that its thermal step dt sqrt(T / 1) equals kb's median dt sqrt(T / M)
    setup["plain_dt"] = float(setup["masses"].median().rsqrt())
    runs: dict[str, list[dict[str, float]]] = {"kb": [], "kb-cov": [], "plain": []}
    for repeat in range(args.repeats):
        for method in runs:  # interleaved: a slow spell of the machine hits both
            runs[method].append(_chain(method, state, train, setup, 1000 * (repeat + 1), args))
    print(f"equilibrium sampling of {args.ess_model} ({count_parameters(model):,} params) at T={args.temperature:g} "
          f"on {device}: median of {args.repeats} interleaved repeats of {args.chain_steps} steps, minibatch "
          f"{args.batch_size}, loss every {args.energy_every} steps (ESS over the second half); kb's r = "
          f"{setup['share']:.3g}, kb-cov's r = {setup['share_cov']:.3g} (rank {setup['rank']}), plain dt = "
          f"{setup['plain_dt']:.3g}")
    print(f"  {'sampler':8s} {'steps/s':>9s} {'ESS':>7s} {'ESS/s':>8s} {'mean loss':>10s} {'T_kin/T':>8s}")
    for method, rows in runs.items():
        median = {key: float(np.median([row[key] for row in rows])) for key in rows[0]}
        print(f"  {method:8s} {median['steps_per_s']:9.1f} {median['ess']:7.1f} {median['ess_per_s']:8.3f} "
              f"{median['mean_loss']:10.4f} {median['kinetic_over_t']:8.2f}")


def bench_replicas(args: argparse.Namespace, splits: Splits) -> None:
    devices = ["cuda"] if torch.cuda.is_available() else []
    if not devices:
        print("batched replicas: no GPU")
        if not args.replicas_on_cpu:
            return
        devices = ["cpu"]
    for device in devices:
        temperatures = [float(t) for t in np.geomspace(1e-6, 1e-3, args.replicas)]
        train = splits.train.to(device)
        torch.manual_seed(0)
        model = build_model(TABLE_A1[args.ess_model][0]).to(device)
        singles = []
        for index, temperature in enumerate(temperatures):
            copy = build_model(TABLE_A1[args.ess_model][0]).to(device)
            copy.load_state_dict(model.state_dict())
            objective = FlatObjective(copy, train, args.batch_size, torch.Generator(device).manual_seed(index))
            w = objective.weights()
            variance = objective.gradient_variance(w, 4)
            masses, _ = guarded_masses(variance, w, temperature, r=0.01)
            singles.append(PseudoLangevin(w, objective, masses, SamplerConfig(temperature), variance,
                                          torch.Generator(device).manual_seed(100 + index)))  # fmt: skip
        batch_objective = ReplicaObjective(model, train, args.batch_size,
                                           [torch.Generator(device).manual_seed(i) for i in range(len(temperatures))])
        w = batch_objective.weights().expand(len(temperatures), -1)
        batched = ReplicaPseudoLangevin(
            w, batch_objective, torch.stack([s.mass.diagonal for s in singles]), temperatures,
            [torch.Generator(device).manual_seed(100 + i) for i in range(len(temperatures))],
            batch_objective.gradient_variance(w, 4),
        )  # fmt: skip

        def one_at_a_time(samplers: list[PseudoLangevin] = singles) -> None:
            for sampler in samplers:
                sampler.step()

        one_at_a_time()
        batched.step()  # warm-up
        single_times, batched_times = [], []
        for _ in range(args.repeats):
            single_times.append(_timed(one_at_a_time, args.steps, device))
            batched_times.append(_timed(batched.step, args.steps, device))
        single, together = float(np.median(single_times)), float(np.median(batched_times))
        label = torch.cuda.get_device_name() if device == "cuda" else "CPU, for information"
        print(f"batched replicas on {device} ({label}): {len(temperatures)} temperatures of {args.ess_model}, "
              f"one at a time {single * 1e3:.1f} ms per round, batched {together * 1e3:.1f} ms per step: "
              f"speed-up {single / together:.2f}x (median of {args.repeats} interleaved repeats of {args.steps} steps)")


def _low_rank_mass(masses: torch.Tensor, rank: int, seed: int) -> MassMatrix:
    """Per-weight ``masses`` (n,) plus ``rank`` orthonormal directions with amplifications from 1,300 down to 6 (the
    ``small`` transformer's noise spectrum: 1,297 along its top direction, more than 6 along 578), at r = 0.01."""
    generator = torch.Generator().manual_seed(seed)
    if rank == 0:
        return MassMatrix.per_weight(masses)
    basis = torch.linalg.qr(torch.randn(len(masses), rank, generator=generator, dtype=torch.float64))[0]
    factors = torch.from_numpy(np.geomspace(1300.0, 6.0, rank)).to(masses)
    share = torch.tensor(0.01, dtype=masses.dtype)
    return MassMatrix(masses, basis.T.float().contiguous().to(masses.device), factors, share.to(masses.device))


def bench_chains(args: argparse.Namespace, splits: Splits) -> dict[str, float]:
    """Chain-steps per second: one chain at a time, every chain in one batched step, and that step from a CUDA
    graph (section 4 of the module docstring); returns them by column."""
    device = args.device
    train = splits.train.to(device)
    config = TABLE_A1[args.ess_model][0]
    temperatures = [float(t) for t in np.geomspace(1e-5, 1e-3, max(1, args.chains // 2))]
    chains = [(start, temperatures[i % len(temperatures)]) for i, start in
              enumerate([0] * len(temperatures) + [1] * (args.chains - len(temperatures)))]  # fmt: skip
    starts = []
    for seed in (0, 1):  # two starts ('ES' and 'OT' of the preset): two seeded initializations
        torch.manual_seed(seed)
        starts.append(build_model(config).to(device).state_dict())
    singles, masses_of, variance = _single_chains(args, config, train, chains, starts)
    model = build_model(config).to(device)

    def batched_sampler(capture: str) -> ReplicaPseudoLangevin:
        objective = ReplicaObjective(model, train, args.batch_size,
                                     [torch.Generator(device).manual_seed(i) for i in range(len(chains))])
        w = torch.stack([s.w for s in singles])
        return ReplicaPseudoLangevin(
            w, objective, MassMatrix.stack(masses_of), [t for _, t in chains],
            [torch.Generator(device).manual_seed(100 + i) for i in range(len(chains))],
            variance.expand(len(chains), -1), step_capture=capture,
        )  # fmt: skip

    def one_at_a_time() -> None:
        for sampler in singles:
            sampler.step()

    methods: dict[str, Callable[[], object] | None] = {"one chain at a time": one_at_a_time,
                                                        "batched": batched_sampler("none").step}  # fmt: skip
    on_cuda = device.startswith("cuda")
    methods["batched + graph"] = batched_sampler("graph").step if on_cuda else None
    if args.compile:
        if on_cuda:
            methods["batched + compile"] = batched_sampler("compile").step
        else:
            methods["batched + compile"] = _cpu_compiled_step(batched_sampler("none"))
    times = _interleaved(methods, args.steps, args.repeats, device)
    rates = {key: len(chains) / float(np.median(values)) for key, values in times.items()}
    label = torch.cuda.get_device_name() if on_cuda else f"CPU, {torch.get_num_threads()} thread(s)"
    print(f"every chain in one step on {device} ({label}): {len(chains)} chains of {args.ess_model} "
          f"({count_parameters(model):,} params; 2 starts x {len(temperatures)} temperatures), minibatch "
          f"{args.batch_size}, mass rank {args.mass_rank}; chain-steps/s, median of {args.repeats} interleaved "
          f"repeats of {args.steps} steps")
    header = "  ".join(f"{key:>20s}" for key in methods)
    row = "  ".join(f"{rates[key]:>20.1f}" if key in rates else f"{'n/a (CPU)':>20s}" for key in methods)
    print(f"  {header}\n  {row}")
    one = rates["one chain at a time"]
    print("  speed-up over one chain at a time: " + ", ".join(f"{key} {rate / one:.2f}x" for key, rate in rates.items()
                                                           if key != "one chain at a time"))
    return rates


def _single_chains(
    args: argparse.Namespace, config: ModelConfig, train: MaskedSplit, chains: list[tuple[int, float]],
    starts: list[dict[str, torch.Tensor]],
) -> tuple[list[PseudoLangevin], list[MassMatrix], torch.Tensor]:
    """One sampler per (start, temperature) chain, each with its own model and seeded minibatches, the
    masses of each, and the minibatch-gradient variance (of the first chain's start) they share."""
    device = args.device
    singles: list[PseudoLangevin] = []
    masses_of: list[MassMatrix] = []
    variance = None
    for index, (start, temperature) in enumerate(chains):
        model = build_model(config).to(device)
        model.load_state_dict(starts[start])
        objective = FlatObjective(model, train, args.batch_size, torch.Generator(device).manual_seed(index))
        w = objective.weights()
        if variance is None:
            variance = objective.gradient_variance(w, 4)
        masses, _ = guarded_masses(variance, w, temperature, r=0.01)
        if not masses_of:  # one set of directions for every chain (a QR of (n, k) is seconds)
            template = _low_rank_mass(masses.cpu(), args.mass_rank, 0).to(masses)
        mass = MassMatrix(masses, template.directions, template.factors, template.noise_share)
        masses_of.append(mass)
        singles.append(PseudoLangevin(w, objective, mass, SamplerConfig(temperature), variance,
                                      torch.Generator(device).manual_seed(100 + index)))  # fmt: skip
    assert variance is not None
    return singles, masses_of, variance


def _cpu_compiled_step(sampler: ReplicaPseudoLangevin) -> Callable[[], None]:
    """The batched step with its update compiled in the default mode on the CPU (reduce-overhead is CUDA's),
    of the same function the sampler runs."""
    from analyzers.langevin.integrator import langevin_update

    function = torch.compile(langevin_update, dynamic=False)

    def compiled_step(s: ReplicaPseudoLangevin = sampler) -> None:
        state = s.state
        state.w, state.p, state.grad, state.loss, state.inverse_w, bad = function(
            state.w, state.p, state.grad, state.inverse_w, s.constants, *s.draw_inputs(), s.evaluate)
        state.bad_steps = state.bad_steps + bad

    return compiled_step


def _group_samplers(args: argparse.Namespace, capture: str) -> list[ReplicaPseudoLangevin]:
    """One batch per model of the ``--groups-scale`` preset (its transformer and feed-forward baseline at their
    shapes, each with its starts x temperatures as replicas, its sampling minibatch), per-weight masses from the
    minibatch-gradient variance at each start plus ``--groups-mass-rank`` low-rank directions, each step run as
    ``capture`` says; random sequences of the preset's length, 1,000 for training."""
    device = args.device
    params = LangevinParams(**SCALES[args.groups_scale])
    length = 86 if args.groups_scale == "paper" else 76  # 2ABD, the paper's; 1UBI, the shipped structure
    sequences = np.random.default_rng(4).integers(0, 20, size=(1100, length))
    train = make_splits(sequences, (1000, 50, 50), seed=0).train.to(device)
    chains = [(start, float(t)) for start in range(len(params.sample_from)) for t in params.temperatures]
    samplers = []
    for group, config in enumerate(model_configs(params, length).values()):
        torch.manual_seed(group)
        model = build_model(config).to(device)
        objective = ReplicaObjective(model, train, params.sampling_batch_size,
                                     [torch.Generator(device).manual_seed(i) for i in range(len(chains))])
        starts = []
        for start in range(len(params.sample_from)):  # seeded initializations, one per start
            torch.manual_seed(100 * group + start)
            starts.append(torch.cat([p.detach().reshape(-1) for p in build_model(config).parameters()]).double()
                          .to(device))  # fmt: skip
        flat = FlatObjective(build_model(config).to(device), train, params.sampling_batch_size,
                             torch.Generator(device).manual_seed(7))  # fmt: skip
        variance = flat.gradient_variance(starts[0], 4)
        # the preset's rule: per-weight (paper) has none; small's noise-covariance ~578 (64 keeps a CPU run short)
        rank = args.groups_mass_rank if args.groups_mass_rank >= 0 else 64 * (params.mass_rule != "per-weight")
        template = _low_rank_mass(variance.cpu(), rank, group).to(variance)
        masses = [MassMatrix(guarded_masses(variance, starts[start], t, r=0.01)[0], template.directions,
                             template.factors, template.noise_share) for start, t in chains]  # fmt: skip
        samplers.append(ReplicaPseudoLangevin(
            torch.stack([starts[start] for start, _ in chains]), objective, MassMatrix.stack(masses),
            [t for _, t in chains], [torch.Generator(device).manual_seed(100 + i) for i in range(len(chains))],
            variance.expand(len(chains), -1), step_capture=capture,
        ))  # fmt: skip
    return samplers


def bench_groups(args: argparse.Namespace) -> dict[str, float]:
    """Every chain of the experiment in one step (``--sections groups``): both models' batches of a preset advanced
    one group after another (each group's own step: on CUDA its own graph, one replay per group) against one call
    for both (``dynamics.LockstepReplicas``: on CUDA one graph, one replay per step of the experiment);
    chain-steps/s of all chains together, medians of interleaved repeats. On the CPU only the eager columns: there
    the two differ by one Python call per step, so their ratio should read ~1.00."""
    device, on_cuda = args.device, args.device.startswith("cuda")

    def per_group(samplers: list[ReplicaPseudoLangevin]) -> Callable[[], None]:
        def step() -> None:
            for sampler in samplers:
                sampler.step()

        return step

    methods: dict[str, Callable[[], object] | None] = {
        "per group (eager)": per_group(_group_samplers(args, "none")),
        "one call (eager)": LockstepReplicas(_group_samplers(args, "none"), "none").step,
        "per group (graph)": per_group(_group_samplers(args, "graph")) if on_cuda else None,
        "one graph": LockstepReplicas(_group_samplers(args, "graph"), "graph").step if on_cuda else None,
    }
    if args.compile and on_cuda:
        methods["one call (compile)"] = LockstepReplicas(_group_samplers(args, "compile"), "compile").step
    times = _interleaved(methods, args.steps, args.repeats, device)
    params = LangevinParams(**SCALES[args.groups_scale])
    per_model = len(params.sample_from) * len(params.temperatures)
    models = list(model_configs(params, 76))
    rates = {key: per_model * len(models) / float(np.median(values)) for key, values in times.items()}
    label = torch.cuda.get_device_name() if on_cuda else f"CPU, {torch.get_num_threads()} thread(s)"
    shapes = ", ".join(f"{name} {len(params.sample_from)} starts x {len(params.temperatures)} T" for name in models)
    print(f"every chain of the experiment in one step on {device} ({label}): the {args.groups_scale} preset's "
          f"{per_model * len(models)} chains ({shapes}), chain-steps/s of all of them, median of {args.repeats} "
          f"interleaved repeats of {args.steps} steps")
    print("  " + "  ".join(f"{key:>20s}" for key in methods))
    print("  " + "  ".join(f"{rates[key]:>20.2f}" if key in rates else f"{'n/a (CPU)':>20s}" for key in methods))
    ratios = [f"one call / per group, eager: {rates['one call (eager)'] / rates['per group (eager)']:.2f}x"]
    if "one graph" in rates:
        ratios.append(f"one graph / per-group graphs: {rates['one graph'] / rates['per group (graph)']:.2f}x")
    print("  " + "; ".join(ratios))
    return rates


def bench_analyzer(args: argparse.Namespace, raw: dict[str, float]) -> None:
    """The analyzer's own sampling loop (``chain_runs.run_replicas``: what ``langevin.sweep`` runs on a GPU,
    with its snapshots, energies, weight copies, kinetic sums, mass refresh and checkpoints) at the ``small``
    preset's shapes, for ``--analyzer-steps`` steps with small's schedule scaled to that length (section 6 of the
    module docstring), beside the raw batched step of section 4 when it ran in the same call."""
    device = args.device
    train_size, val_size, test_size = (int(size) for size in args.analyzer_sizes.split(","))
    length = 76  # 1UBI, the structure small designs on
    sequences = np.random.default_rng(1).integers(0, 20, size=(train_size + val_size + test_size, length))
    splits = make_splits(sequences, (train_size, val_size, test_size), seed=0)
    table = TABLE_A1[args.ess_model][0]
    configs = {"transformer": ModelConfig(length, table.embed_dim, table.hidden_dim, table.num_layers, kind=table.kind)}
    if args.analyzer_models == "both":  # and small's feed-forward baseline: every chain of the experiment
        configs["ffn"] = model_configs(LangevinParams(**SMALL), length)["ffn"]
    train = splits.train.to(device)
    # two briefly trained starts per model (small's ES and OT), so that the noise spectrum and the masses' rank are
    # a trained model's, not a random initialization's
    starts = {(name, start): {key: value.cpu() for key, value in
                              _pretrained_state(config, train, steps, device).items()}
              for name, config in configs.items()
              for start, steps in (("ES", args.pretrain_steps), ("OT", 2 * args.pretrain_steps))}  # fmt: skip
    steps = args.analyzer_steps
    scale = steps / SMALL["sampling_steps"]

    def every(key: str) -> int:
        return max(1, round(SMALL[key] * scale))

    settings = SamplingSettings(
        steps=steps, batch_size=SMALL["sampling_batch_size"], r=SMALL["r"], mass_rule=SMALL["mass_rule"],
        variance_batches=SMALL["variance_batches"], variance_every=every("variance_every"),
        snapshot_every=every("snapshot_every"), energy_every=every("energy_every"),
        weights_every=every("weights_every"), checkpoint_every=every("checkpoint_every"),
    )  # fmt: skip

    def make_tasks(folder: Path) -> list[TemperatureTask]:
        return [TemperatureTask(f"{name}@{start}", float(temperature), config, starts[name, start], splits, settings,
                                0, device, folder / f"{name}-{start}-{temperature:g}.pt")
                for name, config in configs.items() for start in SMALL["sample_from"]
                for temperature in SMALL["temperatures"]]  # fmt: skip

    loops: dict[str, float] = {}
    for mode in args.analyzer_checkpoints.split(","):  # background: checkpoint_writer; loop: written in the loop
        loops[mode] = _analyzer_loop(args, make_tasks, settings, device, mode == "background")
    # the raw step of the same chains: one model's batch (chains section), or both models' (groups section)
    same = ("one call (eager)", "one graph") if len(configs) > 1 else ("batched", "batched + graph")
    columns: dict[str, float] = {key: raw[key] for key in same if key in raw}
    columns.update({f"analyzer ({mode} ckpt)": loop for mode, loop in loops.items()})
    print("  " + "  ".join(f"{key:>24s}" for key in columns))
    print("  " + "  ".join(f"{value:>24.1f}" for value in columns.values()))
    raws = [value for key, value in columns.items() if not key.startswith("analyzer")]
    for mode, loop in loops.items():
        if raws:
            print(f"  analyzer loop ({mode} checkpoints) / the fastest raw step above: {loop / max(raws):.2f}")
    if len(loops) > 1 and "loop" in loops and "background" in loops:
        print(f"  background checkpoints / checkpoints in the loop: {loops['background'] / loops['loop']:.2f}x")


def _analyzer_loop(args: argparse.Namespace, make_tasks: Callable[[Path], list[TemperatureTask]],
                   settings: SamplingSettings, device: str, background: bool) -> float:
    """One ``run_chain_groups`` call as the analyzer makes it (one model: its ``run_replicas``); its chain-steps/s
    after the first snapshot."""
    steps, on_cuda = settings.steps, device.startswith("cuda")
    marks: list[tuple[int, float]] = []  # (step, seconds) at every snapshot
    checkpoint_bytes: list[int] = []
    with tempfile.TemporaryDirectory(prefix="kb-bench-analyzer-") as folder:
        tasks = make_tasks(Path(folder))

        def progress(done: int, total: int) -> None:
            _sync(device)
            marks.append((done, time.perf_counter() - began))

        def saved() -> None:  # a checkpoint is complete: every replica's file
            checkpoint_bytes.append(sum(path.stat().st_size for path in Path(folder).glob("*.pt")))

        with warnings.catch_warnings(record=True) as syncs:
            warnings.simplefilter("always")
            if on_cuda:  # every host synchronisation an op makes is a warning, counted
                torch.cuda.set_sync_debug_mode("warn")
            began = time.perf_counter()
            try:
                records = run_chain_groups(tasks, progress, on_checkpoint=saved, step_capture=args.analyzer_capture,
                                           background_checkpoints=background)
            finally:
                if on_cuda:
                    torch.cuda.set_sync_debug_mode(0)
            _sync(device)
            seconds = time.perf_counter() - began
    chains = len(tasks)
    first_step, first_at = marks[0]
    loop = chains * (steps - first_step) / (seconds - first_at) if steps > first_step else float("nan")
    rank = max(int(guard.get("mass_rank", 0)) for record in records for guard in record["mass_guard"])
    label = torch.cuda.get_device_name() if on_cuda else f"CPU, {torch.get_num_threads()} thread(s)"
    sync_text = (f"{sum('synchroniz' in str(w.message) for w in syncs) / steps:.1f} host synchronisations per step"
                 if on_cuda else "host synchronisations: n/a (CPU)")
    sizes = "/".join(str(len(split)) for split in (tasks[0].splits.train, tasks[0].splits.validation,
                                                  tasks[0].splits.test))  # fmt: skip
    names = list(dict.fromkeys(task.name.split("@")[0] for task in tasks))
    models = args.ess_model if names == ["transformer"] else f"{args.ess_model} and small's {' and '.join(names[1:])}"
    print(f"analyzer loop (chain_runs.run_chain_groups, as langevin.sweep samples on a GPU; checkpoints "
          f"{'by the background writer' if background else 'in the loop'}) on {device} ({label}): "
          f"{chains} chains of {models} at small's shapes (length {tasks[0].config.seq_len}, "
          f"{sizes} sequences, minibatch {settings.batch_size}, noise-covariance masses of rank {rank}, step "
          f"capture {resolve_capture(args.analyzer_capture, device)}), {steps} steps, small's schedule scaled: "
          f"snapshots every {settings.snapshot_every}, energies every {settings.energy_every}, masses every "
          f"{settings.variance_every}, checkpoints every {settings.checkpoint_every}")
    largest = max(checkpoint_bytes, default=0)
    print(f"  setup and steps to the first snapshot (step {first_step}): {first_at:.1f} s; then {loop:.1f} "
          f"chain-steps/s; whole call {chains * steps / seconds:.1f} chain-steps/s in {seconds:.1f} s; {sync_text}; "
          f"{len(checkpoint_bytes)} checkpoints, the largest {largest / 1e6:.0f} MB (all chains)")
    return loop


def bench_training(args: argparse.Namespace) -> None:
    """Training throughput (``--sections training``): ``--training-runs`` seeds of each Table A1 model in
    ``--training-models`` trained one at a time (``train.Trainer``: an nn.Module and torch.optim.Adam; and the
    batched trainer alone, R = 1) against all of them in one batched step (``train_batched.StackedTrainer``), run-steps
    per second from interleaved repeats (medians), at the ``small`` preset's minibatch of 64 and sequence length."""
    device, runs = args.device, args.training_runs
    sequences = np.random.default_rng(3).integers(0, 20, size=(1200, 76))
    train = make_splits(sequences, (1000, 100, 100), seed=0).train.to(device)
    settings = TrainingSettings(batch_size=64)
    label = torch.cuda.get_device_name() if device.startswith("cuda") else f"CPU, {torch.get_num_threads()} thread(s)"
    print(f"training on {device} ({label}): {runs} runs per model, minibatch 64, length 76; run-steps/s, median of "
          f"{args.repeats} interleaved repeats of {args.steps} steps")
    for name in args.training_models.split(","):
        table = TABLE_A1[name.strip()][0]
        config = ModelConfig(76, table.embed_dim, table.hidden_dim, table.num_layers, kind=table.kind)

        def model(seed: int, config: ModelConfig = config) -> torch.nn.Module:
            torch.manual_seed(seed)
            return build_model(config).to(device)

        modules = [Trainer(model(seed), train, settings, seed) for seed in range(runs)]
        alone = [StackedTrainer([model(seed)], train, settings, [seed]) for seed in range(runs)]
        batched = StackedTrainer([model(seed) for seed in range(runs)], train, settings, list(range(runs)))

        def each(trainers: list[Any]) -> Callable[[], None]:
            def step() -> None:
                for trainer in trainers:
                    trainer.step()

            return step

        methods = {"one at a time (nn.Module + Adam)": each(modules), "one at a time (batched code, R=1)": each(alone),
                   "batched": batched.step}  # fmt: skip
        for method in methods.values():
            method()  # warm-up
        times: dict[str, list[float]] = {key: [] for key in methods}
        for _ in range(args.repeats):
            for key, method in methods.items():
                times[key].append(_timed(method, args.steps, device))
        rates = {key: runs / float(np.median(values)) for key, values in times.items()}
        print(f"  {name} ({count_parameters(build_model(config)):,} params): " + ", ".join(
            f"{key} {rate:.1f}" for key, rate in rates.items()))
        one = rates["one at a time (nn.Module + Adam)"]
        print(f"    batched / one at a time (nn.Module): {rates['batched'] / one:.2f}x; batched / R=1 batched code: "
              f"{rates['batched'] / rates['one at a time (batched code, R=1)']:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sections", default="chains,equilibrium,replicas,steps,design")
    parser.add_argument("--models", default="T1-d26,T1-d64,T4-d14,T4-d64")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--variance-batches", type=int, default=30)
    parser.add_argument("--variance-every", type=int, default=400)
    parser.add_argument("--design-n", type=int, default=12000)
    parser.add_argument("--design-chains", type=int, default=PAPER_DESIGN_CHAINS, help="the paper preset's for 12,000")
    parser.add_argument("--design-burn-in", type=int, default=CALIBRATED_BURN_IN,
                        help="burn-in sweeps of the design figure (the calibrated protocol's; fewer: a quick run)")
    parser.add_argument("--design-shards", type=int, default=8, help="design shards of the workers' figure (small's)")
    parser.add_argument("--shard-chains", type=int, default=200, help="chains of the workers' figure (small's)")
    parser.add_argument("--shard-n", type=int, default=1700, help="sequences of the workers' figure (small's)")
    parser.add_argument("--shard-burn-in", type=int, default=CALIBRATED_BURN_IN, help="burn-in of the workers' figure")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (1: stable on a shared machine)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--ess-model", default="T1-d64", help="model of the equilibrium and replica sections")
    parser.add_argument("--temperature", type=float, default=1e-4)
    parser.add_argument("--r", type=float, default=0.01, help="kb's requested minibatch share (then capped)")
    parser.add_argument("--chain-steps", type=int, default=2000)
    parser.add_argument("--energy-every", type=int, default=10)
    parser.add_argument("--pretrain-steps", type=int, default=300)
    parser.add_argument("--replicas", type=int, default=9, help="temperatures in the batched-replica section")
    parser.add_argument("--replicas-on-cpu", action="store_true", help="without CUDA, measure replicas on the CPU")
    parser.add_argument("--chains", type=int, default=10, help="chains of the batched-step section (small: 2 x 5)")
    parser.add_argument("--mass-rank", type=int, default=578, help="low-rank mass directions (small's transformer)")
    parser.add_argument("--compile", action="store_true", help="add torch.compile's column to the chains section")
    parser.add_argument("--groups-scale", default="small", choices=["smoke", "small", "paper"],
                        help="the preset whose two models' chains the groups section steps (paper: GPU sizes)")
    parser.add_argument("--groups-mass-rank", type=int, default=-1,
                        help="low-rank mass directions in the groups section (-1: 64 for small, 0 for paper)")
    parser.add_argument("--analyzer-steps", type=int, default=1000, help="steps of the analyzer section's loop")
    parser.add_argument("--analyzer-models", default="transformer", choices=["transformer", "both"],
                        help="the analyzer section's models: small's transformer, or it and its feed-forward baseline")
    parser.add_argument("--analyzer-sizes", default="1000,200,500", help="train,validation,test (small's)")
    parser.add_argument("--analyzer-capture", default="auto", help="the analyzer's step_capture (auto: graph on CUDA)")
    parser.add_argument("--analyzer-checkpoints", default="background,loop",
                        help="the analyzer section's checkpoint writing: background (checkpoint_writer), loop, or both")
    parser.add_argument("--training-runs", type=int, default=3, help="seeds per model in the training section")
    parser.add_argument("--training-models", default="T1-d64,FF-d64", help="models of the training section")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    sections = set(args.sections.split(","))
    sequences = np.random.default_rng(0).integers(0, 20, size=(1200, 86))
    splits = make_splits(sequences, (1000, 100, 100), seed=0)
    raw = bench_chains(args, splits) if "chains" in sections else {}
    if "groups" in sections:
        raw.update(bench_groups(args))
    if "analyzer" in sections:
        bench_analyzer(args, raw)
    if "training" in sections:
        bench_training(args)
    if "equilibrium" in sections:
        bench_equilibrium(args, splits)
    if "replicas" in sections:
        bench_replicas(args, splits)
    if "steps" in sections:
        print(f"sampler on {args.device}, {args.threads} thread(s), minibatch {args.batch_size}, best of "
              f"{args.repeats} interleaved repeats of {args.steps} steps")
        for name in args.models.split(","):
            bench_sampler(name.strip(), args, splits)
    if "design" in sections and args.shard_n:
        bench_design_shards(args)
    if "design" in sections and args.design_n:
        bench_design(args)


if __name__ == "__main__":
    main()
