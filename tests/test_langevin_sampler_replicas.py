"""Batched replicas equal the per-temperature sampler step for step: R temperatures advanced by one vmapped
model call give, with the same seeds, the losses, weights and momenta of R single-temperature samplers; in
the pipeline they give the same records, resume after a kill, and hand their checkpoints to the CPU path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from analyzers.base import Cancelled
from analyzers.langevin.chain_runs import run_temperature, run_temperatures
from analyzers.langevin.chain_tasks import SamplingSettings, TemperatureTask
from analyzers.langevin.data import MaskedSplit, make_splits
from analyzers.langevin.dynamics import PseudoLangevin, ReplicaPseudoLangevin, SamplerConfig
from analyzers.langevin.mass_matrix import (
    MassMatrix,
    guarded_mass_matrix,
    guarded_masses,
    noise_covariance_mass,
    noise_spectrum,
)
from analyzers.langevin.model import ModelConfig, build_model
from analyzers.langevin.objective import FlatObjective, ReplicaObjective, per_sequence_gradients

TEMPERATURES = (1e-5, 1e-4, 1e-3)
STEPS = 8


def _setup(kind: str) -> tuple[torch.nn.Module, object]:
    sequences = np.random.default_rng(0).integers(0, 20, size=(80, 86))
    splits = make_splits(sequences, (40, 10, 30), seed=0)
    torch.manual_seed(0)
    return build_model(ModelConfig(embed_dim=8, hidden_dim=16, kind=kind)), splits


def _generators(seed: int) -> tuple[torch.Generator, torch.Generator]:
    return torch.Generator().manual_seed(seed), torch.Generator().manual_seed(seed + 1)


def _covariance_mass(model: torch.nn.Module, split: MaskedSplit, w: torch.Tensor, temperature: float,
                     batch_size: int) -> tuple[MassMatrix, torch.Tensor]:
    """The noise-covariance mass (a low-rank term at r = 0.3) and the per-weight variance, at w (n,)."""
    spectrum = noise_spectrum(per_sequence_gradients(model, split, w), batch_size)
    mass = guarded_mass_matrix(noise_covariance_mass(spectrum, temperature, r=0.3), w, temperature)[0]
    assert mass.rank > 0
    return mass, spectrum.variance


def _single(kind: str, constrained: bool, batch_size: int, covariance: bool = False) -> list[dict[str, torch.Tensor]]:
    """Each temperature alone: FlatObjective + PseudoLangevin, generators seeded per temperature."""
    runs = []
    for index, temperature in enumerate(TEMPERATURES):
        model, splits = _setup(kind)
        batches, noise = _generators(100 * index)
        objective = FlatObjective(model, splits.train, batch_size, batches)  # type: ignore[attr-defined]
        w0 = objective.weights()
        variance = objective.gradient_variance(w0, 3)
        masses: torch.Tensor | MassMatrix = guarded_masses(variance, w0, temperature, r=0.01)[0]
        if covariance:
            masses, variance = _covariance_mass(objective.model, splits.train, w0, temperature, batch_size)
        sampler = PseudoLangevin(w0, objective, masses, SamplerConfig(temperature, constrained=constrained),
                                 None if objective.full_batch else variance, noise)  # fmt: skip
        losses = [sampler.step() for _ in range(STEPS)]
        sampler.check()
        runs.append({"losses": torch.stack(losses), "w": sampler.w, "p": sampler.p, "masses": sampler.mass.diagonal})
    return runs


def _batched(kind: str, constrained: bool, batch_size: int, covariance: bool = False) -> ReplicaPseudoLangevin:
    model, splits = _setup(kind)
    pairs = [_generators(100 * index) for index in range(len(TEMPERATURES))]
    objective = ReplicaObjective(model, splits.train, batch_size, [b for b, _ in pairs])  # type: ignore[attr-defined]
    w0 = objective.weights().expand(len(TEMPERATURES), -1)  # (R, n)
    variance = objective.gradient_variance(w0, 3)  # (R, n), each replica's own minibatches
    masses: torch.Tensor | MassMatrix = torch.stack([guarded_masses(variance[r], w0[r], t, r=0.01)[0]
                                                     for r, t in enumerate(TEMPERATURES)])  # fmt: skip
    if covariance:
        pairs_of_mass = [_covariance_mass(model, splits.train, w0[r], t, batch_size)  # type: ignore[attr-defined]
                         for r, t in enumerate(TEMPERATURES)]  # fmt: skip
        masses = MassMatrix.stack([mass for mass, _ in pairs_of_mass])
        variance = torch.stack([v for _, v in pairs_of_mass])
    return ReplicaPseudoLangevin(w0, objective, masses, TEMPERATURES, [n for _, n in pairs],
                                 None if objective.full_batch else variance, constrained=constrained)  # fmt: skip


@pytest.mark.parametrize(
    ("kind", "constrained", "batch_size", "covariance"),
    [("transformer", True, 16, False), ("feedforward", False, 16, False), ("transformer", True, 64, False),
     ("transformer", True, 16, True)],  # 64 > 40: full batch; the last with the noise-covariance masses
)
def test_replicas_equal_the_per_temperature_sampler_step_for_step(
    kind: str, constrained: bool, batch_size: int, covariance: bool
) -> None:
    singles = _single(kind, constrained, batch_size, covariance)
    batched = _batched(kind, constrained, batch_size, covariance)
    start = batched.w.clone()
    losses = torch.stack([batched.step() for _ in range(STEPS)], dim=1)  # (R, steps)
    batched.check()
    for index, single in enumerate(singles):
        torch.testing.assert_close(batched.mass.diagonal[index], single["masses"], rtol=1e-4, atol=0)  # float32 sums
        torch.testing.assert_close(losses[index], single["losses"], rtol=1e-5, atol=1e-7)
        # float32 sums in another order (vmapped vs one replica) drift by a few ulps per step: close relative to
        # the weights' own scale, as for the momenta
        torch.testing.assert_close(batched.w[index], single["w"], rtol=1e-5, atol=1e-5 * float(single["w"].abs().max()))
        # momenta carry float32 gradients: close relative to their own scale
        torch.testing.assert_close(batched.p[index], single["p"], rtol=1e-4, atol=1e-5 * float(single["p"].abs().max()))
        if constrained:  # on its own sphere
            assert float(batched.w[index] @ batched.w[index]) == pytest.approx(float(batched.q[index, 0]), rel=1e-10)
    # the replicas are really at different temperatures: hotter chains move further from the start
    moved = (batched.w - start).norm(dim=1)
    assert bool((moved[1:] > moved[:-1]).all()), moved


def test_replica_state_continues_in_a_single_sampler() -> None:
    batched = _batched("transformer", True, 16)
    for _ in range(3):
        batched.step()
    state = batched.replica_state(1)
    other = _batched("transformer", True, 16)
    other.load_replica_state(1, state)
    assert torch.equal(other.w[1], batched.w[1]) and torch.equal(other.p[1], batched.p[1])
    assert other.steps_done == 3 and float(other.loss[1]) == float(batched.loss[1])


# -- the batched path of the pipeline: records, checkpoints and resume as the per-temperature path ----------


def _task(folder: Path, temperature: float, steps: int = 20) -> TemperatureTask:
    sequences = np.random.default_rng(0).integers(0, 20, size=(80, 86))
    splits = make_splits(sequences, (40, 10, 30), seed=0)
    config = ModelConfig(embed_dim=8, hidden_dim=16)
    torch.manual_seed(0)
    state = build_model(config).state_dict()
    # blocks of 4 steps after a burn-in of 5 and checkpoints every 10: a checkpoint falls inside a block
    settings = SamplingSettings(steps=steps, batch_size=16, variance_batches=3, variance_every=10, snapshot_every=4,
                                weights_every=4, checkpoint_every=10, energy_every=2,
                                burn_in_fraction=0.25)  # fmt: skip
    return TemperatureTask("transformer@ES", temperature, config, state, splits, settings, 0, "cpu",
                           folder / f"{temperature:g}.pt")  # fmt: skip


def _assert_same_records(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert a["temperature"] == b["temperature"] and a["r_used"] == b["r_used"]
    np.testing.assert_allclose(a["losses"], b["losses"], rtol=1e-5)
    for x, y in zip(a["snapshots"], b["snapshots"], strict=True):
        assert x["step"] == y["step"]
        assert x["train_loss"] == pytest.approx(y["train_loss"], rel=1e-5)
        assert x["test_error"] == pytest.approx(y["test_error"], abs=1e-3)  # an argmax may flip on a near tie
    np.testing.assert_allclose([e for _, e in a["energies"]], [e for _, e in b["energies"]], rtol=1e-5)
    np.testing.assert_allclose(a["thermostat"]["kinetic_temperature_directions"],
                               b["thermostat"]["kinetic_temperature_directions"], rtol=1e-3)  # fmt: skip
    torch.testing.assert_close(a["attention_sum"], b["attention_sum"], rtol=1e-4, atol=1e-6)


def test_replicas_in_the_pipeline_match_one_temperature_at_a_time_and_resume(tmp_path: Path) -> None:
    temperatures = (1e-4, 1e-3)
    single = [run_temperature(_task(tmp_path / "single", t)) for t in temperatures]
    messages: list[str] = []
    whole = run_temperatures([_task(tmp_path / "batched", t) for t in temperatures], 1,
                             lambda fraction, message: messages.append(message), batched=True)  # fmt: skip
    for a, b in zip(whole, single, strict=True):
        assert a["replicas"] == 2
        _assert_same_records(a, b)
    assert any("2 temperatures" in message for message in messages)

    def die(fraction: float, message: str) -> None:
        if "step 12/" in message:  # after the checkpoint at step 10, inside the block of steps 9-12
            raise Cancelled("killed")

    killed = [_task(tmp_path / "killed", t) for t in temperatures]
    with pytest.raises(Cancelled):
        run_temperatures(killed, 1, die, batched=True)
    assert [torch.load(t.checkpoint, weights_only=True)["sampler"]["steps_done"] for t in killed] == [10, 10]
    # a batched checkpoint is a single-temperature checkpoint: the CPU path can finish one of them
    handed = run_temperature(killed[1])
    _assert_same_records(handed, whole[1])
    resumed = run_temperatures(killed, 1, lambda f, m: None, batched=True)  # the other resumes in a batch of one
    np.testing.assert_array_equal(resumed[0]["losses"], whole[0]["losses"])  # the same process, the same numbers
    assert resumed[0]["snapshots"] == whole[0]["snapshots"]
    # the open block's sums survived the kill (to the last bits: a batch of one sums in another order than two)
    resumed_thermostat, whole_thermostat = resumed[0]["thermostat"], whole[0]["thermostat"]
    assert resumed_thermostat.keys() == whole_thermostat.keys()
    for key, value in whole_thermostat.items():
        if isinstance(value, float) or (isinstance(value, list) and value and isinstance(value[0], float)):
            np.testing.assert_allclose(resumed_thermostat[key], value, rtol=1e-12)
        else:
            assert resumed_thermostat[key] == value, key
    assert resumed[1]["losses"] is handed["losses"] or np.array_equal(resumed[1]["losses"], handed["losses"])
