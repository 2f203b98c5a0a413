"""How often the thermostat check says yes to a correct sampler and no to a wrong one, at each preset's size,
from chains whose answer is known in closed form (issue 35's power rule: >= 0.95 both ways).

A free momentum under the pseudo-Langevin thermostat is an exact Ornstein-Uhlenbeck chain: each step keeps a
share ``a`` of p and adds Gaussian noise, p' = a p + b xi, so over k steps p_{t+k} = a^k p_t + sqrt(v (1 -
a^2k)) xi with stationary variance v = b^2 / (1 - a^2). A correct thermostat has a = c1 = sqrt(1 - m1^2) and v
= T (unit mass, x = S^-1 p). The sum of squares S of d such coordinates is then exactly a scaled noncentral
chi-square chain: S_{t+k} / (v (1 - a^2k)) ~ chi2'(d, a^2k S_t / (v (1 - a^2k))). So the pooled reading of
44,245 or 168,853 coordinates costs one draw per reading, and the whole check
(``thermostat.thermostat_report``) runs on the readings a run of that preset would record (every
``KINETIC_EVERY`` steps after burn-in, one block per snapshot, three single directions beside the pooled sum).

Known answers: ``correct`` (v = T, a = c1); ``hot`` / ``cold`` (the noise set for 1.3 T or 0.7 T);
``friction`` (the noise set for m1 but the friction applied with m1' = m1 / sqrt(1.3), so v = (m1 / m1')^2 T =
1.3 T; and m1 / sqrt(0.7): 0.7 T); and the average at T with the three leading noise directions at 3 T or 16 T
(what the pooled estimate cannot see: only the directions' veto can). ``python -m analyzers.langevin.power``
prints the table the README shows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from analyzers.langevin.thermostat import KINETIC_EVERY, thermostat_report


@dataclass(frozen=True)
class Size:
    """What a preset's run gives the thermostat check: coordinates (parameters), steps after burn-in, steps
    per snapshot (one block each) and the friction m1."""

    name: str
    coordinates: int
    steps: int
    snapshot_every: int
    m1: float = 0.1


@dataclass(frozen=True)
class Thermostat:
    """A sampler's thermostat: the stationary variance over T and the friction it applies (m1)."""

    name: str
    variance_over_t: float
    m1_applied: float | None = None  # None: the m1 the noise was set for
    direction_over_t: float | None = None  # the leading noise directions' temperature (None: the pooled one)


def thermostats(m1: float = 0.1) -> list[Thermostat]:
    """The known answers: one correct thermostat and four 30 % off (noise or friction)."""
    return [
        Thermostat("correct", 1.0),
        Thermostat("noise for 1.3 T", 1.3),
        Thermostat("noise for 0.7 T", 0.7),
        Thermostat("friction m1 / sqrt(1.3)", 1.3, m1 / math.sqrt(1.3)),
        Thermostat("friction m1 / sqrt(0.7)", 0.7, m1 / math.sqrt(0.7)),
        # the average at T, three noise directions hot (per-weight masses with a large share r: 16 T at r =
        # 0.01 on `small`'s transformer, thermostat.py)
        Thermostat("3 directions at 3 T", 1.0, direction_over_t=3.0),
        Thermostat("3 directions at 16 T", 1.0, direction_over_t=16.0),
    ]


def ou_sum_readings(
    rng: np.random.Generator,
    trials: int,
    readings: int,
    freedom: int,
    keep: float,
    variance: float,
    every: int,
) -> np.ndarray:
    """(trials, readings) of sum_i x_i^2 / freedom over ``freedom`` exact OU coordinates started stationary,
    read every ``every`` steps, each step keeping ``keep`` of x (stationary variance ``variance``)."""
    retained = keep ** (2 * every)
    scale = variance * (1.0 - retained)
    total = variance * rng.chisquare(freedom, size=trials)
    out = np.empty((trials, readings))
    for index in range(readings):
        total = scale * rng.noncentral_chisquare(freedom, retained * total / scale)
        out[:, index] = total / freedom
    return out


