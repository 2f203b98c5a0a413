"""The thermostat check has power both ways (issue 35): at the `small` preset it says 'at T' to a correct thermostat
and 'off T' to one 30 % off its temperature or with the wrong friction, at least 95 % of the time each. Known
answers in closed form: exact Ornstein-Uhlenbeck momenta (``analyzers.langevin.power``), and the real sampler on a
harmonic potential, whose momenta are N(0, M T) exactly."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from analyzers.langevin import power
from analyzers.langevin.chain_tasks import SamplingSettings
from analyzers.langevin.dynamics import PseudoLangevin, SamplerConfig
from analyzers.langevin.thermostat import (
    KINETIC_EVERY,
    accumulate_kinetic,
    close_kinetic_block,
    equipartition_stderr,
    mean_variance_factor,
    thermostat_report,
)

SMALL = next(size for size in power.SIZES if size.name == "small")


def test_mean_variance_factor_equals_the_double_sum() -> None:
    for readings, every, m1 in ((1, 10, 0.1), (7, 10, 0.1), (40, 3, 0.3)):
        rho = (1 - m1**2) ** every
        brute = sum(rho ** abs(i - j) for i in range(readings) for j in range(readings)) / readings**2
        assert mean_variance_factor(readings, every, m1) == pytest.approx(brute, rel=1e-12)


def test_equipartition_stderr_matches_the_spread_of_exact_ou_runs() -> None:
    # 400 exact runs of `small`'s size (75 readings of 44,244 degrees of freedom): their means' sd against the
    # analytic standard error, an independent computation (a sd of 400 draws is within ~7 % at 2 sd)
    readings = SMALL.steps // KINETIC_EVERY
    runs = power.ou_sum_readings(np.random.default_rng(3), 400, readings, SMALL.coordinates - 1,
                                 math.sqrt(1 - SMALL.m1**2), 1.0, KINETIC_EVERY)  # fmt: skip
    analytic = equipartition_stderr(readings, KINETIC_EVERY, SMALL.m1, SMALL.coordinates - 1)
    assert runs.mean(1).std(ddof=1) == pytest.approx(analytic, rel=0.1)
    assert abs(runs.mean() - 1.0) < 3 * analytic / math.sqrt(400)  # unbiased
    assert 2 * analytic < 0.01  # 2 SE 0.7 % of T, against the 146 % of the three directions' old rule


@pytest.mark.parametrize("thermostat", power.thermostats(SMALL.m1), ids=lambda t: t.name)
def test_thermostat_check_has_power_both_ways_at_small(thermostat: power.Thermostat) -> None:
    rates = power.state_rates(SMALL, thermostat, trials=200, seed=1)
    if thermostat.name == "correct":
        assert rates["at T"] >= 0.95, rates
    elif thermostat.name == "3 directions at 3 T":  # the pooled estimate cannot see it; the directions, sometimes
        assert rates["off T"] > 0.2, rates
    else:
        assert rates["off T"] >= 0.95, rates


def test_thermostat_check_at_smoke_only_exercises_the_code() -> None:
    smoke = next(size for size in power.SIZES if size.name == "smoke")
    for thermostat in power.thermostats(smoke.m1)[:2]:
        assert power.state_rates(smoke, thermostat, trials=20)["unresolved"] == 1.0  # 2 blocks: under 3 units


@pytest.mark.slow
def test_thermostat_check_has_power_both_ways_at_paper() -> None:
    paper = next(size for size in power.SIZES if size.name == "paper")
    for thermostat in power.thermostats(paper.m1):
        rates = power.state_rates(paper, thermostat, trials=40, seed=2)
        assert rates["at T" if thermostat.name == "correct" else "off T"] >= 0.95, (thermostat.name, rates)


def _harmonic_report(run_temperature: float, friction_m1: float | None = None, seed: int = 0) -> dict[str, object]:
    """The real sampler (``PseudoLangevin``, unconstrained) on a harmonic potential of 4,000 coordinates for
    `small`'s 1,500 steps, read as a run reads it (``accumulate_kinetic`` every ``KINETIC_EVERY`` steps after
    burn-in, a block per 150-step snapshot), and reported against T = 1. ``run_temperature``: the temperature
    its noise is set for; ``friction_m1``: the friction it applies instead of the m1 its noise is set for."""
    n, temperature = 4000, 1.0
    generator = torch.Generator().manual_seed(seed)
    stiffness = torch.linspace(1.0, 4.0, n, dtype=torch.float64)
    masses = 50.0 * stiffness  # omega dt = 0.14: a small discretization error

    def grad_fn(w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return 0.5 * (stiffness * w * w).sum(), stiffness * w

    start = torch.randn(n, dtype=torch.float64, generator=generator) / stiffness.sqrt()  # stationary positions
    sampler = PseudoLangevin(start, grad_fn, masses, SamplerConfig(run_temperature, m1=0.1, constrained=False),
                             generator=generator)  # fmt: skip
    if friction_m1 is not None:
        sampler.c1 = math.sqrt(1 - friction_m1**2)  # the noise stays set for m1 = 0.1
    directions = torch.linalg.qr(torch.randn(n, 3, dtype=torch.float64, generator=generator))[0].T
    records: dict[str, object] = {"noise_directions": directions, "kinetic_blocks": [], "kinetic_block_steps": [],
                                  "coordinates": n, "noise": "full_batch", "r_used": 0.0,
                                  "noise_amplification": [1.0, 1.0, 1.0]}  # fmt: skip
    for step in range(1, 1501):
        sampler.step()
        if step > 750 and step % KINETIC_EVERY == 0:
            accumulate_kinetic(records, sampler.p, sampler.mass)
        if step > 750 and step % 150 == 0:
            close_kinetic_block(records)
    return thermostat_report(records, temperature, SamplingSettings(m1=0.1, sampler="unconstrained"))


@pytest.mark.slow  # five runs of 1,500 real steps: ~40 s on a shared core
def test_thermostat_check_of_the_real_sampler_on_a_harmonic_potential() -> None:
    right = _harmonic_report(1.0)
    assert right["state"] == "at T", right
    assert right["kinetic_temperature_mean"] == pytest.approx(1.0, abs=0.02)
    # its standard error is the analytic one (4,000 coordinates: 2 SE 3 % of T), within the blocks' own spread
    assert float(right["kinetic_temperature_mean_standard_error"]) < 0.02  # type: ignore[arg-type]
    for wrong in (_harmonic_report(1.3), _harmonic_report(0.7), _harmonic_report(1.0, friction_m1=0.1 / math.sqrt(1.3)),
                  _harmonic_report(1.0, friction_m1=0.1 / math.sqrt(0.7))):  # fmt: skip
        assert wrong["state"] == "off T", wrong
