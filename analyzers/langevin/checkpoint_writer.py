"""Sampler checkpoints written off the hot loop: a background thread writes each replica's checkpoint to its
own file (``chain_tasks.save_checkpoint``: atomically, plain data), fed through a bounded queue, so the run
loop only hands over a frozen copy of the state and goes on stepping.

Why: on a GPU the batched step runs ~2,000 chain-steps/s while ``torch.save`` of every replica's state (its
low-rank mass, ~100 MB per replica at k ~ 600 directions) took seconds per checkpoint on the loop's thread.

The rules that keep it as safe as writing in the loop:

* **Frozen state.** What is handed over is never written again by the loop: ``freeze`` copies the records'
  containers and numpy arrays (the loop appends to the lists and writes the loss array in place); their
  tensors are shared, as the samplers and the records replace a tensor rather than write into it (the batched
  sampler's ``replica_state`` clones what a CUDA graph rewrites).
* **Order.** One thread, first in first out: a file's checkpoints land in the order they were taken, and a
  checkpoint is announced (``on_checkpoint``, on the loop's thread, from :meth:`CheckpointWriter.poll`) only
  when every replica's file of it is on disk.
* **Bounded.** At most ``max_pending`` replica states wait (each can be ~100 MB): a loop faster than the disk
  waits at :meth:`CheckpointWriter.submit` instead of filling the memory.
* **Errors surface.** A failed write stops the writing (later checkpoints are dropped, never announced) and is
  raised in the loop, as ``CheckpointWriteError`` from the original error, at its next ``submit`` / ``poll`` /
  ``close``.
* **Flushed.** :meth:`CheckpointWriter.close` waits for every queued write, at the end and when the loop stops
  on an exception (a cancelled run keeps its last checkpoint; the loop's exception is the one raised).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np

from analyzers.langevin.chain_tasks import TemperatureTask, save_checkpoint

Write = Callable[[TemperatureTask, dict[str, Any], bool], None]
DEFAULT_MAX_PENDING = 64  # replica states waiting at most: the paper preset's 36 chains, one checkpoint ahead


class CheckpointWriteError(RuntimeError):
    """A checkpoint could not be written (full disk, a folder gone); the run stops with it."""


def freeze(value: Any) -> Any:
    """A copy of ``value`` the run loop will not change: dicts, lists and tuples rebuilt, numpy arrays copied,
    tensors and other values shared (see the module docstring)."""
    if isinstance(value, dict):
        return {key: freeze(item) for key, item in value.items()}
    if isinstance(value, list):
        return [freeze(item) for item in value]
    if isinstance(value, tuple):
        return tuple(freeze(item) for item in value)
    if isinstance(value, np.ndarray):
        return value.copy()
    return value


@dataclass
class _Write:
    task: TemperatureTask
    state: dict[str, Any]
    done: bool


class _Mark:
    """The end of one checkpoint: every write queued before it is on disk when the thread reaches it."""


_STOP = object()


class CheckpointWriter:
    """One background thread writing queued checkpoints in order (see the module docstring); use it as a
    context manager, or call :meth:`close`."""

    def __init__(self, max_pending: int = DEFAULT_MAX_PENDING, write: Write = save_checkpoint) -> None:
        if max_pending < 1:
            raise ValueError(f"max_pending must be at least 1, got {max_pending}")
        self.write = write
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=max_pending)
        self._lock = threading.Lock()
        self._completed = 0  # checkpoints on disk, not yet announced by poll
        self._error: tuple[Path, BaseException] | None = None
        self._closed = False
        self._thread = threading.Thread(target=self._work, name="kb-checkpoint-writer", daemon=True)
        self._thread.start()

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is _STOP:
                    return
                if self._error is not None:
                    continue  # after a failure nothing more is written or announced
                if isinstance(item, _Mark):
                    with self._lock:
                        self._completed += 1
                    continue
                try:
                    self.write(item.task, item.state, item.done)
                except BaseException as error:  # noqa: BLE001 - every failure goes to the loop
                    with self._lock:
                        self._error = (item.task.checkpoint, error)
            finally:
                self._queue.task_done()

    def _raise_error(self) -> None:
        if self._error is not None:
            path, error = self._error
            raise CheckpointWriteError(f"checkpoint {path}: {type(error).__name__}: {error}") from error

    def submit(self, writes: list[tuple[TemperatureTask, dict[str, Any], bool]]) -> None:
        """Queue one checkpoint: each replica's (task, state, done), its state frozen here (the loop may go on
        at once); waits while ``max_pending`` states are queued."""
        if self._closed:
            raise RuntimeError("the checkpoint writer is closed")
        self._raise_error()
        for task, state, done in writes:
            self._queue.put(_Write(task, freeze(state), done))
        self._queue.put(_Mark())

    def poll(self) -> int:
        """How many checkpoints reached the disk since the last call (each complete in every file); raises
        ``CheckpointWriteError`` if a write failed."""
        self._raise_error()
        with self._lock:
            completed, self._completed = self._completed, 0
        return completed

    def flush(self) -> int:
        """Wait for every queued write; then as :meth:`poll`."""
        self._queue.join()
        return self.poll()

    def close(self) -> int:
        """Flush, stop the thread; as :meth:`poll`. Idempotent."""
        if not self._closed:
            self._queue.join()
            self._closed = True
            self._queue.put(_STOP)
            self._thread.join()
        return self.poll()

    def __enter__(self) -> CheckpointWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if kind is None:
            self.close()
            return
        # what was queued is still written; the loop's own exception is raised, a failed write noted on it
        try:
            self.close()
        except CheckpointWriteError as late:
            if error is not None:
                error.add_note(f"and the checkpoints queued before it: {late}")