def simulated_records(rng: np.random.Generator, size: Size, thermostat: Thermostat, trials: int,
                      temperature: float = 1e-4, directions: int = 3) -> list[dict[str, Any]]:
    """``trials`` runs' kinetic records as ``chains.py`` leaves them (blocks of the pooled mean and of
    ``directions`` single directions, the steps each covers, the coordinates), from exact OU momenta on the
    sphere (``coordinates - 1`` degrees of freedom)."""
    applied = thermostat.m1_applied or size.m1
    keep = math.sqrt(1.0 - applied**2)
    variance = thermostat.variance_over_t * temperature
    readings = size.steps // KINETIC_EVERY
    per_block = size.snapshot_every // KINETIC_EVERY
    freedom = size.coordinates - 1
    pooled = ou_sum_readings(rng, trials, readings, freedom, keep, variance, KINETIC_EVERY)
    # the mean over n coordinates of x_i^2, as a run records it (dof / n of the sum's mean on the sphere)
    pooled *= freedom / size.coordinates
    along = (thermostat.direction_over_t or thermostat.variance_over_t) * temperature
    single = [
        ou_sum_readings(rng, trials, readings, 1, keep, along, KINETIC_EVERY) for _ in range(directions)
    ]
    columns = np.stack([pooled, *single], axis=-1)  # (trials, readings, 1 + k)
    blocks = readings // per_block
    means = columns[:, : blocks * per_block].reshape(trials, blocks, per_block, -1).mean(2)
    return [{"kinetic_blocks": means[t].tolist(), "kinetic_block_steps": [per_block * KINETIC_EVERY] * blocks,
             "coordinates": size.coordinates, "r_used": 0.01, "noise": "minibatch",
             "noise_amplification": [1.0] * directions} for t in range(trials)]  # fmt: skip


@dataclass
class _Settings:
    m1: float
    noise: str = "minibatch"
    r: float = 0.01
    mass_rule: str = "noise-covariance"
    sampler: str = "pseudo-langevin"


def state_rates(size: Size, thermostat: Thermostat, trials: int, seed: int = 0) -> dict[str, Any]:
    """Share of ``trials`` simulated runs the check reads at T, off T and unresolved, with the pooled standard
    error (relative) it reported on average."""
    rng = np.random.default_rng(seed)
    temperature = 1e-4
    settings = _Settings(m1=size.m1)
    reports = [thermostat_report(r, temperature, settings)
               for r in simulated_records(rng, size, thermostat, trials, temperature)]  # fmt: skip
    states = [report["state"] for report in reports]
    return {
        "at T": states.count("at T") / trials,
        "off T": states.count("off T") / trials,
        "unresolved": states.count("unresolved") / trials,
        "stderr_over_t": float(np.mean([r["kinetic_temperature_mean_standard_error"] for r in reports]))
        / temperature,
        "blocks": reports[0]["kinetic_units"],
    }


#: The presets' sizes for the thermostat check (the transformer's parameters; the feed-forward net's are
#: close)
SIZES = [
    Size("smoke", 1_069, 20, 10),
    Size("small", 44_245, 750, 150),
    Size("paper", 168_853, 100_000, 1_000),
]


def power_table(trials: int = 200, sizes: list[Size] | None = None) -> list[dict[str, Any]]:
    """Each preset x known answer: the pass (at T) and fail (off T) rates."""
    rows = []
    for size in sizes or SIZES:
        for thermostat in thermostats(size.m1):
            rates = state_rates(size, thermostat, trials)
            rows.append({"preset": size.name, "thermostat": thermostat.name, **rates})
    return rows


if __name__ == "__main__":
    for row in power_table():
        print(
            f"{row['preset']:6} {row['thermostat']:26} blocks {row['blocks']:4}  SE/T "
            f"{row['stderr_over_t']:.4f}  "
            f"at T {row['at T']:.2f}  off T {row['off T']:.2f}  unresolved {row['unresolved']:.2f}"
        )
