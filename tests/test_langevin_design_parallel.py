"""The design on every core (issue 28): the tempering chains in shards of independent runs give, for a seed, the
same sequences and summary serially and in worker processes; one shard is ``simulated_tempering`` itself; the
shard plan splits chains and samples exactly, by the shard count alone."""

from __future__ import annotations

import json

import numpy as np
import pytest

from analyzers.langevin import design, structure
from analyzers.langevin.design_parallel import design_sequences, shard_plan


def _problem() -> dict[str, object]:
    contact_map = structure.shipped_contact_map()
    return {"contacts": contact_map.contacts, "interactions": design.interaction_matrix(0),
            "composition": design.encode(contact_map.sequence), "num_samples": 90, "burn_in_sweeps": 12,
            "sweeps_between": 3, "seed": 7, "num_chains": 40}  # fmt: skip


def test_shard_plan_splits_chains_and_samples_exactly() -> None:
    assert shard_plan(12000, 1400, 16) == [(88, 754)] * 8 + [(87, 746)] * 8  # the paper preset: 16 shards
    plan = shard_plan(100, 45, 5)
    assert [c for c, _ in plan] == [9, 9, 9, 9, 9] and sum(s for _, s in plan) == 100
    assert shard_plan(1700, 200, 8) == [(25, 213)] * 4 + [(25, 212)] * 4  # small's size in 8 shards
    assert shard_plan(1700, 200) == [(200, 1700)]  # one shard unless asked
    assert shard_plan(5, 40, 40) == [(8, 1)] * 5  # never a shard without a sample


def test_one_shard_is_simulated_tempering_itself() -> None:
    problem = _problem()
    alone = design.simulated_tempering(**problem)  # type: ignore[arg-type]
    sharded = design_sequences(**problem, shards=1, workers=1)  # type: ignore[arg-type]
    np.testing.assert_array_equal(sharded.sequences, alone.sequences)
    assert json.dumps(sharded.summary()) == json.dumps(alone.summary())  # NaN where a level had no visit


def test_shards_give_the_same_design_serially_and_on_every_core() -> None:
    problem = _problem()
    serial = design_sequences(**problem, shards=4, workers=1)  # type: ignore[arg-type]
    parallel = design_sequences(**problem, shards=4, workers=2)  # type: ignore[arg-type]
    np.testing.assert_array_equal(parallel.sequences, serial.sequences)
    np.testing.assert_array_equal(parallel.sample_chains, serial.sample_chains)
    assert json.dumps(parallel.summary()) == json.dumps(serial.summary())
    assert len(serial.sequences) == 90 and serial.num_chains == 40 and serial.sample_chains.max() < 40
    composition = np.sort(np.asarray(problem["composition"]))
    assert (np.sort(serial.sequences, axis=1) == composition).all()  # swaps keep the composition
    # four shards, four seeds: not four copies of one run
    assert not np.array_equal(serial.sequences[:20], serial.sequences[25:45])
    assert serial.mean_energy[-1] == pytest.approx(float(np.mean(serial.sample_energies)), rel=0.1)
