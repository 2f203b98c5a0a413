"""The design on every core: the tempering chains split into shards of independent runs, one process each.

``design.simulated_tempering`` couples its chains only through the tempering weights they adapt together
during burn-in (and one random stream). A shard is one such run over its share of the chains with its own
weights and its own seed (shard 0 the run's seed, shard s > 0 one derived from (seed, s)), collecting its
share of the samples in proportion to its chains. The shard count is a parameter of the run
(``design_shards``, fixed by the preset), never the number of cores: the workers only schedule the shards, so
a seed gives the same sequences serially or on any number of cores (tested); one shard is exactly
``simulated_tempering``.

A shard's sweep is bound by numpy's cost per call (a chain's swap attempts are sequential; the chains of a
shard advance together), so a shard of fewer chains is barely faster: on 1UBI with small's protocol cut to a
tenth (800 burn-in sweeps, 170 sequences, 2 cores, one worker), one run of 200 chains took 6.0 s, a shard of
100 5.0 s, of 25 4.2 s, of 12-13 2.5 s. ``small``'s 8 shards of 25 (3 chains per level of the ladder, whose
weights adapt over them) are thus about 1.4x faster than one run on 8 or more cores and 3x slower on 2; a
faster sweep (compiled) is what would make the design take seconds.

The workers come from a forkserver (a fork of a clean server that imported only ``design``: no torch threads,
no re-import of the caller's main module per worker) and live for the whole design; a shard's arguments and
result are a few arrays of kilobytes.
"""

from __future__ import annotations

import multiprocessing
import os
import queue as queues
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any

import numpy as np

from analyzers.langevin import design
from analyzers.langevin.spec import DEFAULT_LADDER

Progress = Callable[[float, str], None]


