"""Checkpoints written off the run loop (``checkpoint_writer.CheckpointWriter``): what the background thread writes
is what the loop wrote in place, at the step it was taken, in order, one file per replica; a full queue makes the
loop wait; a failed write stops the run with its error; a stopped run still has every queued checkpoint on disk,
and a run resumed from those files ends with the uninterrupted run's records (the bit-for-bit resume itself:
tests/test_langevin_replica_checkpoints.py, which runs the background writer by default)."""

from __future__ import annotations

import dataclasses
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from analyzers.base import Cancelled
from analyzers.langevin import chain_runs
from analyzers.langevin.chain_runs import ChainRun, run_replicas
from analyzers.langevin.chain_tasks import SamplingSettings, TemperatureTask, read_checkpoint, save_checkpoint
from analyzers.langevin.chains import BatchedChains
from analyzers.langevin.checkpoint_writer import CheckpointWriteError, CheckpointWriter
from tests.helpers.langevin_tasks import tiny_tasks


def _settings() -> SamplingSettings:
    return SamplingSettings(steps=12, batch_size=16, r=0.3, mass_rule="noise-covariance", variance_every=8,
                            snapshot_every=4, weights_every=4, checkpoint_every=4, energy_every=2,
                            burn_in_fraction=0.25)  # fmt: skip


