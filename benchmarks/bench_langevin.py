"""Speed of the Langevin analyzer, measured in one run:

1. sampler steps per second for the Table A1 transformers (one block: T1-d26, T1-d64; four blocks:
   T4-d14, T4-d64) on the chosen device, and the cost of one norm-constrained pseudo-Langevin step, of one
   unconstrained step and of one SGLD step relative to one plain minibatch gradient step (load the flat
   weights, forward, backward; what any sampler must pay). The variance estimation (``--variance-batches``
   minibatch gradients every ``--variance-every`` steps) is amortized into the constrained step.
   Goal: constrained step with variance estimation under 1.5x the plain gradient step.
2. the design throughput: ``--design-n`` sequences of length 86 on the idealized bundle by the vectorized
   simulated tempering, one thread (goal: 12,000 in under a minute), with the swap rate and diagnostics.

Timings are the best of interleaved repeats (other processes on a shared machine only ever add time).

Run: .venv/bin/python benchmarks/bench_langevin.py [--models T1-d26,T1-d64,T4-d14,T4-d64] [--steps 40]
     [--repeats 3] [--batch-size 64] [--design-n 12000] [--threads 1] [--device cpu]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
import torch

from analyzers.langevin import design, structure
from analyzers.langevin.data import make_splits
from analyzers.langevin.model import TABLE_A1, build_model, count_parameters
from analyzers.langevin.objective import FlatObjective
from analyzers.langevin.sampler import SGLD, PseudoLangevin, SamplerConfig, guarded_masses


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


def bench_sampler(name: str, args: argparse.Namespace, splits: object) -> None:
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
    contacts = structure.ideal_four_helix_bundle()
    composition = design.encode(structure.ACBP_SEQUENCE)
    started = time.perf_counter()
    report = design.simulated_tempering(contacts, design.interaction_matrix(0), composition, args.design_n, seed=0)
    seconds = time.perf_counter() - started
    exact = bool((np.sort(report.sequences, axis=1) == np.sort(composition)).all())
    print(f"design: {args.design_n} sequences of length 86 in {seconds:.1f} s ({args.design_n / seconds:.0f}/s, "
          f"goal 12,000 in < 60 s), {report.swaps_attempted / seconds / 1e6:.2f} M swap attempts/s, "
          f"{report.num_chains} chains, {report.sweeps} sweeps")
    print(f"        identity between sequences {report.mean_pairwise_identity:.3f} (authors ~0.34), consecutive "
          f"samples of a chain {report.consecutive_identity:.3f}; composition exact: {exact}")
    print(f"        T      {' '.join(f'{t:7.3f}' for t in report.temperatures)}")
    print(f"        <E>    {' '.join(f'{e:7.1f}' for e in report.mean_energy)}")
    print(f"        accept {' '.join(f'{a:7.3f}' for a in report.acceptance_swap)}  (temperature moves "
          f"{report.acceptance_temperature:.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="T1-d26,T1-d64,T4-d14,T4-d64")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--variance-batches", type=int, default=30)
    parser.add_argument("--variance-every", type=int, default=400)
    parser.add_argument("--design-n", type=int, default=12000)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (1: stable on a shared machine)")
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    sequences = np.random.default_rng(0).integers(0, 20, size=(1200, 86))
    splits = make_splits(sequences, (1000, 100, 100), seed=0)
    print(f"sampler on {args.device}, {args.threads} thread(s), minibatch {args.batch_size}, best of "
          f"{args.repeats} interleaved repeats of {args.steps} steps")
    for name in args.models.split(","):
        bench_sampler(name.strip(), args, splits)
    if args.design_n:
        bench_design(args)


if __name__ == "__main__":
    main()
