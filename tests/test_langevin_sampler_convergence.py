"""Convergence diagnostics against known answers: an AR(1) process has ESS = n (1 - rho) / (1 + rho); chains
with different means have the split-R-hat that the between- and within-chain variances give."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from analyzers.langevin.convergence import chain_diagnostics, chain_state, effective_sample_size, split_rhat
from analyzers.langevin.sampler_health import plot_sampler_diagnostics


def _ar1(rho: float, chains: int, draws: int, seed: int) -> np.ndarray:
    """Stationary AR(1) chains x_t = rho x_t-1 + sqrt(1 - rho^2) e_t (unit variance), (chains, draws)."""
    rng = np.random.default_rng(seed)
    noise = rng.standard_normal((chains, draws)) * math.sqrt(1 - rho**2)
    x = np.empty((chains, draws))
    x[:, 0] = rng.standard_normal(chains)
    for t in range(1, draws):  # a recursion: no vectorized form without a filter library
        x[:, t] = rho * x[:, t - 1] + noise[:, t]
    return x


@pytest.mark.parametrize("rho", [0.0, 0.5, 0.9, -0.3])
def test_convergence_ess_of_ar1_matches_the_exact_value(rho: float) -> None:
    chains, draws = 4, 20000
    exact = chains * draws * (1 - rho) / (1 + rho)
    estimates = [effective_sample_size(_ar1(rho, chains, draws, seed)) for seed in range(3)]
    # Geyer's truncation caps anticorrelated chains' ESS near (not above) its theoretical value of ~2.5 n
    assert abs(np.median(estimates) / exact - 1) < 0.08, (estimates, exact)


def test_convergence_ess_of_one_chain_and_of_white_noise() -> None:
    one = _ar1(0.8, 1, 40000, seed=5)
    assert effective_sample_size(one[0]) == pytest.approx(40000 * 0.2 / 1.8, rel=0.12)
    assert math.isnan(effective_sample_size(np.ones((2, 10))))  # a constant chain carries no information
    assert math.isnan(effective_sample_size([[1.0, 2.0, 3.0]]))  # too short


def test_convergence_split_rhat_classic_equals_the_variance_ratio_of_shifted_chains() -> None:
    rng = np.random.default_rng(0)
    draws, shift = 50000, 0.5
    chains = rng.standard_normal((2, draws)) + np.array([[-shift], [shift]])
    # four halves with means -d, -d, d, d: B/N = sample variance of the means = 4 d^2 / 3, W = 1
    expected = math.sqrt((draws // 2 - 1) / (draws // 2) + 4 * shift**2 / 3)
    assert split_rhat(chains, rank_normalize=False) == pytest.approx(expected, rel=0.01)
    assert split_rhat(chains) > 1.1  # rank-normalized: the chains visibly disagree
    same = rng.standard_normal((2, draws))
    assert split_rhat(same) < 1.01 and split_rhat(same, rank_normalize=False) < 1.01


def test_convergence_rank_normalized_rhat_sees_what_the_classic_one_misses() -> None:
    rng = np.random.default_rng(1)
    # heavy tails: one chain is Cauchy; the classic R-hat is dominated by a few outliers
    same_location = np.stack([rng.standard_cauchy(20000), rng.standard_cauchy(20000)])
    assert split_rhat(same_location) < 1.01
    assert split_rhat(np.exp(same_location / 50)) == pytest.approx(split_rhat(same_location / 50), abs=1e-9)
    # same mean, different scale: the folded (tail) R-hat notices it
    scales = np.stack([rng.standard_normal(20000), 3 * rng.standard_normal(20000)])
    assert split_rhat(scales) > 1.1
    # a drift within one chain is disagreement between its halves
    drifting = np.linspace(0, 3, 2000)[None, :] + rng.standard_normal((1, 2000))
    assert split_rhat(drifting) > 1.1
    assert math.isnan(split_rhat([[1.0, 2.0, 3.0]]))


def test_convergence_chain_diagnostics_over_two_starts() -> None:
    def record(name: str, offset: float, seed: int) -> dict[str, object]:
        values = _ar1(0.5, 1, 2000, seed)[0] * 0.01 + offset
        return {"name": name, "steps": 4000, "seconds": 2.0,
                "energies": [(2000 + step, float(v)) for step, v in enumerate(values, start=1)]}  # fmt: skip

    agree = chain_diagnostics([record("t@ES", 1.0, 1), record("t@OT", 1.0, 2)], burn_in_fraction=0.5)
    assert agree["converged"] and agree["chains"] == 2 and agree["starts"] == ["ES", "OT"]
    assert agree["ess"] == pytest.approx(4000 / 3, rel=0.3) and agree["ess_per_second"] == agree["ess"] / 4
    apart = chain_diagnostics([record("t@ES", 1.0, 1), record("t@OT", 1.05, 2)], burn_in_fraction=0.5)
    assert not apart["converged"] and apart["rhat"] > 1.5  # rank-normalized: bounded for separated chains


def test_convergence_chain_state_tells_metastable_from_relaxing() -> None:
    stationary = _ar1(0.5, 2, 2000, 3)  # (2, 2000): two chains of one AR(1) process
    assert chain_state(stationary)[0] == "equilibrated"
    # two flat chains at different levels: each agrees with itself, they disagree with each other
    state, alone = chain_state(stationary + np.array([[0.0], [5.0]]))
    assert state == "metastable" and max(alone) < 1.1
    # one chain still descending: not a steady state, whatever the other does
    descending = stationary + np.stack([np.zeros(2000), np.linspace(5.0, 0.0, 2000)])
    state, alone = chain_state(descending)
    assert state == "relaxing" and alone[0] < 1.1 < alone[1]
    assert chain_state([[1.0, 2.0], [1.0, 2.0]])[0] == "unresolved"  # too few draws to call anything


def test_sampler_report_figure_of_a_run_too_short_for_diagnostics(tmp_path: Path) -> None:
    # a run with fewer than four draws after burn-in has no R-hat, ESS or kinetic temperature: the figure must still
    # be written (a log axis with nothing on it used to fail the run after all its sampling)
    empty = {"thermostat": {}, "convergence": {"rhat": math.nan, "ess": math.nan, "chains": 2}}
    plot_sampler_diagnostics(tmp_path / "empty.png", [1e-4, 1e-3], {"transformer": [empty, empty]})
    assert (tmp_path / "empty.png").stat().st_size > 0
