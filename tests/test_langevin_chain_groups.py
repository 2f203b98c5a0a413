"""Every chain of an experiment in one loop and one step (``chain_runs.run_chain_groups``, ``chains.ChainGroups``,
``dynamics.LockstepReplicas``): both architectures' batches, each with its starts and temperatures, advanced by one
call per step (on CUDA one captured graph) give each chain the states, random streams and records of its model's
batch stepped alone, bit for bit, and resume from their checkpoints to the same bits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from analyzers.base import Cancelled
from analyzers.langevin.chain_runs import run_chain_groups, run_replicas
from analyzers.langevin.chain_tasks import SamplingSettings, TemperatureTask
from analyzers.langevin.chains import BatchedChains, ChainGroups
from analyzers.langevin.integrator import ChainState
from tests.helpers.langevin_tasks import tiny_tasks

LOW_RANK = SamplingSettings(steps=4, batch_size=16, r=0.3, mass_rule="noise-covariance")  # masses with directions


def _tasks(folder: Path) -> list[TemperatureTask]:
    settings = SamplingSettings(steps=8, batch_size=16, r=0.3, variance_batches=3, variance_every=4, snapshot_every=4,
                                weights_every=4, checkpoint_every=4, energy_every=2, burn_in_fraction=0.25)  # fmt: skip
    return [*tiny_tasks(folder, settings, (1e-4,)), *tiny_tasks(folder, settings, (1e-4,), kind="feedforward")]


def _groups(folder: Path, settings: SamplingSettings = LOW_RANK, device: str = "cpu",
            capture: str = "none") -> list[BatchedChains]:
    """The attention model's and the feed-forward baseline's batches (2 starts x 2 temperatures each), fresh."""
    return [BatchedChains(tiny_tasks(folder, settings, kind=kind, device=device), [None] * 4, capture)
            for kind in ("transformer", "feedforward")]  # fmt: skip


def _assert_same_chains(a: BatchedChains, b: BatchedChains) -> None:
    """Bit for bit: every tensor a step carries, and where each chain's two random streams stand."""
    state_a, state_b = a.sampler.state, b.sampler.state
    for name, x, y in zip(("w", "p", "grad", "loss", "M^-1 w", "SHAKE failures"), state_a.tensors(),
                          state_b.tensors(), strict=True):  # fmt: skip
        assert torch.equal(x, y), name
    assert a.sampler.steps_done == b.sampler.steps_done
    for x, y in zip([*a.batch_generators, *a.noise_generators], [*b.batch_generators, *b.noise_generators],
                    strict=True):  # fmt: skip
        assert torch.equal(x.get_state(), y.get_state())


def test_both_architectures_in_one_call_per_step_equal_each_group_stepped_alone(tmp_path: Path) -> None:
    torch.set_num_threads(1)
    together = ChainGroups(_groups(tmp_path / "together"))
    alone = _groups(tmp_path / "alone")
    assert len(together.lockstep.runner.advance.gradients) == 2  # one callable steps both weight shapes
    assert all(group.sampler.mass.rank > 0 for group in alone)  # the low-rank mass products inside the step
    for step in range(3):
        if step == 2:  # new masses (new constants, momenta redrawn) in the middle: each group its own
            together.refresh_masses(step)
            for group in alone:
                group.refresh_masses(step)
        losses = together.step()
        assert torch.equal(losses, torch.cat([group.step().double() for group in alone]))
    for chains in (together, *alone):  # what the loop reads after a step: kinetic sums, energies
        chains.read_kinetic()
        chains.record_energy(3)
        chains.park()
    for a, b in zip(together.groups, alone, strict=True):
        _assert_same_chains(a, b)
        for x, y in zip(a.records, b.records, strict=True):
            assert x["mass_guard"] == y["mass_guard"] and x["energies"] == y["energies"]
            assert torch.equal(x["directional_sum"], y["directional_sum"])
    transformer, ffn = together.groups
    assert transformer.sampler.w.shape[1] != ffn.sampler.w.shape[1]  # two weight shapes, really


