"""Sampling chains to the end, resumably: one model at one temperature, every chain of a model as batched
replicas, and many temperatures in parallel; ``ChainRun`` is the one run loop of all of them.

A ``chain_tasks.TemperatureTask`` carries everything a worker process needs (model config, starting weights,
the splits, the sampler settings, the device and a checkpoint path). ``run_temperature`` samples one task
(norm-constrained pseudo-Langevin by default; unconstrained or plain SGLD selectable: ``chains.SingleChain``);
``run_replicas`` samples tasks of one model as replicas of one batch (``chains.BatchedChains``; for a GPU),
and ``run_chain_groups`` every model's batch in lockstep, in one loop and one step call
(``chains.ChainGroups``: on CUDA one graph replay per step for every model).
Either way the loop re-estimates the minibatch-gradient variance and the masses every ``variance_every``
steps, and records per chain:

* the minibatch loss of every step;
* every ``energy_every`` steps: the full training loss (the energy whose variance gives the specific heat);
* every ``snapshot_every`` steps: train / validation / test losses and errors, |w|^2, and the mean attention
  over the test sequences;
* every ``weights_every`` steps after burn-in: a float32 copy of the weights (thinned snapshots, for the
  per-layer similarity q);
* every ``thermostat.KINETIC_EVERY`` steps after burn-in: the kinetic temperature along the leading noise
  directions (``thermostat.py``).

Every ``checkpoint_every`` steps the whole state (sampler, generators, records) is written atomically to each
task's checkpoint file (by a background thread on the batched paths: ``checkpoint_writer``), so a killed run
started again continues from there and, seeded, ends with the same result as an uninterrupted run. Each
temperature keeps its own checkpoint in one format, so a run started on a GPU can be resumed there or one
temperature at a time on a CPU, and a finished temperature is reused by either path. Batched replicas advance
in lockstep: temperatures whose checkpoints stand at different steps (left by the single-temperature path) are
finished one at a time instead. ``run_temperatures`` runs tasks in worker processes (one thread each) on CPU,
in this process on CUDA, or batched (every model's chains in one loop).
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any

import numpy as np
import torch

from analyzers.base import Cancelled
from analyzers.langevin.chain_tasks import (
    TemperatureTask,
    finished_records,
    finished_state,
    read_checkpoint,
    save_checkpoint,
)
from analyzers.langevin.chains import BatchedChains, ChainGroups, Chains, SingleChain
from analyzers.langevin.checkpoint_writer import CheckpointWriter
from analyzers.langevin.mass_matrix import check_temperature
from analyzers.langevin.thermostat import KINETIC_EVERY, close_kinetic_block

Progress = Callable[[int, int], None]


class ChainRun:
    """The schedule of a sampling run, the same for one chain and for a batch: per step the mass refresh, the
    step, the kinetic reading; at a snapshot the losses, the SHAKE check, the snapshot itself and the progress
    report (where a stop may come: a rerun replays from the last checkpoint); the energies, weight copies and
    checkpoints in between. ``chains`` does each part its own way (``chains.py``)."""

    def __init__(
        self, chains: Chains, on_checkpoint: Callable[[], None], writer: CheckpointWriter | None = None
    ) -> None:
        self.chains = chains
        self.settings = chains.tasks[0].settings
        self.on_checkpoint = on_checkpoint
        # None: each checkpoint written in the loop; else handed to a background writer (checkpoint_writer.py)
        self.writer = writer
        self.burn_in = int(self.settings.burn_in_fraction * self.settings.steps)
        replicas, every = len(chains.tasks), self.settings.snapshot_every
        # the minibatch losses of the open block, on the device until the block ends or a checkpoint comes
        self.losses = torch.zeros(replicas, every, dtype=torch.float64, device=chains.device)
        done = chains.steps_done
        open_block = done % every  # resumed inside a block: its losses so far
        for index, record in enumerate(chains.records):
            self.losses[index, :open_block] = torch.from_numpy(
                record["losses"][done - open_block : done].astype(np.float64))
        self.started = time.perf_counter() - chains.records[0]["seconds"] * replicas

    def run(self, progress: Progress, should_stop: Callable[[], bool]) -> list[dict[str, Any]]:
        """Every chain to ``steps``; the records in task order. With a background writer, every checkpoint
        is on disk when this returns or raises (a writer's failure is raised, or noted on the loop's own
        error)."""
        if self.writer is None:
            return self._run(progress, should_stop)
        try:
            records = self._run(progress, should_stop)
        except BaseException as error:
            try:
                self._announce(self.writer.close())
            except Exception as late:  # noqa: BLE001 - the loop's error is raised; this one said beside it
                error.add_note(f"and the checkpoints queued before it: {late}")
            raise
        self._announce(self.writer.close())
        return records

    def _announce(self, completed: int) -> None:
        for _ in range(completed):
            self.on_checkpoint()

    def _run(self, progress: Progress, should_stop: Callable[[], bool]) -> list[dict[str, Any]]:
        chains, settings = self.chains, self.settings
        step = chains.steps_done
        while step < settings.steps:
            self.refresh_masses(step)
            self.losses[:, step % settings.snapshot_every] = chains.step()
            step = chains.steps_done
            if step > self.burn_in and step % KINETIC_EVERY == 0:
                chains.read_kinetic()
            snapshot_due = step % settings.snapshot_every == 0 or step == settings.steps
            if snapshot_due:
                self.snapshot(step)
            if step % settings.energy_every == 0 and not snapshot_due:
                chains.record_energy(step)
            if step % settings.weights_every == 0 and step > self.burn_in:
                self.keep_weights()
            if step % settings.checkpoint_every == 0 and step < settings.steps:
                # a checkpoint inside a block keeps them
                self.keep_losses(step, step % settings.snapshot_every)
                chains.park()
                self.checkpoint(False)
            if snapshot_due:  # a stop here loses nothing: a rerun replays from the last checkpoint
                self.report(step, progress, should_stop)
        chains.finish()
        self.checkpoint(True)
        return chains.records

    def keep_weights(self) -> None:
        """Each chain's current weights appended to its record."""
        for record, weights in zip(self.chains.records, self.chains.weights(), strict=True):
            record["weights"].append(weights)

    def report(self, step: int, progress: Progress, should_stop: Callable[[], bool]) -> None:
        """After a snapshot: the writer's finished writes announced, progress told, and a requested stop
        raised as ``Cancelled``."""
        if self.writer is not None:
            self._announce(self.writer.poll())  # and a failed write stops the run here
        progress(step, self.settings.steps)
        if should_stop():
            raise Cancelled(f"{self.chains.stop_message} at step {step}")

    def refresh_masses(self, step: int) -> None:
        """New masses every ``variance_every`` steps (once: a resume at that step does not refresh again)."""
        every, records = self.settings.variance_every, self.chains.records
        if (
            self.chains.refreshes_masses
            and step > 0
            and step % every == 0
            and step != records[0].get("variance_step")
        ):
            self.chains.refresh_masses(step)
            for record in records:
                record["variance_step"] = step

    def keep_losses(self, step: int, count: int) -> None:
        """The last ``count`` minibatch losses before ``step`` into the records."""
        losses = self.losses[:, :count].cpu().numpy()
        for index, record in enumerate(self.chains.records):
            record["losses"][step - count : step] = losses[index]

    def snapshot(self, step: int) -> None:
        chains = self.chains
        self.keep_losses(step, (step - 1) % self.settings.snapshot_every + 1)
        chains.check()
        chains.park()
        for record in chains.records:
            close_kinetic_block(record)
        chains.snapshot(step, self.burn_in)

    def checkpoint(self, done: bool) -> None:
        """Each chain's state, generators and records into its task's checkpoint (written atomically), here or
        by the background writer."""
        chains, replicas = self.chains, len(self.chains.tasks)
        writes = []
        for index, task in enumerate(chains.tasks):
            # the batch's time
            chains.records[index]["seconds"] = (time.perf_counter() - self.started) / replicas
            state = {
                "sampler": finished_state(chains.sampler_state(index), done),
                "batch_generator": chains.batch_generators[index].get_state(),
                "noise_generator": chains.noise_generators[index].get_state(),
                "records": chains.records[index],
                "done": done,
            }
            writes.append((task, state, done))
        if self.writer is not None:
            self.writer.submit(writes)
            self._announce(self.writer.poll())
            return
        for task, state, done in writes:
            save_checkpoint(task, state, done)
        self.on_checkpoint()


