"""Designed sequences: E(s) = sum_{i<j} C_ij B(s_i, s_j), sampled by adaptive simulated tempering with
composition-preserving swap moves; the local energy change touches only the two swapped sites."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

AMINO_ACIDS = "ARNDCQEGHILKMFPSTWYV"  # order of the authors' code; mask id is 20
MASK_ID = 20


def encode(sequence: str) -> np.ndarray:
    """Letters to integer ids (L,)."""
    return np.array([AMINO_ACIDS.index(a) for a in sequence], dtype=np.int64)


def interaction_matrix(seed: int, size: int = 20) -> np.ndarray:
    """Symmetric (size, size) matrix with N(0, 1) entries, reproducible from ``seed``."""
    upper = np.triu(np.random.default_rng(seed).standard_normal((size, size)))
    return upper + np.triu(upper, 1).T


def energy(contacts: np.ndarray, interactions: np.ndarray, sequences: np.ndarray) -> np.ndarray:
    """E for a batch: sequences (n, L) -> (n,). Symmetric C, so sum over all pairs / 2."""
    pair = interactions[sequences[:, :, None], sequences[:, None, :]]  # (n, L, L)
    return 0.5 * (pair * contacts[None]).sum(axis=(1, 2))


def swap_delta(contacts: np.ndarray, interactions: np.ndarray, seq: np.ndarray, i: int, j: int) -> float:
    """Energy change from swapping positions i and j of seq (L,), using only contacts of i and j."""
    a, b = seq[i], seq[j]
    if a == b:
        return 0.0
    others_i = contacts[i].copy()
    others_j = contacts[j].copy()
    others_i[j] = others_j[i] = False  # the i-j contact itself keeps B(a, b) = B(b, a)
    row_a, row_b = interactions[a][seq], interactions[b][seq]  # (L,)
    return float(((row_b - row_a) * others_i).sum() + ((row_a - row_b) * others_j).sum())


@dataclass
class TemperingReport:
    """Samples and diagnostics of one simulated-tempering run."""

    sequences: np.ndarray  # (n, L) from the lowest temperature
    temperatures: list[float]
    acceptance_swap: list[float]  # per temperature
    acceptance_temperature: float
    mean_energy: list[float]  # per temperature
    mean_pairwise_identity: float
    visits: list[int] = field(default_factory=list)


def simulated_tempering(
    contacts: np.ndarray,
    interactions: np.ndarray,
    composition: np.ndarray,
    num_samples: int,
    temperatures: list[float],
    sweeps_between: int = 2,
    burn_in_sweeps: int = 50,
    seed: int = 0,
    adapt_rate: float = 2.0,
) -> TemperingReport:
    """Adaptive simulated tempering (Wang-Landau-like weights on the temperature index).

    One sweep is L swap attempts then one temperature move. Samples are taken when at the lowest
    temperature, at least ``sweeps_between`` sweeps after the previous sample (decorrelation).
    """
    rng = np.random.default_rng(seed)
    length = len(composition)
    seq = rng.permutation(composition)
    current = float(energy(contacts, interactions, seq[None])[0])
    betas = 1.0 / np.asarray(temperatures, dtype=float)  # ladder, high to low T expected in any order
    lowest = int(np.argmax(betas))
    weights = np.zeros(len(betas))  # log g_k
    level = 0
    accepted = np.zeros(len(betas))
    tried = np.zeros(len(betas))
    energy_sum = np.zeros(len(betas))
    visits = np.zeros(len(betas), dtype=int)
    temp_acc = temp_try = 0
    samples: list[np.ndarray] = []
    since = 0
    sweep = 0
    max_sweeps = burn_in_sweeps + 200 * num_samples * max(1, sweeps_between) * len(betas)
    while len(samples) < num_samples and sweep < max_sweeps:
        pairs = rng.integers(0, length, size=(length, 2))
        uniforms = rng.random(length)
        for (i, j), u in zip(pairs, uniforms, strict=True):
            delta = swap_delta(contacts, interactions, seq, int(i), int(j))
            tried[level] += 1
            if delta <= 0 or u < np.exp(-betas[level] * delta):
                seq[i], seq[j] = seq[j], seq[i]
                current += delta
                accepted[level] += 1
        proposal = level + rng.choice((-1, 1))
        if 0 <= proposal < len(betas):
            temp_try += 1
            log_ratio = -(betas[proposal] - betas[level]) * current + weights[proposal] - weights[level]
            if np.log(rng.random()) < log_ratio:
                level = proposal
                temp_acc += 1
        weights[level] -= adapt_rate  # push away from over-visited temperatures
        visits[level] += 1
        energy_sum[level] += current
        sweep += 1
        since += 1
        if sweep > burn_in_sweeps and level == lowest and since >= sweeps_between:
            samples.append(seq.copy())
            since = 0
    if not samples:
        raise RuntimeError("simulated tempering never reached the lowest temperature; widen the sweep budget")
    sequences = np.stack(samples)
    return TemperingReport(
        sequences=sequences,
        temperatures=list(map(float, temperatures)),
        acceptance_swap=(accepted / np.maximum(tried, 1)).tolist(),
        acceptance_temperature=temp_acc / max(temp_try, 1),
        mean_energy=(energy_sum / np.maximum(visits, 1)).tolist(),
        mean_pairwise_identity=mean_pairwise_identity(sequences),
        visits=visits.tolist(),
    )


def mean_pairwise_identity(sequences: np.ndarray) -> float:
    """Mean fraction of identical sites over distinct pairs of (n, L) sequences."""
    n = len(sequences)
    if n < 2:
        return 1.0
    one_hot = np.eye(20)[sequences].reshape(n, -1)  # (n, L*20)
    same = one_hot @ one_hot.T / sequences.shape[1]  # (n, n)
    return float((same.sum() - np.trace(same)) / (n * (n - 1)))