def test_the_combined_in_place_step_is_what_one_graph_records(tmp_path: Path) -> None:
    """``StepRunner._in_place`` over both groups is what the one CUDA graph records: on the CPU it runs as is,
    writes into each group's own buffers (static: never replaced) and gives the eager combined step's bits."""
    torch.set_num_threads(1)
    eager, in_place = ChainGroups(_groups(tmp_path / "eager")), ChainGroups(_groups(tmp_path / "in-place"))
    samplers = [group.sampler for group in in_place.groups]
    states: list[ChainState] = [sampler.state for sampler in samplers]
    buffers = [[tensor.data_ptr() for tensor in state.tensors()] for state in states]
    runner = in_place.lockstep.runner
    for _ in range(2):
        eager.step()
        inputs = [sampler.draw_inputs() for sampler in samplers]
        runner._in_place(states, [sampler.constants for sampler in samplers], [noise for noise, _ in inputs],
                         [index for _, index in inputs])  # fmt: skip
    assert [[tensor.data_ptr() for tensor in state.tensors()] for state in states] == buffers
    for a, b in zip(eager.groups, in_place.groups, strict=True):
        for x, y in zip(a.sampler.state.tensors(), b.sampler.state.tensors(), strict=True):
            assert torch.equal(x, y)


def _relative(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).double().norm() / b.double().norm())


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("capture", ["graph", pytest.param("compile", marks=pytest.mark.slow)])  # compiling: minutes
def test_both_architectures_in_one_captured_step_on_cuda_equal_the_eager_step(tmp_path: Path, capture: str) -> None:
    """One graph for both weight shapes: captured once, one replay per step of the whole experiment, captured
    again when a group's masses change; its numbers (and the compiled callable's) the eager combined step's."""
    eager = ChainGroups(_groups(tmp_path / "eager", device="cuda"))
    captured = ChainGroups(_groups(tmp_path / capture, device="cuda", capture=capture))
    runner = captured.lockstep.runner
    assert runner.capture == capture and eager.lockstep.runner.capture == "none"
    for step in range(4):
        if step == 2:
            eager.refresh_masses(step)
            captured.refresh_masses(step)
        assert _relative(captured.step(), eager.step()) < 1e-6
    torch.cuda.synchronize()
    if capture == "graph":
        assert runner.captures == 2 and runner.replays == 4  # steps 0-1 one graph, 2-3 the recaptured one
    assert all(group.sampler.runner.captures == 0 for group in captured.groups)  # no graph per group
    for a, b in zip(captured.groups, eager.groups, strict=True):
        for x, y in zip(a.sampler.state.tensors()[:5], b.sampler.state.tensors()[:5], strict=True):
            assert _relative(x, y) < 1e-6
        assert torch.equal(a.sampler.bad_steps, b.sampler.bad_steps)


def test_a_combined_run_stopped_mid_way_resumes_to_the_uninterrupted_result(tmp_path: Path) -> None:
    """Stopped at its first checkpoint (where the masses are refreshed next), the combined run continues from
    each chain's checkpoint file to the records of the run that was never stopped."""
    torch.set_num_threads(1)
    settings = SamplingSettings(steps=4, batch_size=16, r=0.3, variance_batches=2, variance_every=2, snapshot_every=2,
                                weights_every=2, checkpoint_every=2, energy_every=1, burn_in_fraction=0.25)  # fmt: skip

    def tasks(folder: str) -> list[TemperatureTask]:
        return [*tiny_tasks(tmp_path / folder, settings, (1e-4,)),
                *tiny_tasks(tmp_path / folder, settings, (1e-4,), kind="feedforward")]  # fmt: skip

    whole = run_chain_groups(tasks("whole"))

    def stop(done: int, total: int) -> None:
        if done == 2:
            raise Cancelled("stopped at step 2")

    with pytest.raises(Cancelled):
        run_chain_groups(tasks("killed"), stop)
    resumed = run_chain_groups(tasks("killed"))
    for a, b in zip(resumed, whole, strict=True):
        _assert_identical(a, b)
        assert [guard["step"] for guard in a["mass_guard"]] == [0, 2]


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