def available_cores() -> int:
    """The cores this process may run on (its affinity mask, which a batch scheduler sets), else the count."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def shard_plan(num_samples: int, chains: int, shards: int = 1) -> list[tuple[int, int]]:
    """(chains, samples) per shard: ``shards`` shards (at most one per chain and per sample) of near-equal
    chains, the samples split in proportion to the chains (largest remainders), every shard at least one."""
    if chains < 1 or shards < 1:
        raise ValueError("chains and shards must be >= 1")
    shards = min(shards, chains, num_samples)
    sizes = [chains // shards + (1 if s < chains % shards else 0) for s in range(shards)]
    exact = [num_samples * size / chains for size in sizes]
    samples = [max(1, int(x)) for x in exact]
    for s in sorted(range(shards), key=lambda s: int(exact[s]) - exact[s])[: num_samples - sum(samples)]:
        samples[s] += 1  # the largest remainders take the samples left
    return list(zip(sizes, samples, strict=True))


def shard_seed(seed: int, shard: int) -> int:
    """Shard 0 keeps the run's seed (one shard is ``simulated_tempering`` itself); the others get their
    own."""
    return seed if shard == 0 else int(np.random.SeedSequence([seed, shard]).generate_state(1)[0])


_progress_queue: Any = None  # a worker's queue to the parent, set once when the worker starts


def _set_queue(queue: Any) -> None:
    global _progress_queue
    _progress_queue = queue
    queue.cancel_join_thread()  # progress left unread must not hold the worker's exit


def _run_shard(arguments: dict[str, Any], shard: int = 0) -> design.TemperingReport:
    last = [0.0]
    queue = _progress_queue

    def progress(fraction: float, message: str) -> None:
        now = time.monotonic()
        if now - last[0] > 1.0:  # at most one message a second per shard
            last[0] = now
            queue.put((shard, fraction, message))

    return design.simulated_tempering(**arguments, progress=progress if queue is not None else None)


def design_sequences(
    contacts: np.ndarray,
    interactions: np.ndarray,
    composition: np.ndarray,
    num_samples: int,
    temperatures: Sequence[float] = DEFAULT_LADDER,
    sweeps_between: int = 30,
    burn_in_sweeps: int = 150,
    seed: int = 0,
    num_chains: int | None = None,
    shards: int = 1,
    workers: int = 0,
    max_sweeps: int = 100_000,
    progress: Progress | None = None,
) -> design.TemperingReport:
    """``design.simulated_tempering`` over ``shards`` shards of the chains (see the module docstring), in
    ``workers`` processes (0: one per available core); the same result for any ``workers``."""
    chains = num_chains or design.default_chains(num_samples)
    plan = shard_plan(num_samples, chains, shards)
    common: dict[str, Any] = {
        "contacts": contacts,
        "interactions": interactions,
        "composition": composition,
        "temperatures": list(temperatures),
        "sweeps_between": sweeps_between,
        "burn_in_sweeps": burn_in_sweeps,
        "max_sweeps": max_sweeps,
    }
    arguments = [{**common, "num_samples": samples, "num_chains": size, "seed": shard_seed(seed, s)}
                 for s, (size, samples) in enumerate(plan)]  # fmt: skip
    workers = min(len(plan), workers if workers > 0 else available_cores())
    if workers <= 1:
        reports = []
        for s, shard_arguments in enumerate(arguments):
            def shard_progress(fraction: float, message: str, s: int = s) -> None:
                if progress is not None:
                    progress((s + fraction) / len(plan), f"shard {s + 1}/{len(plan)}: {message}")

            reports.append(design.simulated_tempering(**shard_arguments, progress=shard_progress))
        return merge_reports(reports)
    return merge_reports(_in_processes(arguments, workers, progress))


def _context() -> multiprocessing.context.BaseContext:
    """Forkserver where there is one (a clean server that imported ``design``: the caller may hold torch
    threads, so no plain fork), else spawn."""
    if sys.platform != "win32" and "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload([design.__name__])
        return context
    return multiprocessing.get_context("spawn")


def _in_processes(arguments: list[dict[str, Any]], workers: int, progress: Progress | None) -> list[Any]:
    context = _context()
    shares = [0.0] * len(arguments)
    queue = context.Queue()  # handed to each worker when it starts (a queue cannot travel with a task)
    with ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_set_queue,
                             initargs=(queue,)) as pool:  # fmt: skip
        futures: dict[Future[Any], int] = {pool.submit(_run_shard, shard_arguments, s): s
                                           for s, shard_arguments in enumerate(arguments)}  # fmt: skip
        pending = set(futures)
        latest = f"{len(arguments)} shards on {workers} processes"
        try:
            while pending:
                finished, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                while True:
                    try:
                        shard, fraction, message = queue.get_nowait()
                    except queues.Empty:
                        break
                    shares[shard] = fraction
                    latest = f"shard {shard + 1}/{len(arguments)}: {message}"
                for future in finished:
                    future.result()  # a shard's error here
                    shares[futures[future]] = 1.0
                if progress is not None:
                    progress(
                        sum(shares) / len(shares),
                        f"{latest} ({len(arguments) - len(pending)} shards done, {workers} processes)",
                    )
        except BaseException:
            for future in pending:
                future.cancel()
            raise
        return [future.result() for future in sorted(futures, key=lambda future: futures[future])]


def merge_reports(reports: list[design.TemperingReport]) -> design.TemperingReport:
    """One report of several shards: sequences, energies and chains in shard order; counts summed; per-level
    energies weighted by visits (exact: both count the chain-sweeps at a level after burn-in), swap acceptance
    by visits too (its attempts follow the visits), the temperature-move acceptance by chain-sweeps; identity
    and entropy of the merged set; the consecutive identity weighted by each shard's consecutive pairs
    (exact); the tempering weights of the first shard."""
    if len(reports) == 1:
        return reports[0]
    visits = np.array([r.visits for r in reports], dtype=np.float64)  # (shards, levels)
    level_weights = visits / np.maximum(visits.sum(axis=0), 1.0)

    def by_level(values: list[list[float]]) -> list[float]:
        array = np.nan_to_num(np.asarray(values, dtype=np.float64))
        merged = (array * level_weights).sum(axis=0)
        # NaN where no shard visited, as one run
        return np.where(visits.sum(axis=0) > 0, merged, np.nan).tolist()

    sequences = np.concatenate([r.sequences for r in reports])
    offsets = np.cumsum([0] + [r.num_chains for r in reports[:-1]])
    chains = [r.sample_chains + offset for r, offset in zip(reports, offsets, strict=True)]
    pairs = np.array(
        [len(r.sample_chains) - len(np.unique(r.sample_chains)) for r in reports], dtype=np.float64
    )
    consecutive = [r.consecutive_identity for r in reports]
    usable = pairs > 0
    chain_sweeps = np.array([r.num_chains * r.sweeps for r in reports], dtype=np.float64)
    return design.TemperingReport(
        sequences=sequences,
        temperatures=reports[0].temperatures,
        acceptance_swap=by_level([r.acceptance_swap for r in reports]),
        acceptance_temperature=float(
            np.average([r.acceptance_temperature for r in reports], weights=chain_sweeps)
        ),
        mean_energy=by_level([r.mean_energy for r in reports]),
        visits=visits.sum(axis=0).astype(int).tolist(),
        # over an even spread of the set (its first 3,000 would be the first shards' chains only)
        mean_pairwise_identity=design.mean_pairwise_identity(
            sequences[np.linspace(0, len(sequences) - 1, min(len(sequences), 3000)).astype(int)]
        ),
        site_entropy=design.mean_site_entropy(sequences),
        consecutive_identity=float(np.average(np.asarray(consecutive)[usable], weights=pairs[usable]))
        if usable.any()
        else float("nan"),
        sample_energies=np.concatenate([r.sample_energies for r in reports]),
        sample_chains=np.concatenate(chains),
        num_chains=sum(r.num_chains for r in reports),
        swaps_attempted=sum(r.swaps_attempted for r in reports),
        sweeps=max(r.sweeps for r in reports),
        log_weights=reports[0].log_weights,
    )
