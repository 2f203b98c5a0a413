"""The two noise modes of the Langevin sampler and the thermostat check's rule: full-batch gradients really are
the whole training split's, and a hot direction is flagged however short the run, a noisy one is not."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import torch

from analyzers.langevin.chain_runs import run_temperature
from analyzers.langevin.chain_tasks import SamplingSettings, TemperatureTask
from analyzers.langevin.data import make_splits
from analyzers.langevin.model import ModelConfig, build_model
from analyzers.langevin.thermostat import KINETIC_EVERY, thermostat_report


def _task(folder: Path, noise: str) -> TemperatureTask:
    sequences = np.random.default_rng(0).integers(0, 20, size=(80, 86))
    splits = make_splits(sequences, (40, 10, 30), seed=0)
    config = ModelConfig(embed_dim=8, hidden_dim=16)
    torch.manual_seed(0)
    settings = SamplingSettings(steps=12, batch_size=16, r=0.5, variance_batches=3, variance_every=100,
                                snapshot_every=4, weights_every=4, checkpoint_every=100, energy_every=2,
                                noise=noise)  # fmt: skip
    return TemperatureTask("transformer@ES", 1e-4, config, build_model(config).state_dict(), splits, settings, 0, "cpu",
                           folder / f"{noise}.pt")  # fmt: skip


def test_sampler_full_batch_noise_uses_the_whole_training_split(tmp_path: Path) -> None:
    full = run_temperature(_task(tmp_path, "full_batch"))
    minibatch = run_temperature(_task(tmp_path, "minibatch"))
    # the loss a step returns is the full training loss at the step's new weights, as the energy records it
    for records, same in ((full, True), (minibatch, False)):
        step_losses = np.array([records["losses"][step - 1] for step, _ in records["energies"]])
        energies = np.array([energy for _, energy in records["energies"]])
        assert np.allclose(step_losses, energies, rtol=1e-5) == same
    assert full["thermostat"]["noise"] == "full_batch"
    assert full["thermostat"]["predicted_directions_over_t"] == [1.0] * 3
    assert full["r_used"] == minibatch["r_used"] < 0.05  # one cap (stiff directions): only the noise differs
    with pytest.raises(ValueError, match="noise"):
        run_temperature(_task(tmp_path / "bad", "colored"))


def _records(level: float, blocks: int, steps_per_block: int, pooled: float = 1.0) -> dict[str, object]:
    temperature = 1e-4
    values = [[pooled * temperature] + [level * temperature] * 3 for _ in range(blocks)]
    return {"kinetic_blocks": values, "kinetic_block_steps": [steps_per_block] * blocks, "r_used": 0.01,
            "noise_amplification": [300.0, 200.0, 100.0], "mass_guard": [{"effective_r": 0.01}],
            "coordinates": 44_245}  # fmt: skip


def test_thermostat_report_flags_a_hot_direction_at_any_length_and_knows_its_resolution() -> None:
    settings = SamplingSettings(m1=0.1)  # tau = 199 steps per independent sample of (u . M^-1/2 p)^2
    # every coordinate pooled resolves 20 % at once (44,244 degrees of freedom: SE 1 % of T over 300 steps)
    short_hot = thermostat_report(_records(16.0, 3, 100), 1e-4, settings)
    assert short_hot["pooled_state"] == "at T" and short_hot["direction_states"] == ["off T"] * 3
    assert short_hot["state"] == "off T" and short_hot["thermalized_every_direction"] is False  # a veto
    short_mild = thermostat_report(_records(1.3, 3, 100), 1e-4, settings)
    assert short_mild["direction_states"] == ["unresolved"] * 3  # one direction over 300 steps: SE ~1.1 T
    assert short_mild["state"] == "at T" and short_mild["thermalized_every_direction"] is True
    assert thermostat_report(_records(1.0, 3, 100, pooled=1.3), 1e-4, settings)["state"] == "off T"
    assert thermostat_report(_records(1.0, 2, 100), 1e-4, settings)["state"] == "unresolved"  # 2 blocks: < 3 units
    # one direction resolves 20 % only past ~100,000 steps (SE sqrt(2 * 199 / N) = 0.063, a chi-square interval
    # over nu = 2 / SE^2 = 500 effective degrees of freedom); blocks with no spread use that analytic error
    long_mild = thermostat_report(_records(1.45, 10, 10_000), 1e-4, settings)
    assert long_mild["direction_states"] == ["off T"] * 3 and long_mild["state"] == "off T"
    long_fine = thermostat_report(_records(1.0, 10, 10_000), 1e-4, settings)
    assert long_fine["direction_states"] == ["at T"] * 3 and long_fine["state"] == "at T"
    assert long_fine["predicted_directions_over_t"][0] == pytest.approx(1 - 0.01 + 0.01 * 300)
    assert long_fine["kinetic_temperature_mean"] == pytest.approx(1e-4 * 44_245 / 44_244)  # dof on the sphere


def test_kinetic_readings_count_the_steps_they_cover(tmp_path: Path) -> None:
    # read every KINETIC_EVERY steps, but the standard error counts steps / tau: the blocks must carry the steps
    # they cover after burn-in, not the number of readings (which would widen the error tenfold)
    task = _task(tmp_path, "minibatch")
    steps = 4 * KINETIC_EVERY
    settings = dataclasses.replace(task.settings, steps=steps, snapshot_every=KINETIC_EVERY)
    records = run_temperature(dataclasses.replace(task, settings=settings))
    assert sum(records["kinetic_block_steps"]) == steps // 2  # burn-in: the first half
    assert len(records["kinetic_blocks"]) == 2 and records["thermostat"]["kinetic_temperature_mean"] > 0