def _same(a: Any, b: Any) -> bool:
    """Equal plain data, tensors and arrays bit for bit."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and torch.equal(a, b)
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    return bool(a == b) or (a != a and b != b)  # NaN equals NaN here


def _task(path: Path) -> TemperatureTask:
    return dataclasses.replace(tiny_tasks(path.parent, _settings(), (1e-4,))[0], checkpoint=path)


def test_the_writer_writes_a_frozen_copy_in_order_and_announces_whole_checkpoints(tmp_path: Path) -> None:
    written: list[tuple[str, int]] = []
    release = threading.Event()

    def slow(task: TemperatureTask, state: dict[str, Any], done: bool) -> None:
        release.wait()
        written.append((task.checkpoint.name, int(state["records"]["losses"][0])))

    a, b = _task(tmp_path / "a.pt"), _task(tmp_path / "b.pt")
    losses = np.zeros(3)
    records: dict[str, Any] = {"losses": losses, "energies": [(1, 0.5)]}
    with CheckpointWriter(write=slow) as writer:
        writer.submit([(a, {"records": records}, False), (b, {"records": records}, False)])
        losses[0] = 7.0  # the loop goes on writing its records: the queued checkpoint keeps step 1's values
        records["energies"].append((2, 0.25))
        writer.submit([(a, {"records": records}, False)])
        assert writer.poll() == 0  # nothing on disk yet: nothing announced
        release.set()
        assert writer.flush() == 2
    assert written == [("a.pt", 0), ("b.pt", 0), ("a.pt", 7)]


def test_a_full_queue_makes_the_loop_wait(tmp_path: Path) -> None:
    release = threading.Event()

    def blocked(task: TemperatureTask, state: dict[str, Any], done: bool) -> None:
        release.wait()

    writer = CheckpointWriter(max_pending=2, write=blocked)
    task = _task(tmp_path / "a.pt")
    submitted = threading.Event()

    def loop() -> None:
        for _ in range(3):  # 3 states + 3 marks; the thread holds one: the queue of 2 is full before the end
            writer.submit([(task, {}, False)])
        submitted.set()

    thread = threading.Thread(target=loop)
    thread.start()
    assert not submitted.wait(0.3)  # waiting on the queue, not buffering without bound
    release.set()
    thread.join(5)
    assert submitted.is_set() and writer.close() == 3


def test_a_failed_write_is_raised_in_the_loop_and_nothing_after_it_is_announced(tmp_path: Path) -> None:
    calls: list[str] = []
    queued = threading.Event()

    def failing(task: TemperatureTask, state: dict[str, Any], done: bool) -> None:
        queued.wait()
        calls.append(task.checkpoint.name)
        if task.checkpoint.name == "bad.pt":
            raise OSError(28, "No space left on device")

    writer = CheckpointWriter(write=failing)
    writer.submit([(_task(tmp_path / "bad.pt"), {}, False), (_task(tmp_path / "b.pt"), {}, False)])
    writer.submit([(_task(tmp_path / "c.pt"), {}, False)])
    queued.set()
    with pytest.raises(CheckpointWriteError, match="bad.pt: OSError.*No space left") as caught:
        writer.close()
    assert isinstance(caught.value.__cause__, OSError)
    assert calls == ["bad.pt"]  # stopped at the failure: no later file is written, no checkpoint announced
    with pytest.raises(CheckpointWriteError):
        writer.poll()


@pytest.mark.slow  # a sampling run: 15-80 s on the shared 2 cores
def test_a_run_whose_checkpoint_cannot_be_written_stops_with_that_error(tmp_path: Path) -> None:
    (tmp_path / "not-a-folder").write_text("a file where the checkpoint folder should be")
    tasks = tiny_tasks(tmp_path / "not-a-folder", _settings(), (1e-4,))
    with pytest.raises(CheckpointWriteError, match="not-a-folder"):
        run_replicas(tasks)


@pytest.mark.slow  # a sampling run: 15-80 s on the shared 2 cores
def test_background_checkpoints_equal_those_written_in_the_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    """Every checkpoint a background writer wrote (captured as it wrote it, while the loop went on with a slowed
    writer) equals what the loop writing in place wrote at that step, and so do the records."""
    seen: dict[str, list[dict[str, Any]]] = {"loop": [], "background": []}

    def keep(kind: str, delay: float) -> Any:
        def write(task: TemperatureTask, state: dict[str, Any], done: bool) -> None:
            time.sleep(delay)  # the loop runs ahead of a slow disk
            save_checkpoint(task, state, done)
            saved = read_checkpoint(task.checkpoint)
            assert saved is not None
            seen[kind].append(saved)
        return write

    results = {}
    for kind, delay in (("loop", 0.0), ("background", 0.05)):
        tasks = tiny_tasks(tmp_path / kind, _settings())
        chains = BatchedChains(tasks, [None] * len(tasks), "none")
        announced: list[int] = []
        writer = None
        if kind == "loop":  # the in-loop path, seen through the same write function
            monkeypatch.setattr(chain_runs, "save_checkpoint", keep(kind, delay))
        else:
            monkeypatch.undo()
            writer = CheckpointWriter(write=keep(kind, delay))
        run = ChainRun(chains, lambda: announced.append(1), writer)  # noqa: B023 - run before the next pass
        results[kind] = run.run(lambda d, t: None, lambda: False)
        assert len(announced) == 3  # steps 4, 8 and the end, each announced once
    assert len(seen["loop"]) == len(seen["background"]) == 3 * 4
    for a, b in zip(seen["loop"], seen["background"], strict=True):
        a["records"]["seconds"] = b["records"]["seconds"] = 0.0  # wall time differs, nothing else
        assert _same(a, b)
    for a, b in zip(results["loop"], results["background"], strict=True):
        a["seconds"] = b["seconds"] = 0.0
        assert _same(a, b)


@pytest.mark.slow  # a sampling run: 15-80 s on the shared 2 cores
def test_a_stopped_run_has_its_queued_checkpoints_on_disk(tmp_path: Path) -> None:
    tasks = tiny_tasks(tmp_path, _settings())
    chains = BatchedChains(tasks, [None] * len(tasks), "none")

    def slow(task: TemperatureTask, state: dict[str, Any], done: bool) -> None:
        time.sleep(0.05)
        save_checkpoint(task, state, done)

    def stop(done: int, total: int) -> None:
        if done == 8:
            raise Cancelled("stopped at step 8")

    with pytest.raises(Cancelled):
        ChainRun(chains, lambda: None, CheckpointWriter(write=slow)).run(stop, lambda: False)
    steps = [read_checkpoint(task.checkpoint) for task in tasks]
    assert [state["sampler"]["steps_done"] for state in steps if state is not None] == [8] * len(tasks)
