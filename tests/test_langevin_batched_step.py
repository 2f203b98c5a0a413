"""Every chain of a run in one batched step equals the per-chain sampler (issue 28): models' starts x
temperatures advanced by ``integrator.langevin_update`` (one vmapped model call) give, with the same seeds,
the weights, momenta and losses of one ``PseudoLangevin`` per chain to 1e-6 relative; the in-place form of
that function (what a CUDA graph captures) equals the eager one; on a GPU the captured and compiled steps
equal the eager step (marked ``gpu``: skipped without CUDA)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from analyzers.langevin.chain_runs import run_temperature, run_temperatures
from analyzers.langevin.chain_tasks import SamplingSettings, TemperatureTask
from analyzers.langevin.data import make_splits
from analyzers.langevin.dynamics import PseudoLangevin, ReplicaPseudoLangevin, SamplerConfig, step_groups
from analyzers.langevin.integrator import StepRunner, resolve_capture
from analyzers.langevin.mass_matrix import MassMatrix, guarded_mass_matrix, noise_covariance_mass, noise_spectrum
from analyzers.langevin.model import ModelConfig, build_model
from analyzers.langevin.objective import FlatObjective, ReplicaObjective, per_sequence_gradients
from tests.helpers.langevin_tasks import tiny_tasks

TEMPERATURES = (1e-5, 1e-4, 1e-3)
STEPS = 6
BATCH = 16


def _relative(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).norm() / b.norm())


def _starts(device: str = "cpu") -> tuple[torch.nn.Module, object, list[torch.Tensor]]:
    """A tiny transformer, its splits and two different starting weight vectors (two 'starts')."""
    sequences = np.random.default_rng(0).integers(0, 20, size=(80, 86))
    splits = make_splits(sequences, (40, 10, 30), seed=0).to(device)
    torch.manual_seed(0)
    model = build_model(ModelConfig(embed_dim=8, hidden_dim=16)).to(device)
    first = torch.cat([p.detach().reshape(-1) for p in model.parameters()]).double()
    torch.manual_seed(1)
    second = torch.cat([p.detach().reshape(-1) for p in build_model(ModelConfig(embed_dim=8, hidden_dim=16))
                        .parameters()]).double().to(device)  # fmt: skip
    return model, splits, [first, second]


def _chains() -> list[tuple[int, float]]:
    return [(start, temperature) for start in range(2) for temperature in TEMPERATURES]


def _mass(model: torch.nn.Module, splits: object, w: torch.Tensor,
          temperature: float) -> tuple[MassMatrix, torch.Tensor]:
    spectrum = noise_spectrum(per_sequence_gradients(model, splits.train, w), BATCH)  # type: ignore[attr-defined]
    mass = guarded_mass_matrix(noise_covariance_mass(spectrum, temperature, r=0.3), w, temperature)[0]
    return mass, spectrum.variance


def _batched(device: str = "cpu", capture: str = "none") -> ReplicaPseudoLangevin:
    model, splits, starts = _starts(device)
    chains = _chains()
    objective = ReplicaObjective(model, splits.train, BATCH,  # type: ignore[attr-defined]
                                 [torch.Generator(device).manual_seed(10 * i) for i in range(len(chains))])
    w0 = torch.stack([starts[start] for start, _ in chains])
    masses = [_mass(model, splits, w0[i], t) for i, (_, t) in enumerate(chains)]
    return ReplicaPseudoLangevin(
        w0, objective, MassMatrix.stack([m for m, _ in masses]), [t for _, t in chains],
        [torch.Generator(device).manual_seed(10 * i + 1) for i in range(len(chains))],
        torch.stack([v for _, v in masses]), step_capture=capture,
    )  # fmt: skip


def test_every_start_and_temperature_in_one_batched_step_equals_the_per_chain_sampler() -> None:
    torch.set_num_threads(1)
    batched = _batched()
    assert batched.mass.rank > 0  # the low-rank mass term is inside the batched step
    losses = torch.stack([batched.step() for _ in range(STEPS)], dim=1)  # (R, steps)
    batched.check()
    for index, (start, temperature) in enumerate(_chains()):
        model, splits, starts = _starts()
        objective = FlatObjective(model, splits.train, BATCH, torch.Generator().manual_seed(10 * index))  # type: ignore[attr-defined]
        objective.load(starts[start])
        mass, variance = _mass(objective.model, splits, starts[start], temperature)
        single = PseudoLangevin(starts[start], objective, mass, SamplerConfig(temperature), variance,
                                torch.Generator().manual_seed(10 * index + 1))  # fmt: skip
        single_losses = torch.stack([single.step() for _ in range(STEPS)])
        assert _relative(batched.w[index], single.w) < 1e-6
        assert _relative(batched.p[index], single.p) < 1e-6
        assert _relative(losses[index].double(), single_losses.double()) < 1e-6
        assert float(batched.w[index] @ batched.w[index]) == pytest.approx(float(single.q), rel=1e-10)
    # the chains are really different: two starts, three temperatures
    assert _relative(batched.w[0], batched.w[3]) > 1e-2 and _relative(batched.p[0], batched.p[2]) > 1e-1


def test_the_captured_in_place_step_equals_the_eager_step() -> None:
    """``StepRunner._in_place`` is what a CUDA graph records: on the CPU it runs as is, and must give the eager
    step's numbers exactly while writing into the state's own tensors."""
    torch.set_num_threads(1)
    eager, in_place = _batched(), _batched()
    buffers = [t.data_ptr() for t in in_place.state.tensors()]
    for _ in range(STEPS):
        noise, index = eager.draw_inputs()
        eager.runner.step([eager.state], [eager.constants], [noise], [index])
        in_place.draw_inputs()  # the same draws from its own generators
        in_place.runner._in_place([in_place.state], [in_place.constants], [noise], [index])
    assert [t.data_ptr() for t in in_place.state.tensors()] == buffers  # static buffers: written, not replaced
    for a, b in zip(eager.state.tensors(), in_place.state.tensors(), strict=True):
        assert torch.equal(a, b)


def test_capture_modes_resolve_per_device() -> None:
    assert resolve_capture("auto", "cpu") == "none" and resolve_capture("graph", "cpu") == "none"
    assert resolve_capture("auto", "cuda") == "graph" and resolve_capture("compile", "cuda:0") == "compile"
    with pytest.raises(ValueError, match="step_capture"):
        resolve_capture("fast", "cpu")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("capture", ["graph", pytest.param("compile", marks=pytest.mark.slow)])  # compiling: minutes
def test_captured_step_on_cuda_equals_the_eager_step(capture: str) -> None:
    eager, captured = _batched("cuda", "none"), _batched("cuda", capture)
    for _ in range(STEPS):
        eager.step()
        captured.step()
    torch.cuda.synchronize()
    assert _relative(captured.w, eager.w) < 1e-6 and _relative(captured.p, eager.p) < 1e-6
    assert torch.equal(captured.bad_steps, eager.bad_steps)
    if capture == "graph":
        assert captured.runner.captures == 1  # captured once, replayed every step after


@pytest.mark.slow  # a minute or more of compilation on one core
def test_the_compiled_step_equals_the_eager_step_on_the_cpu() -> None:
    """``StepRunner``'s compile mode: ``torch.compile(mode="reduce-overhead")`` of the very ``AdvanceGroups``
    callable the GPU compiles (the mode's CUDA graphs need CUDA: on the CPU the compiled code runs without
    them)."""
    torch.set_num_threads(1)
    eager, compiled = _batched(), _batched()
    runner = StepRunner([compiled.evaluate], "compile")
    for _ in range(3):
        eager.step()
        step_groups([compiled], runner)
    assert runner._compiled is not None
    assert _relative(compiled.w, eager.w) < 1e-6 and _relative(compiled.p, eager.p) < 1e-6
    assert torch.equal(compiled.bad_steps, eager.bad_steps) and compiled.steps_done == 3


def test_the_pipeline_batches_every_start_and_temperature_of_a_model(tmp_path: Path) -> None:
    """``run_temperatures(batched=True)``: ES and OT chains of one model in one batch (one per model), with the
    records one chain at a time gives: losses, energies (read from the device at the snapshots), snapshots."""
    torch.set_num_threads(1)
    settings = SamplingSettings(steps=12, batch_size=16, variance_batches=3, variance_every=6, snapshot_every=4,
                                weights_every=4, checkpoint_every=8, energy_every=2, burn_in_fraction=0.25)

    def tasks(folder: str) -> list[TemperatureTask]:
        return tiny_tasks(tmp_path / folder, settings)

    messages: list[str] = []
    batched = run_temperatures(tasks("batched"), 1, lambda f, m: messages.append(m), batched=True)
    single = [run_temperature(task) for task in tasks("single")]
    assert any("4 chains (2 start(s) x 2 temperatures)" in m for m in messages), messages
    for a, b in zip(batched, single, strict=True):
        assert a["replicas"] == 4 and a["name"] == b["name"] and a["start_norm"] == b["start_norm"]
        np.testing.assert_allclose(a["losses"], b["losses"], rtol=1e-5)
        assert [s for s, _ in a["energies"]] == [s for s, _ in b["energies"]]
        np.testing.assert_allclose([e for _, e in a["energies"]], [e for _, e in b["energies"]], rtol=1e-5)
        assert [s["step"] for s in a["snapshots"]] == [s["step"] for s in b["snapshots"]]
        np.testing.assert_allclose([s["train_loss"] for s in a["snapshots"]],
                                   [s["train_loss"] for s in b["snapshots"]], rtol=1e-5)  # fmt: skip
    assert batched[0]["start_norm"] != batched[2]["start_norm"]  # two starts really
