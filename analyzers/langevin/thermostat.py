"""Is the sampler at its temperature along every direction? Correlated minibatch noise, per direction.

The paper's mass rule (Appendix D) sets M_i from each weight's own minibatch-gradient variance sigma_i^2
so that the minibatch noise supplies a share r of the thermostat noise M T m1^2. That treats the noise
as independent across weights. It is not: minibatch noise is low rank. In the scaled velocity
x = M^-1/2 p the per-step noise the minibatch injects has covariance C = c1^2 dt^2 M^-1/2 Sigma M^-1/2,
which the per-weight rule assumes to be r T m1^2 I. Along a unit direction u the stationary kinetic
temperature is then (friction m1^2 removes what is injected)

    T_u = T (1 - r) + u^T C u / m1^2 = T (1 - r + r A_u),    A_u = u^T C u / (r T m1^2),

(the bound without the loss's curvature, which spreads part of the excess to other directions),
A_u the *amplification*: how many times the per-weight model underestimates the noise along u
(1,297, 1,168 and 1,044 along the top three directions of the `small` preset's one-block d=64 transformer
at its ES weights, exactly; 578 of its 44,245 directions are above 6). Hence:

* ``mass_matrix.noise_spectrum`` gives the directions of C and their A_u exactly, from the per-sequence
  gradients (independent of T: A_u = u^T D^-1/2 Sigma D^-1/2 u with D = diag(sigma^2));
* :func:`safe_share` caps r so that the worst direction is off by at most ``tolerance``:
  r (A_max - 1) <= tolerance. The cap depends on the weights, not on T, so every temperature of a run
  started from the same weights uses the same r (no silent change between temperatures). The other way out
  is a mass matrix with those directions in it (``mass_matrix.noise_covariance_mass``): no cap on r;
* :func:`directional_kinetic_temperature` measures T_u from the momenta, for the report.

Whether the sampler is at T at all is read from every coordinate pooled (equipartition,
:func:`thermostat_report`): its analytic standard error at a correct thermostat (:func:`equipartition_stderr`)
is 0.0035 T at the `small` preset, where one direction's is 0.73 T, so the pooled check resolves a 20 %
deviation both ways at every preset that answers a claim, and the directions only veto a grossly hot one.

What a sampling run records for that report lives here too: :func:`noise_setup` (the share r to use and the
leading noise directions, once per start), :func:`accumulate_kinetic` / :func:`kinetic_values_batch` (the
kinetic temperature along those directions every ``KINETIC_EVERY`` steps after burn-in, one chain or R at
once), :func:`close_kinetic_block` (one block per snapshot) and :func:`thermostat_report` (is every direction
at T?).
"""

from __future__ import annotations

import math
from typing import Any, Protocol

import numpy as np
import torch

from analyzers.langevin.mass_matrix import MassMatrix, NoiseSpectrum


def safe_share(r: float, amplification: float, tolerance: float = 0.05) -> float:
    """The minibatch noise share to use: ``r``, lowered so that r (A_max - 1) <= ``tolerance``."""
    if amplification <= 1.0:
        return r
    return min(r, tolerance / (amplification - 1.0))


def directional_kinetic_temperature(
    momenta: torch.Tensor, masses: torch.Tensor, directions: torch.Tensor
) -> torch.Tensor:
    """Mean (u . M^-1/2 p)^2 over momenta samples (S, n) for each unit direction u (k, n): (k,)
    temperatures."""
    scaled = momenta.double() / masses.double().sqrt()
    return ((scaled @ directions.double().T) ** 2).mean(0)


class ThermostatSettings(Protocol):
    """What the report reads of a run's settings (``chain_tasks.SamplingSettings``)."""

    noise: str
    r: float
    m1: float
    mass_rule: str


#: The kinetic temperature may be off by this share of T (relative), all coordinates pooled or one direction
TOLERANCE = 0.2
# the minibatch share may run a direction this much hot (r capped, or absorbed by the mass)
SHARE_TOLERANCE = 0.05
# the kinetic temperature is read every this many steps: (u . S^-1 p)^2 decorrelates over tau ~ 200 steps
# (thermostat_report), so the skipped steps add almost no information, and a reading costs two O(k n) passes,
# about a seventh of a step at k ~ 600 directions
KINETIC_EVERY = 10
#: Blocks (snapshots) from which their own spread is read with an autocorrelation correction (ArviZ's ESS);
#: below it the spread of fewer, longer blocks is read as batch means
ESS_BLOCKS = 8


