"""'Equilibrated' needs R-hat below its limit AND a minimum bulk ESS, read from ArviZ (issue 35): ArviZ checked
against the project's own R-hat and ESS on the same draws, the gate through ``chain_diagnostics`` on real records,
and the check's power both ways by simulation (synthetic chains with a known answer), the rates the README
table states."""

from __future__ import annotations

import math

import numpy as np
import pytest

from analyzers.langevin.convergence import (
    MIN_BULK_ESS,
    PASSING_TAUS,
    RHAT_LIMIT,
    arviz_diagnostics,
    chain_diagnostics,
    chain_state,
    effective_sample_size,
    split_rhat,
    steps_needed,
)
from tests.helpers.chains import ar1


@pytest.mark.parametrize(("phi", "draws", "chains"), [(0.0, 48, 2), (0.5, 600, 2), (0.9, 2000, 2), (0.3, 100, 4)])
def test_arviz_agrees_with_the_projects_own_rhat_and_ess_on_the_same_draws(phi: float, draws: int,
                                                                           chains: int) -> None:
    x = ar1(np.random.default_rng(7), phi, draws, chains)
    rhat, ess = arviz_diagnostics(x)
    assert rhat == pytest.approx(split_rhat(x), rel=1e-9)  # the same rank-normalized split-R-hat formula
    # bulk ESS is of the rank-normalized draws, the project's of the raw ones: the same for these Gaussian chains
    assert ess == pytest.approx(effective_sample_size(x), rel=0.1 if draws < 500 else 0.05)


def test_rhat_below_its_limit_on_too_few_effective_draws_is_not_equilibrated() -> None:
    rng = np.random.default_rng(3)
    slow = ar1(rng, 0.95, 48)  # both chains in one state, but about 3 effective draws of 96
    rhat, ess = arviz_diagnostics(slow)
    state, _ = chain_state(slow, (min(rhat, 1.0), ess))  # even where R-hat happens to pass
    assert ess < MIN_BULK_ESS and state == "unresolved"
    fast = ar1(rng, 0.0, 200)
    assert chain_state(fast)[0] == "equilibrated"


def record(chain: np.ndarray) -> dict[str, object]:
    return {"steps": 2 * len(chain), "energies": [(len(chain) + i + 1, float(v)) for i, v in enumerate(chain)],
            "seconds": 1.0, "name": "transformer@es"}


def test_chain_diagnostics_gate_on_real_records_reads_arviz_and_states_the_minimum() -> None:
    rng = np.random.default_rng(5)
    good = chain_diagnostics([record(c) for c in ar1(rng, 0.0, 100)], burn_in_fraction=0.5)
    assert good["converged"] and good["state"] == "equilibrated" and good["min_bulk_ess"] == MIN_BULK_ESS
    slow = chain_diagnostics([record(c) for c in ar1(rng, 0.97, 100)], burn_in_fraction=0.5)
    assert not slow["converged"] and slow["ess"] < MIN_BULK_ESS
    apart = chain_diagnostics([record(c) for c in ar1(rng, 0.0, 100, shift=3.0)], burn_in_fraction=0.5)
    assert not apart["converged"] and apart["rhat"] > RHAT_LIMIT


def rate(rng: np.random.Generator, trials: int, **chains: float) -> float:
    """Share of ``trials`` synthetic runs the check calls equilibrated."""
    phi, draws, shift = chains.get("phi", 0.0), int(chains["draws"]), chains.get("shift", 0.0)
    return sum(chain_state(ar1(rng, phi, draws, shift=shift))[0] == "equilibrated" for _ in range(trials)) / trials


def test_power_of_equilibrated_both_ways_at_fifty_draws_per_chain() -> None:
    """Measured here (400 trials each, README table): independent draws pass 0.99 at 2 x 50 draws; two basins 2 sd
    apart and chains with ~5 effective draws fail >= 0.95. At 2 x 25 draws (the `small` preset's old energy_every
    30) independent draws pass only 0.91: `small` needs 50 draws per chain (energy_every 15) to have this power."""
    rng = np.random.default_rng(11)
    assert rate(rng, 200, draws=50) >= 0.95
    assert 1 - rate(rng, 200, draws=50, shift=2.0) >= 0.95
    assert 1 - rate(rng, 200, draws=50, phi=0.95) >= 0.95


def test_small_preset_gives_equilibrated_its_fifty_draws_per_chain() -> None:
    # the power above holds at 50 draws per chain: the preset must give them after burn-in
    from analyzers.registry import get

    params = get("langevin.sweep").params_for(scale="small")
    draws = int(params.sampling_steps * (1 - params.burn_in_fraction)) // params.energy_every
    assert draws >= 50, draws


def test_steps_needed_reads_the_autocorrelation_of_the_draws_and_that_length_has_the_power() -> None:
    """AR(1) chains with phi 0.8 have an integrated autocorrelation time of (1 + phi) / (1 - phi) = 9 draws, one
    draw a step here: PASSING_TAUS of them after a burn-in as long is 2 x 35 x 9 = 630 steps; and chains that
    long pass the gate >= 0.95 of the time, so the advice the check gives a relaxing run is enough."""
    rng = np.random.default_rng(11)
    diagnostics = chain_diagnostics([record(c) for c in ar1(rng, 0.8, 4000)], burn_in_fraction=0.5)
    assert diagnostics["steps_needed"] == pytest.approx(2 * PASSING_TAUS * 9, rel=0.2)
    assert rate(rng, 200, phi=0.8, draws=PASSING_TAUS * 9) >= 0.95
    assert steps_needed(math.nan, 2, 100, 0.5) is None and steps_needed(3.0, 2, None, 0.5) is None


def test_a_run_that_did_not_equilibrate_is_told_how_long_its_chains_should_be() -> None:
    from analyzers.langevin.checks import temperature_conditions

    relaxing = {"temperature": 1e-4, "equilibrated": False, "loss_drift": 0.1,
                "convergence": {"state": "relaxing", "rhat": 2.66, "ess": 2.4, "draws_per_chain": 190,
                                "steps_needed": 166250}}
    (equilibrated, _) = temperature_conditions("transformer", relaxing)
    assert equilibrated.passed is False and "it needs chains of at least ~166,000 steps" in equilibrated.detail
    settled = {**relaxing, "equilibrated": True,
               "convergence": {**relaxing["convergence"], "state": "equilibrated"}}  # type: ignore[dict-item]
    assert "it needs chains" not in temperature_conditions("transformer", settled)[0].detail
