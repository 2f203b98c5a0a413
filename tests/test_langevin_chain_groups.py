"""Every chain of an experiment in one loop (``chain_runs.run_chain_groups``, ``chains.ChainGroups``): both
architectures' batches, each with its starts and temperatures, stepped in lockstep give each chain the records of its
model's batch run alone, bit for bit, and resume from their checkpoints to the same bits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from analyzers.base import Cancelled
from analyzers.langevin.chain_runs import run_chain_groups, run_replicas
from analyzers.langevin.chain_tasks import SamplingSettings, TemperatureTask
from tests.helpers.langevin_tasks import tiny_tasks


def _tasks(folder: Path) -> list[TemperatureTask]:
    settings = SamplingSettings(steps=8, batch_size=16, r=0.3, variance_batches=3, variance_every=4, snapshot_every=4,
                                weights_every=4, checkpoint_every=4, energy_every=2, burn_in_fraction=0.25)  # fmt: skip
    return [*tiny_tasks(folder, settings, (1e-4,)), *tiny_tasks(folder, settings, (1e-4,), kind="feedforward")]


def _assert_identical(a: dict[str, Any], b: dict[str, Any]) -> None:
    np.testing.assert_array_equal(a["losses"], b["losses"])
    assert a["energies"] == b["energies"] and a["snapshots"] == b["snapshots"]
    assert a["mass_guard"] == b["mass_guard"] and a["kinetic_blocks"] == b["kinetic_blocks"]
    assert all(torch.equal(x, y) for x, y in zip(a["weights"], b["weights"], strict=True))
    assert a["final_norm"] == b["final_norm"] and a["name"] == b["name"]


@pytest.mark.slow  # three sampling runs of two models: ~1-2 min on the shared 2 cores
def test_both_architectures_in_lockstep_equal_each_models_batch_alone_and_resume(tmp_path: Path) -> None:
    tasks = _tasks(tmp_path / "together")
    steps: list[int] = []
    together = run_chain_groups(tasks, lambda done, total: steps.append(done))
    assert steps == [4, 8]  # one loop for all four chains, not one per model
    alone = [*run_replicas(_tasks(tmp_path / "alone")[:2]), *run_replicas(_tasks(tmp_path / "alone")[2:])]
    assert [record["name"] for record in together] == ["transformer@ES", "transformer@OT", "ffn@ES", "ffn@OT"]
    for a, b in zip(together, alone, strict=True):
        _assert_identical(a, b)

    def stop(done: int, total: int) -> None:
        if done == 4:
            raise Cancelled("stopped at step 4")

    killed = _tasks(tmp_path / "killed")
    with pytest.raises(Cancelled):
        run_chain_groups(killed, stop)
    for a, b in zip(run_chain_groups(killed), together, strict=True):
        _assert_identical(a, b)
