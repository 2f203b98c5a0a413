"""The batched sampler's checkpoints (``chain_runs.run_replicas``) hold each replica's own state and nothing more: a
replica's tensors used to be views of the batch, and ``torch.save`` writes a view's whole storage, so every
temperature's file carried every replica's low-rank mass (10 GB per checkpoint at the ``small`` preset, the
GPU run's main cost). The records stay those of the per-chain path, and a killed batch resumes to the same bits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from analyzers.base import Cancelled
from analyzers.langevin.chain_runs import run_replicas, run_temperature
from analyzers.langevin.chain_tasks import SamplingSettings, TemperatureTask
from tests.helpers.langevin_tasks import tiny_tasks

TEMPERATURES = (1e-4, 1e-3)


def _tasks(folder: Path) -> list[TemperatureTask]:
    """Two starts x two temperatures of one small transformer, with the noise-covariance masses (a low-rank term,
    r = 0.3 so that directions are kept), refreshed after the checkpoint at step 6."""
    settings = SamplingSettings(steps=12, batch_size=16, r=0.3, mass_rule="noise-covariance", variance_every=8,
                                snapshot_every=4, weights_every=4, checkpoint_every=6, energy_every=2,
                                burn_in_fraction=0.25)  # fmt: skip
    return tiny_tasks(folder, settings, TEMPERATURES)


def _stop_at(step: int) -> Any:
    def progress(done: int, total: int) -> None:
        if done == step:
            raise Cancelled(f"killed at step {step}")

    return progress


def _assert_identical(a: dict[str, Any], b: dict[str, Any]) -> None:
    np.testing.assert_array_equal(a["losses"], b["losses"])
    assert a["energies"] == b["energies"] and a["snapshots"] == b["snapshots"]
    assert a["mass_guard"] == b["mass_guard"] and a["kinetic_blocks"] == b["kinetic_blocks"]
    for x, y in zip(a["weights"], b["weights"], strict=True):
        assert torch.equal(x, y)
    assert a["final_norm"] == b["final_norm"]


def test_a_replica_checkpoint_holds_its_own_state_only(tmp_path: Path) -> None:
    tasks = _tasks(tmp_path / "killed")
    with pytest.raises(Cancelled):
        run_replicas(tasks, _stop_at(8))
    for task in tasks:
        sampler = torch.load(task.checkpoint, weights_only=True)["sampler"]
        assert sampler["steps_done"] == 6
        assert sampler["mass_directions"].shape[0] > 0  # the low-rank term is there (and travels with the file)
        for key, value in sampler.items():
            if isinstance(value, torch.Tensor):  # its own storage, not the batch's: R times smaller
                assert value.untyped_storage().nbytes() == value.numel() * value.element_size(), key


def test_a_killed_batch_resumes_to_the_uninterrupted_records_bit_for_bit(tmp_path: Path) -> None:
    whole = run_replicas(_tasks(tmp_path / "whole"))
    killed = _tasks(tmp_path / "killed")
    with pytest.raises(Cancelled):
        run_replicas(killed, _stop_at(8))
    resumed = run_replicas(killed)
    for a, b in zip(resumed, whole, strict=True):
        _assert_identical(a, b)
    # and the checkpoint is a single-temperature one: the per-chain path finishes a replica from it, its records
    # those of the batch to float32 summation order (a vmapped model call sums in another order than one chain's)
    again = _tasks(tmp_path / "handed")
    with pytest.raises(Cancelled):
        run_replicas(again, _stop_at(8))
    handed = run_temperature(again[3])
    np.testing.assert_allclose(handed["losses"], whole[3]["losses"], rtol=1e-5)
    np.testing.assert_allclose([e for _, e in handed["energies"]], [e for _, e in whole[3]["energies"]], rtol=1e-5)
