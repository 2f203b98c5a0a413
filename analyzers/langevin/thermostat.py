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


DIRECTION_TOLERANCE = 0.2  # a direction whose kinetic temperature is off by more than this (relative) is hot
# the minibatch share may run a direction this much hot (r capped, or absorbed by the mass)
SHARE_TOLERANCE = 0.05
# the kinetic temperature is read every this many steps: (u . S^-1 p)^2 decorrelates over tau ~ 200 steps
# (thermostat_report), so the skipped steps add almost no information, and a reading costs two O(k n) passes,
# about a seventh of a step at k ~ 600 directions
KINETIC_EVERY = 10


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


def thermostat_report(
    records: dict[str, Any], temperature: float, settings: ThermostatSettings
) -> dict[str, Any]:
    """Kinetic temperature on average and along the leading minibatch-noise directions after burn-in, with
    standard errors, and whether every direction is at T.

    The standard error of a direction's temperature comes from the ESS of its block means when there are
    at least 8 blocks, else from the thermostat's own time scale: (u . M^-1/2 p)^2 decorrelates over
    tau = (2 - m1^2) / m1^2 steps (200 at the authors' m1 = 0.1), so N steps give N / tau samples of a
    chi-square with one degree of freedom, a relative error sqrt(2 tau / N). A direction fails when it is
    off by more than 20% beyond twice its standard error (a test that can say no: 16 T or 80 T fails
    at any length); ``resolved`` says whether twice the standard error is at most 20%, so that a
    direction 40% off could not pass (at the authors' m1 that takes ~40,000 steps after burn-in)."""
    from analyzers.langevin.convergence import effective_sample_size

    report: dict[str, Any] = {
        "noise": records.get("noise", settings.noise),
        "r_requested": settings.r,
        "r_used": records.get("r_used"),
        "effective_r": min(
            (g["effective_r"] for g in records.get("mass_guard", [])), default=records.get("r_used")
        ),
        "noise_amplification": records.get("noise_amplification", []),
    }
    blocks = np.asarray(records.get("kinetic_blocks") or [], dtype=float) / temperature  # (blocks, 1 + k)
    if not len(blocks):
        return {**report, "thermalized_every_direction": None, "resolved": False}
    weights = np.asarray(records["kinetic_block_steps"], dtype=float)
    mean = weights @ blocks / weights.sum()  # (1 + k,)
    steps = weights.sum()
    tau = (2.0 - settings.m1**2) / settings.m1**2
    error = np.full(blocks.shape[1], math.sqrt(2.0 * tau / steps))
    if len(blocks) >= 8:
        ess = np.array([effective_sample_size(column) for column in blocks.T])
        spread = blocks.std(axis=0, ddof=1) / np.sqrt(np.where(np.isfinite(ess), ess, 1.0))
        error = np.where(np.isfinite(spread), spread, error)
    offset = np.abs(mean[1:] - 1.0)
    predicted = [
        1.0 - report["effective_r"] + report["effective_r"] * a for a in report["noise_amplification"]
    ]
    return {
        **report,
        "predicted_directions_over_t": predicted if report["noise"] == "minibatch" else [1.0] * len(offset),
        "kinetic_temperature_mean": float(mean[0]) * temperature,
        "kinetic_temperature_directions": [float(x) * temperature for x in mean[1:]],
        "kinetic_temperature_standard_error": [float(x) * temperature for x in error[1:]],
        "worst_direction_offset": float(offset.max()),
        "resolved": bool((2.0 * error[1:] <= DIRECTION_TOLERANCE).all()),
        "thermalized_every_direction": bool((offset - 2.0 * error[1:] <= DIRECTION_TOLERANCE).all()),
    }