def run_temperature(
    task: TemperatureTask,
    progress: Progress = lambda done, total: None,
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
    finished = finished_records(task)
    if finished is not None:
        return finished
    chains = SingleChain(task, read_checkpoint(task.checkpoint))
    return ChainRun(chains, on_checkpoint).run(progress, should_stop)[0]


def run_replicas(
    tasks: list[TemperatureTask],
    progress: Progress = lambda done, total: None,
    should_stop: Callable[[], bool] = lambda: False,
    on_checkpoint: Callable[[], None] = lambda: None,
    step_capture: str = "auto",
    background_checkpoints: bool = True,
) -> list[dict[str, Any]]:
    """Sample tasks of one model (any starts and temperatures) as replicas of one batch; the records in task
    order. ``step_capture``: how the batched step runs (``integrator.STEP_CAPTURES``; auto: a CUDA graph on
    CUDA). ``background_checkpoints``: the replicas' checkpoints written by a background thread
    (``checkpoint_writer``), off the loop; False: in the loop."""
    first = tasks[0]
    if any(
        (t.config, t.seed, t.device, t.settings) != (first.config, first.seed, first.device, first.settings)
        for t in tasks
    ):
        raise ValueError("batched replicas must share the model, seed, device and settings")
    results: list[dict[str, Any] | None] = [finished_records(task) for task in tasks]
    pending = [index for index, result in enumerate(results) if result is None]
    saved = [read_checkpoint(tasks[index].checkpoint) for index in pending]
    steps_saved = {0 if state is None else int(state["sampler"]["steps_done"]) for state in saved}
    if first.settings.sampler == "sgld" or len(steps_saved) > 1:  # no batched SGLD; replicas in lockstep only
        for index in pending:
            results[index] = run_temperature(tasks[index], progress, should_stop, on_checkpoint)
    elif pending:
        chains = BatchedChains([tasks[i] for i in pending], saved, step_capture)
        writer = CheckpointWriter() if background_checkpoints else None
        batch = ChainRun(chains, on_checkpoint, writer).run(progress, should_stop)
        for index, records in zip(pending, batch, strict=True):
            results[index] = records
    return [result for result in results if result is not None]


def run_chain_groups(
    tasks: list[TemperatureTask],
    progress: Progress = lambda done, total: None,
    should_stop: Callable[[], bool] = lambda: False,
    on_checkpoint: Callable[[], None] = lambda: None,
    step_capture: str = "auto",
    background_checkpoints: bool = True,
) -> list[dict[str, Any]]:
    """Every task of an experiment (any models, starts and temperatures) in one loop: the chains of each
    model batched (``run_replicas``' batch) and every model's batch stepped in lockstep
    (``chains.ChainGroups``); the records in task order, each equal to its model's batch run alone. Where that
    cannot be (checkpoints at different steps, SGLD, settings that differ), each model runs as
    ``run_replicas`` runs it."""
    groups: dict[str, list[int]] = {}  # one batch per model (one weight shape): its starts x temperatures
    for index, task in enumerate(tasks):
        groups.setdefault(task.name.split("@")[0], []).append(index)
    results: list[dict[str, Any] | None] = [finished_records(task) for task in tasks]
    pending = {name: [i for i in members if results[i] is None] for name, members in groups.items()}
    pending = {name: members for name, members in pending.items() if members}
    saved = {i: read_checkpoint(tasks[i].checkpoint) for members in pending.values() for i in members}
    steps_saved = {0 if state is None else int(state["sampler"]["steps_done"]) for state in saved.values()}
    settings = {tasks[i].settings == tasks[0].settings and tasks[i].device == tasks[0].device for i in saved}
    lockstep = len(steps_saved) == 1 and settings == {True} and tasks[0].settings.sampler != "sgld"
    if len(pending) > 1 and lockstep:
        batches = [BatchedChains([tasks[i] for i in members], [saved[i] for i in members], step_capture)
                   for members in pending.values()]  # fmt: skip
        writer = CheckpointWriter() if background_checkpoints else None
        records = ChainRun(ChainGroups(batches), on_checkpoint, writer).run(progress, should_stop)
        order = [i for members in pending.values() for i in members]
        for index, record in zip(order, records, strict=True):
            results[index] = record
    else:
        for members in pending.values():
            batch = run_replicas([tasks[i] for i in members], progress, should_stop, on_checkpoint,
                                 step_capture, background_checkpoints)  # fmt: skip
            for index, record in zip(members, batch, strict=True):
                results[index] = record
    return [result for result in results if result is not None]


# -- many temperatures ----------------------------------------------------------------------------------
def _worker(task: TemperatureTask, queue: Any, stop: Any) -> dict[str, Any]:
    torch.set_num_threads(1)  # one process per core
    return run_temperature(
        task, lambda done, total: queue.put((task.name, task.temperature, done, total)), stop.is_set,
        lambda: queue.put(None),  # a checkpoint is complete: the parent tells the run context
    )  # fmt: skip


class _StepTally:
    """The steps each task has done, reported as one fraction of all tasks' steps with the last message."""

    def __init__(self, tasks: list[TemperatureTask], report: Callable[[float, str], None]) -> None:
        self.total = sum(t.settings.steps for t in tasks) or 1
        self.done: dict[int, int] = {}
        self.latest = "sampling"  # the last step a worker announced: what the periodic report repeats
        self.report = report

    def note(self, index: int, steps: int, message: str) -> None:
        """Task ``index`` has done ``steps`` steps."""
        self.done[index] = steps
        self.latest = message
        self.report(sum(self.done.values()) / self.total, message)

    def repeat(self) -> None:
        """Report again (where the report is how a cancel gets in)."""
        self.report(sum(self.done.values()) / self.total, self.latest)


def _run_batched(
    tasks: list[TemperatureTask], tally: _StepTally, on_checkpoint: Callable[[], None], step_capture: str
) -> list[dict[str, Any]]:
    """Every chain of the experiment in one loop, each model's chains in one batched step."""
    groups: dict[str, list[TemperatureTask]] = {}
    for task in tasks:
        groups.setdefault(task.name.split("@")[0], []).append(task)
    shapes = []  # 'transformer: 10 chains (2 start(s) x 5 temperatures)'
    for name, members in groups.items():
        starts = len({task.name for task in members})
        shapes.append(f"{name}: {len(members)} chains ({starts} start(s) x {len(members) // starts} "
                      "temperatures)")  # fmt: skip

    def batch_progress(done_steps: int, steps: int) -> None:
        for index in range(len(tasks)):
            tally.done[index] = done_steps
        tally.report(
            sum(tally.done.values()) / tally.total, f"{'; '.join(shapes)}, step {done_steps}/{steps}"
        )

    return run_chain_groups(tasks, batch_progress, on_checkpoint=on_checkpoint, step_capture=step_capture)


def _run_serial(
    tasks: list[TemperatureTask], tally: _StepTally, on_checkpoint: Callable[[], None]
) -> list[dict[str, Any]]:
    """Every task in turn in this process."""
    results = []
    for index, task in enumerate(tasks):

        def progress(done_steps: int, steps: int, index: int = index, task: TemperatureTask = task) -> None:
            tally.note(index, done_steps, f"{task.name} T={task.temperature:g}: step {done_steps}/{steps}")

        results.append(run_temperature(task, progress, on_checkpoint=on_checkpoint))
    return results


def _run_in_processes(
    tasks: list[TemperatureTask], workers: int, tally: _StepTally, on_checkpoint: Callable[[], None]
) -> list[dict[str, Any]]:
    """The tasks in ``workers`` spawned processes, their steps and checkpoints relayed through a queue; an
    error or a cancel here stops them all."""
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
                        tally.note(
                            index_of[(name, temperature)],
                            steps,
                            f"{name} T={temperature:g}: step {steps}/{count}",
                        )
                    tally.repeat()
                    for future in finished:
                        future.result()  # re-raise a worker's error here
            except BaseException:
                stop.set()
                for future in pending:
                    future.cancel()
                raise
            return [future.result() for future in sorted(futures, key=lambda future: futures[future])]


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
    replicas of one batch in this process (``run_replicas``; for a GPU), its step run as ``step_capture``
    says (``integrator``). Returns the records in task order."""
    tally = _StepTally(tasks, report)
    if batched:
        return _run_batched(tasks, tally, on_checkpoint, step_capture)
    if workers <= 1 or len(tasks) <= 1:
        return _run_serial(tasks, tally, on_checkpoint)
    return _run_in_processes(tasks, workers, tally, on_checkpoint)
