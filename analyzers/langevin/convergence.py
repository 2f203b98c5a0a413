"""Convergence diagnostics of the sampling chains: split-R-hat and the effective sample size (numpy).

* :func:`split_rhat` is the rank-normalized split-R-hat of Vehtari, Gelman, Simpson, Carpenter and Buerkner
  (Bayesian Analysis 16, 2021, Sect. 4.2 and 4.3): every chain is cut in half (so a drift within one chain
  counts as disagreement), the pooled draws are replaced by their normal scores, and the classic R-hat of
  Gelman and Rubin, sqrt(var+ / W), is taken on them and on the folded draws |x - median|; the larger of the
  two (bulk and tail) is returned. ``rank_normalize=False`` gives the classic split-R-hat of the raw draws.
* :func:`effective_sample_size` is the multi-chain ESS of Stan and ArviZ (Vehtari et al. 2021, Eq. 10-11)
  with Geyer's initial monotone sequence estimator (Geyer 1992): autocorrelations rho_t from the chains'
  FFT autocovariances and var+, summed in pairs P_k = rho_2k + rho_2k+1 while P_k > 0, each pair capped by
  the one before; ESS = M N / (-1 + 2 sum_k P_k).

For the Langevin runs the chains are the full training loss after burn-in at one temperature, one chain
per starting point (ES and OT weights): R-hat >= 1.1 says the chains from the two starts have not met.
:func:`chain_state` says why not, with the same R-hat rule applied to each chain alone (its two halves):

* ``equilibrated``: the chains from every start agree (split-R-hat over all of them below 1.1);
* ``metastable``: each chain is stationary on its own, but the starts sit in different states (a glassy
  landscape on the run's time scale: measured at the `small` preset, chains relaxed onto two nearby minima of
  the ES sphere stay 0.03 apart in loss at T = 1e-5 while each is flat within 1e-3);
* ``relaxing``: at least one chain still drifts (its own halves disagree): it has not reached any steady
  state.

* ``unresolved``: too few draws for R-hat to say anything (fewer than ``MIN_DRAWS_PER_CHAIN`` per chain or
  ``MIN_DRAWS`` in all), or R-hat below its limit on fewer than ``MIN_BULK_ESS`` effective draws (bulk ESS).

The gate reads ArviZ's rank-normalized split-R-hat and bulk ESS (``arviz_diagnostics``); :func:`split_rhat`
and :func:`effective_sample_size` are this module's own implementations of the same formulas, kept for each
chain's own R-hat and checked against ArviZ on the same draws (tests/test_langevin_equilibrated.py).

Only ``equilibrated`` is an equilibrium average; the others say which test a longer run must pass.

Why those minimums: split-R-hat of perfectly stationary, independent draws still exceeds 1.1 by chance when
the halves are short (measured here, 400 trials each: two chains of 4 draws 63 % of the time, of 12 draws 20
%, of 24 draws 5 %; one chain of 24 draws 15 %, of 48 draws 3 %). Vehtari et al. (2021, Sect. 4-5) ask for a
bulk-ESS above 100 per chain before R-hat and the ESS are trusted for final results; these minimums are far
below that and only keep the 1.1 flag from firing on noise (a false alarm of 5 % or less). Below them R-hat
and ESS are reported, but the state is ``unresolved`` and nothing is vouched for.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

RHAT_LIMIT = 1.1  # Vehtari et al. 2021 recommend 1.01 for final results; issue 12 asks for 1.1
#: Fewest effective draws (bulk ESS over all chains) an equilibrium average may rest on: at 50 a mean's Monte
#: Carlo error is 0.14 of the loss sd and a specific heat's (a variance's) relative error sqrt(2 / 49) = 0.2,
#: so a heat-capacity peak twice its neighbours is told apart; 10 effective draws of 48 (issue 35) are not
#: enough.
MIN_BULK_ESS = 25
MIN_DRAWS_PER_CHAIN = 24  # see the module docstring: R-hat's false alarm on stationary chains <= 5 %
MIN_DRAWS = 48  # in all chains together
#: Steps after burn-in, in the loss's integrated autocorrelation times, at which the gate passes stationary
#: chains from two starts >= 0.97 of the time (analyzers/langevin/README.md, the pass rates on AR(1) chains by
#: tau_loss): what a chain that did not equilibrate needs, from the autocorrelation its draws show.
PASSING_TAUS = 35


def _as_chains(chains: Sequence[Sequence[float]] | np.ndarray) -> np.ndarray:
    array = np.asarray(chains, dtype=np.float64)
    if array.ndim == 1:
        array = array[None, :]
    if array.ndim != 2:
        raise ValueError(f"chains must be (chains, draws), got shape {array.shape}")
    return array


def _split(chains: np.ndarray) -> np.ndarray:
    """(M, N) -> (2M, N // 2): each chain's first and second half (the middle draw dropped for odd N)."""
    half = chains.shape[1] // 2
    return np.concatenate([chains[:, :half], chains[:, chains.shape[1] - half :]], axis=0)


def _normal_scores(chains: np.ndarray) -> np.ndarray:
    """Pooled ranks (ties averaged) mapped to z = Phi^-1((r - 3/8) / (S + 1/4)) (Blom's offset)."""
    flat = chains.ravel()
    order = flat.argsort(kind="mergesort")
    ranks = np.empty(len(flat))
    ranks[order] = np.arange(1, len(flat) + 1)
    _, inverse, counts = np.unique(flat, return_inverse=True, return_counts=True)
    ranks = (np.bincount(inverse, weights=ranks) / counts)[inverse]  # average rank of tied values
    probabilities = torch.from_numpy((ranks - 0.375) / (len(flat) + 0.25))
    return torch.special.ndtri(probabilities).numpy().reshape(chains.shape)  # Phi^-1, vectorized


def _rhat(chains: np.ndarray) -> float:
    """Classic sqrt(var+ / W) of (M, N) chains, var+ = (N-1)/N W + B/N."""
    draws = chains.shape[1]
    within = chains.var(axis=1, ddof=1).mean()
    between_over_n = chains.mean(axis=1).var(ddof=1)
    if not within > 0:
        return math.inf if between_over_n > 0 else math.nan
    return float(math.sqrt(((draws - 1) / draws * within + between_over_n) / within))


def split_rhat(chains: Sequence[Sequence[float]] | np.ndarray, rank_normalize: bool = True) -> float:
    """Split-R-hat of (chains, draws); NaN when a chain has fewer than 4 draws (halves of one draw say
    nothing)."""
    array = _as_chains(chains)
    if array.shape[1] < 4:
        return math.nan
    halves = _split(array)
    if not rank_normalize:
        return _rhat(halves)
    folded = np.abs(array - np.median(array))
    return max(_rhat(_normal_scores(halves)), _rhat(_normal_scores(_split(folded))))


def _autocovariance(chain: np.ndarray) -> np.ndarray:
    """Biased autocovariance (divided by N) at lags 0..N-1, by FFT with zero padding (no wrap-around)."""
    draws = len(chain)
    centered = chain - chain.mean()
    size = 1 << (2 * draws - 1).bit_length()
    spectrum = np.fft.rfft(centered, size)
    return np.fft.irfft(spectrum * np.conj(spectrum), size)[:draws] / draws


def effective_sample_size(chains: Sequence[Sequence[float]] | np.ndarray) -> float:
    """ESS of (chains, draws) by Geyer's initial monotone sequence; NaN below 4 draws or for constant
    chains."""
    array = _as_chains(chains)
    num_chains, draws = array.shape
    if draws < 4:
        return math.nan
    autocovariance = np.stack([_autocovariance(chain) for chain in array])  # (M, N)
    mean_variance = autocovariance[:, 0].mean() * draws / (draws - 1)  # W
    var_plus = mean_variance * (draws - 1) / draws
    if num_chains > 1:
        var_plus += array.mean(axis=1).var(ddof=1)
    if not var_plus > 0:
        return math.nan
    rho = 1.0 - (mean_variance - autocovariance.mean(axis=0)) / var_plus  # (N,), rho[0] = 1
    pairs = rho[: 2 * (draws // 2)].reshape(-1, 2).sum(axis=1)  # P_k = rho_2k + rho_2k+1
    positive = np.flatnonzero(pairs <= 0)
    pairs = pairs[: positive[0]] if len(positive) else pairs  # initial positive sequence
    pairs = np.minimum.accumulate(pairs)  # initial monotone sequence
    tau = max(-1.0 + 2.0 * float(pairs.sum()), 1.0 / math.log10(num_chains * draws + 10))  # ArviZ's floor
    return num_chains * draws / tau


def loss_chain(record: dict[str, Any], burn_in_fraction: float) -> np.ndarray:
    """The full training loss (the energy) after burn-in of one temperature's sampling records."""
    energies = sorted(record.get("energies") or [(s["step"], s["train_loss"]) for s in record["snapshots"]])
    return np.array(
        [loss for step, loss in energies if step > burn_in_fraction * record["steps"]], dtype=float
    )


CHAIN_STATES = ("equilibrated", "metastable", "relaxing", "unresolved")


def enough_draws(chains: Sequence[Sequence[float]] | np.ndarray) -> bool:
    """Whether (chains, draws) has the draws R-hat needs to resolve anything (module docstring)."""
    array = _as_chains(chains)
    return array.shape[1] >= MIN_DRAWS_PER_CHAIN and array.size >= MIN_DRAWS


def arviz_diagnostics(chains: Sequence[Sequence[float]] | np.ndarray) -> tuple[float, float]:
    """``(rank-normalized split-R-hat, bulk ESS)`` of (chains, draws) by ArviZ (``arviz.rhat``,
    ``arviz.ess``): the numbers the equilibration gate reads. ArviZ's R-hat needs two chains: one chain's
    R-hat (of its two halves) is ``split_rhat``, the same formula (tests check it equals ArviZ's on the same
    draws)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ArviZ's notice of its coming refactor, on import
        import arviz

        array = _as_chains(chains)
        if array.shape[1] < 4:
            return math.nan, math.nan
        ess = float(arviz.ess(array, method="bulk"))
        if array.shape[0] == 1:
            return split_rhat(array), ess
        return float(arviz.rhat(array, method="rank")), ess


def chain_state(chains: Sequence[Sequence[float]] | np.ndarray,
                diagnostics: tuple[float, float] | None = None) -> tuple[str, list[float]]:
    """The state of (chains, draws) (see the module docstring) and each chain's own split-R-hat;
    ``diagnostics``: ``arviz_diagnostics`` of the chains when already computed. Equilibrated needs R-hat below
    ``RHAT_LIMIT`` and a bulk ESS of at least ``MIN_BULK_ESS``; R-hat below its limit on fewer effective draws
    is unresolved."""
    array = _as_chains(chains)
    alone = [split_rhat(chain) for chain in array]
    if not enough_draws(array):
        return "unresolved", alone
    rhat, ess = diagnostics if diagnostics is not None else arviz_diagnostics(array)
    if rhat < RHAT_LIMIT:
        return ("equilibrated" if ess >= MIN_BULK_ESS else "unresolved"), alone
    if all(rhat < RHAT_LIMIT for rhat in alone):  # NaN (too few draws) is not stationary
        return "metastable", alone
    return "relaxing", alone


def chain_diagnostics(records: Sequence[dict[str, Any]], burn_in_fraction: float) -> dict[str, Any]:
    """R-hat and ESS of the training loss over the chains of one temperature (one record per start).

    With one start there is only the split of that chain (a drift check, not two starts agreeing): the
    result says how many chains it compared."""
    chains = [loss_chain(record, burn_in_fraction) for record in records]
    draws = min(len(chain) for chain in chains)
    stacked = np.stack([chain[:draws] for chain in chains])  # (starts, draws)
    seconds = sum(float(record.get("seconds", 0.0)) for record in records)
    rhat, ess = arviz_diagnostics(stacked)
    state, alone = chain_state(stacked, (rhat, ess))
    resolved = enough_draws(stacked)
    return {
        "rhat": rhat,
        "rhat_classic": split_rhat(stacked, rank_normalize=False),
        "ess": ess,
        "ess_per_second": ess / seconds if seconds > 0 and math.isfinite(ess) else math.nan,
        "chains": len(chains),
        "draws_per_chain": draws,
        "resolved": resolved,  # enough draws for R-hat and the ESS to say anything
        "converged": state == "equilibrated",  # R-hat below its limit on enough draws and effective draws
        "min_bulk_ess": MIN_BULK_ESS,
        "state": state,
        "rhat_by_chain": alone,
        "mean_loss_by_chain": [float(chain.mean()) for chain in stacked],
        "starts": [str(record.get("name", "")).partition("@")[2] for record in records],
        "steps_needed": steps_needed(ess, len(chains), records[0].get("steps"), burn_in_fraction),
    }


def steps_needed(ess: float, chains: int, steps: int | None, burn_in_fraction: float) -> int | None:
    """The chain length at which the gate would have its power, from the autocorrelation the draws after
    burn-in show (``chains`` x the steps after burn-in over the bulk ESS): ``PASSING_TAUS`` such times after
    burn-in.
    A lower bound while the chains still drift (their bulk ESS then sits near its floor); None without the
    numbers."""
    if not steps or not math.isfinite(ess) or ess <= 0:
        return None
    after = steps * (1 - burn_in_fraction)
    tau = chains * after / ess
    return math.ceil(PASSING_TAUS * tau / (1 - burn_in_fraction))