def noise_setup(spectrum: NoiseSpectrum, settings: ThermostatSettings) -> dict[str, Any]:
    """The minibatch share r to use and the leading minibatch-noise directions, from the starting weights'
    spectrum.

    The noise's covariance is exact (the per-sequence gradients, mass_matrix.noise_spectrum) and does not
    depend on T, so every temperature started from the same weights uses the same r (no silent change between
    temperatures). With per-weight masses its worst direction caps r so that it stays within 5% of T
    (thermostat.py); the noise-covariance masses absorb every direction that would run hotter, so r stays as
    asked. Full-batch gradients keep the cap of their mass rule: the directions where the per-weight rule
    underestimates the noise are the loss's stiff directions (the noise covariance is close to the Fisher
    matrix), where light masses make the integrator itself heat (measured on the small preset's transformer:
    uncapped r = 0.05 with full batches and per-weight masses ran 10-80 T along them)."""
    top = spectrum.eigenvalues[:3]
    if settings.mass_rule == "noise-covariance":
        r_used = settings.r
        # these directions carry their share in the mass
        absorbed = settings.r * (top - 1.0) > SHARE_TOLERANCE
        seen = torch.where(absorbed, torch.ones_like(top), top)
    else:
        r_used, seen = safe_share(settings.r, float(top[0]), tolerance=SHARE_TOLERANCE), top
    return {
        "noise": settings.noise,
        "noise_amplification": seen.tolist(),
        "noise_amplification_per_weight": top.tolist(),
        "noise_directions": spectrum.directions[:3].float(),
        "r_used": r_used,
        # the equipartition estimate's analytic error counts them (thermostat_report)
        "coordinates": int(spectrum.directions.shape[1]),
        "kinetic_blocks": [],
        "kinetic_block_steps": [],
    }


def accumulate_kinetic(records: dict[str, Any], momenta: torch.Tensor, mass: MassMatrix) -> None:
    """Add one step's p^T M^-1 p / n and (u . S^-1 p)^2 along each noise direction u (S S^T = M)."""
    scaled = mass.inverse_sqrt(momenta)  # (n,)
    along = scaled @ records["noise_directions"].to(scaled).T  # (k,)
    values = torch.cat([(scaled * scaled).mean()[None], along * along])  # (1 + k,)
    previous = records.get("directional_sum")
    records["directional_sum"] = values if previous is None else previous + values
    records["directional_count"] = records.get("directional_count", 0) + 1


def kinetic_values_batch(momenta: torch.Tensor, mass: MassMatrix, directions: torch.Tensor) -> torch.Tensor:
    """:func:`accumulate_kinetic`'s values for R chains at once (a few kernels, not a few per chain): p^T M^-1
    p / n and (u . S^-1 p)^2 along each chain's directions u (R, k, n), from momenta (R, n): (R, 1 + k)."""
    scaled = mass.inverse_sqrt(momenta)  # (R, n)
    along = torch.einsum("rn,rkn->rk", scaled, directions)  # (R, k)
    return torch.cat([(scaled * scaled).mean(-1, keepdim=True), along * along], dim=-1)  # (R, 1 + k)


def close_kinetic_block(records: dict[str, Any]) -> None:
    """End the current block of kinetic-temperature sums (one per snapshot): its mean and its length."""
    count = records.get("directional_count", 0)
    if count:
        records["kinetic_blocks"].append((records.pop("directional_sum") / count).cpu().tolist())
        # steps covered: the error counts steps / tau
        records["kinetic_block_steps"].append(count * KINETIC_EVERY)
        records["directional_count"] = 0


def squared_momentum_correlation(m1: float) -> float:
    """Correlation of a free momentum's square p_i^2 from one step to the next: the thermostat keeps c1 =
    sqrt(1 - m1^2) of p per step, so p^2 keeps c1^2 = 1 - m1^2 (an integrated autocorrelation time of (2 -
    m1^2) / m1^2 steps, 199 at the authors' m1 = 0.1). A force does not shorten it much: for an underdamped
    harmonic mode p^2 = E (1 + cos 2 omega t), whose slow part (the energy, half the variance) relaxes at half
    p^2's rate, which gives the same integrated time."""
    return 1.0 - m1 * m1


def mean_variance_factor(readings: int, every: int, m1: float) -> float:
    """Var(mean of R readings) / Var(one reading) for R readings of p_i^2, ``every`` steps apart, whose lag-k
    correlation is rho^k (rho = squared_momentum_correlation^every): sum over i, j of rho^|i - j| / R^2,
    exactly (R (1 + rho) / (1 - rho) - 2 rho (1 - rho^R) / (1 - rho)^2) / R^2."""
    if readings < 1:
        return math.nan
    rho = squared_momentum_correlation(m1) ** every
    if rho >= 1.0:
        return 1.0
    pairs = readings * (1 + rho) / (1 - rho) - 2 * rho * (1 - rho**readings) / (1 - rho) ** 2
    return float(pairs / readings**2)


def equipartition_stderr(readings: int, every: int, m1: float, freedom: int) -> float:
    """Analytic standard error of T_kin / T, the mean over ``freedom`` degrees of freedom of x_i^2 / T (x =
    S^-1 p), averaged over R readings ``every`` steps apart, at a correct thermostat: at each reading sum
    x_i^2 / T is chi-square with ``freedom`` degrees of freedom (x is isotropic Gaussian on the tangent
    space), so one reading's T_kin / T has variance 2 / freedom, and R correlated readings sqrt(2
    mean_variance_factor / freedom). One direction is ``freedom`` = 1."""
    return math.sqrt(2.0 * mean_variance_factor(readings, every, m1) / max(freedom, 1))


def block_stderr(blocks: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Standard error of each column's weighted mean over its blocks (B, c), from their own spread: with at
    least ``ESS_BLOCKS`` blocks the sd over ArviZ's bulk ESS of the block means (their autocorrelation
    counted); with fewer, batch means (each block one draw). NaN with fewer than two blocks."""
    from analyzers.langevin.convergence import arviz_diagnostics

    count = len(blocks)
    if count < 2:
        return np.full(blocks.shape[1], math.nan)
    mean = weights @ blocks / weights.sum()
    batch = np.sqrt(
        (weights[:, None] ** 2 * (blocks - mean) ** 2).sum(0) / weights.sum() ** 2 * count / (count - 1)
    )
    if count < ESS_BLOCKS:
        return np.asarray(batch, dtype=float)
    spread = blocks.std(axis=0, ddof=1)
    ess = np.array([arviz_diagnostics(column[None, :])[1] for column in blocks.T])
    corrected = spread / np.sqrt(np.where(np.isfinite(ess) & (ess > 0), ess, 1.0))
    return np.where(np.isfinite(corrected), corrected, batch)


def interval_state(mean: float, error: float, units: int) -> tuple[str, list[float]]:
    """'at T', 'off T' or 'unresolved' for a kinetic temperature / T of ``mean`` with standard error ``error``
    over ``units`` blocks: its interval (the t quantile for the units, ``analyzers.base.interval_quantile``)
    inside [1 - TOLERANCE, 1 + TOLERANCE] is at T, wholly outside it off T, else unresolved (and so is
    anything on fewer than ``MIN_UNITS`` blocks)."""
    from analyzers.base import interval_quantile

    quantile = interval_quantile(units)
    if quantile is None or not math.isfinite(error) or not math.isfinite(mean):
        return "unresolved", [math.nan, math.nan]
    low, high = mean - quantile * error, mean + quantile * error
    if low > 1.0 + TOLERANCE or high < 1.0 - TOLERANCE:
        return "off T", [low, high]
    if low >= 1.0 - TOLERANCE and high <= 1.0 + TOLERANCE:
        return "at T", [low, high]
    return "unresolved", [low, high]


def direction_state(mean: float, error: float, units: int, directions: int) -> tuple[str, list[float]]:
    """A single direction's kinetic temperature / T (``mean``, relative standard error ``error`` at T) read as
    a scaled chi-square: ``mean`` ~ T_u / T chi2(nu) / nu with nu = 2 / error^2 effective degrees of freedom
    (Satterthwaite: one direction has one degree of freedom per reading, nu ~ 2 N / tau), so T_u / T lies in
    [mean nu / q_high, mean nu / q_low] (the chi-square's quantiles; two-sided 1 - 0.05 / ``directions``,
    Bonferroni over the directions read). A right-skewed variable with a few effective draws needs this: a
    symmetric t interval flags a correct direction one run in twenty at `small`. Off T when the interval lies
    wholly outside [1 - TOLERANCE, 1 + TOLERANCE]; at T when inside; unresolved below ``MIN_UNITS`` blocks."""
    from scipy import stats

    from analyzers.base import CONFIDENCE, MIN_UNITS

    if units < MIN_UNITS or not (math.isfinite(mean) and math.isfinite(error) and error > 0):
        return "unresolved", [math.nan, math.nan]
    freedom = 2.0 / error**2
    alpha = (1.0 - CONFIDENCE) / max(directions, 1)
    low = mean * freedom / float(stats.chi2.ppf(1.0 - alpha / 2, freedom))
    high = mean * freedom / float(stats.chi2.ppf(alpha / 2, freedom))
    if low > 1.0 + TOLERANCE or high < 1.0 - TOLERANCE:
        return "off T", [low, high]
    if low >= 1.0 - TOLERANCE and high <= 1.0 + TOLERANCE:
        return "at T", [low, high]
    return "unresolved", [low, high]


def thermostat_report(
    records: dict[str, Any], temperature: float, settings: ThermostatSettings
) -> dict[str, Any]:
    """Is the sampler at T? The kinetic temperature of every coordinate pooled (equipartition), and along the
    leading minibatch-noise directions, after burn-in, each with its standard error and interval.

    The decision rests on the pooled estimate: T_kin = sum_i x_i^2 / dof (x = S^-1 p, S S^T = M; dof = n - 1
    on the constrained sampler's sphere, where p is M-orthogonal to w), read every ``KINETIC_EVERY`` steps and
    averaged per block (one per snapshot). Its standard error is the larger of the analytic one at a correct
    thermostat (``equipartition_stderr``: relative sqrt(2 tau / (dof N)) for N steps, 0.0035 at ``small``) and
    the blocks' own spread (``block_stderr``), over the blocks as units (t quantile). ``state``: at T when the
    pooled interval lies within 20 % of T and no direction is resolved off; off T when either is resolved off;
    else unresolved.

    The directions' readings (``kinetic_temperature_directions``) can only veto: one direction has one degree
    of freedom, SE sqrt(2 tau / N) at T (the error under 'this direction is at T', which a hot direction's own
    spread would hide), read as a chi-square (``direction_state``), which resolves 20 % only past ~100,000
    steps after burn-in (the `paper` preset); at
    `small` they flag a direction only when it is grossly hot (a 16 T or 80 T direction, which per-weight
    masses with a large r give) and otherwise read unresolved without holding the state back."""
    report: dict[str, Any] = {
        "noise": records.get("noise", settings.noise),
        "r_requested": settings.r,
        "r_used": records.get("r_used"),
        "effective_r": min(
            (g["effective_r"] for g in records.get("mass_guard", [])), default=records.get("r_used")
        ),
        "noise_amplification": records.get("noise_amplification", []),
        "tolerance": TOLERANCE,
    }
    blocks = np.asarray(records.get("kinetic_blocks") or [], dtype=float) / temperature  # (blocks, 1 + k)
    if not len(blocks):
        return {**report, "state": "unresolved", "thermalized_every_direction": None, "resolved": False}
    weights = np.asarray(records["kinetic_block_steps"], dtype=float)
    steps = int(weights.sum())
    readings = max(steps // KINETIC_EVERY, 1)
    coordinates = records.get("coordinates")
    constrained = getattr(settings, "sampler", "pseudo-langevin") == "pseudo-langevin"
    freedom = int(coordinates) - (1 if constrained else 0) if coordinates else None
    mean = weights @ blocks / weights.sum()  # (1 + k,)
    if freedom and coordinates:  # the mean over n coordinates of x_i^2 reads dof / n of T on the sphere
        mean[0] *= int(coordinates) / freedom
    empirical = block_stderr(blocks, weights)
    analytic = np.asarray(
        [equipartition_stderr(readings, KINETIC_EVERY, settings.m1, freedom) if freedom else math.nan]
        + [equipartition_stderr(readings, KINETIC_EVERY, settings.m1, 1)] * (blocks.shape[1] - 1))
    # the pooled estimate: the larger of the two (NaN only where both are); a direction: its error at T, a
    # test of 'this direction is at T' (a hot direction's own spread grows with it, which would hide it)
    error = np.concatenate([np.fmax(analytic[:1], empirical[:1]), analytic[1:]])
    units = len(blocks)
    pooled_state, pooled_interval = interval_state(float(mean[0]), float(error[0]), units)
    directions = [direction_state(float(m), float(e), units, len(mean) - 1)
                  for m, e in zip(mean[1:], error[1:], strict=True)]  # fmt: skip
    direction_off = any(state == "off T" for state, _ in directions)
    state = "off T" if pooled_state == "off T" or direction_off else pooled_state
    offset = np.abs(mean[1:] - 1.0)
    predicted = [
        1.0 - report["effective_r"] + report["effective_r"] * a for a in report["noise_amplification"]
    ]
    return {
        **report,
        "predicted_directions_over_t": predicted if report["noise"] == "minibatch" else [1.0] * len(offset),
        "kinetic_temperature_mean": float(mean[0]) * temperature,
        "kinetic_temperature_mean_standard_error": float(error[0]) * temperature,
        "kinetic_temperature_mean_analytic_standard_error": float(analytic[0]) * temperature,
        "kinetic_temperature_mean_interval_over_t": pooled_interval,
        "kinetic_degrees_of_freedom": freedom,
        "kinetic_units": units,
        "kinetic_steps": steps,
        "pooled_state": pooled_state,
        "kinetic_temperature_directions": [float(x) * temperature for x in mean[1:]],
        "kinetic_temperature_standard_error": [float(x) * temperature for x in error[1:]],
        "direction_states": [state for state, _ in directions],
        "kinetic_temperature_direction_intervals_over_t": [interval for _, interval in directions],
        "worst_direction_offset": float(offset.max()) if len(offset) else math.nan,
        "state": state,
        "resolved": state != "unresolved",
        "thermalized_every_direction": not direction_off,
    }
