"""Designed sequences on a contact map (paper Sect. II.1): E(s) = sum_{i<j} C_ij B(s_i, s_j), sampled at low
temperature by adaptive simulated tempering with composition-preserving swap moves.

Many tempering chains advance together: every chain proposes one swap per tick and all Metropolis tests,
temperature moves and weight updates are array operations over the chains. Energy changes are local:
each chain keeps the fields H[k, x] = sum_m C_km B(x, s_m), so a swap's change is four look-ups and an
accepted swap updates only the rows of the two sites' contacts (O(contacts x 20)); ``swap_deltas``
computes the same change by gathering the two sites' contacts (the reference for tests). The tempering
weights are shared by all chains: thermodynamic integration of the running mean energies
(ln Z_{k+1} - ln Z_k ~ -(beta_{k+1} - beta_k) <E>) plus an occupancy feedback make the visits to the
ladder flat. Every ``sweeps_between`` sweeps, each chain then at the lowest temperature is sampled (a fixed
tick, blind to the chain's history, so the samples follow that temperature's Boltzmann distribution); the
report gives the identity of consecutive samples of one chain beside the identity between chains, so the
remaining correlation is visible, and checks the samples' mean energy against the level's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from analyzers.files import atomic_write_text
from analyzers.langevin.spec import DEFAULT_LADDER
from analyzers.langevin.structure import ACBP_SEQUENCE

__all__ = [
    "ACBP_SEQUENCE",
    "AMINO_ACIDS",
    "DEFAULT_LADDER",
    "MASK_ID",
    "TemperingReport",
    "encode",
    "decode",
    "energy",
    "interaction_matrix",
    "mean_pairwise_identity",
    "mean_site_entropy",
    "simulated_tempering",
    "swap_deltas",
    "write_fasta",
    "read_fasta",
    "read_sequences",
]

AMINO_ACIDS = "ARNDCQEGHILKMFPSTWYV"  # order of the authors' code; mask id is 20
MASK_ID = 20


def encode(sequence: str) -> np.ndarray:
    """One-letter amino acids to integer ids (L,), with a clear error on unknown letters."""
    unknown = sorted({a for a in sequence.upper() if a not in AMINO_ACIDS})
    if unknown:
        raise ValueError(f"sequence has letters outside the 20 amino acids {AMINO_ACIDS}: {''.join(unknown)}")
    lookup = {a: k for k, a in enumerate(AMINO_ACIDS)}
    return np.array([lookup[a] for a in sequence.upper()], dtype=np.int64)


def decode(ids: np.ndarray) -> str:
    """Integer ids (L,) to one-letter amino acids."""
    return "".join(AMINO_ACIDS[int(k)] for k in ids)


def interaction_matrix(seed: int, size: int = 20) -> np.ndarray:
    """Symmetric (size, size) matrix with N(0, 1) entries (diagonal included), reproducible from ``seed``."""
    upper = np.triu(np.random.default_rng(seed).standard_normal((size, size)))
    return upper + np.triu(upper, 1).T


def energy(contacts: np.ndarray, interactions: np.ndarray, sequences: np.ndarray) -> np.ndarray:
    """E for a batch of sequences (n, L) -> (n,): the full sum over contacts (the reference computation)."""
    upper = np.triu(contacts, 1)
    i, j = np.nonzero(upper)
    return interactions[sequences[:, i], sequences[:, j]].sum(axis=1)


def neighbor_lists(contacts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Padded contact lists: indices (L, K) and 0/1 weights (L, K), K the largest number of contacts."""
    symmetric = contacts | contacts.T
    np.fill_diagonal(symmetric, False)
    counts = symmetric.sum(axis=1)
    width = max(int(counts.max()), 1)
    index = np.zeros((len(contacts), width), dtype=np.int64)
    weight = np.zeros((len(contacts), width), dtype=np.float64)
    for site in range(len(contacts)):  # setup only, L iterations
        partners = np.nonzero(symmetric[site])[0]
        index[site, : len(partners)] = partners
        weight[site, : len(partners)] = 1.0
    return index, weight


def swap_deltas(
    sequences: np.ndarray,
    first: np.ndarray,
    second: np.ndarray,
    interactions: np.ndarray,
    neighbors: tuple[np.ndarray, np.ndarray],
    contacts: np.ndarray,
) -> np.ndarray:
    """Energy change of swapping sites ``first[c]`` and ``second[c]`` of each chain c, from their contacts
    only.

    sequences (C, L); first, second (C,). With a = s_i, b = s_j:
    dE = sum_k (C_ik - C_jk) (B(b, s_k) - B(a, s_k)) - C_ij (B(a, a) + B(b, b) - 2 B(a, b)),
    the last term removing the i-j pair itself, whose B(a, b) = B(b, a) does not change.
    """
    index, weight = neighbors
    chains, length = sequences.shape
    rows = np.arange(chains)
    flat = sequences.ravel()
    a = flat[rows * length + first]  # (C,)
    b = flat[rows * length + second]
    size = len(interactions)
    table = interactions.ravel()
    offsets = (rows * length)[:, None]
    near_first = flat[offsets + index[first]]  # (C, K) residues in contact with site i
    near_second = flat[offsets + index[second]]
    gain_first = table[b[:, None] * size + near_first] - table[a[:, None] * size + near_first]  # (C, K)
    gain_second = table[a[:, None] * size + near_second] - table[b[:, None] * size + near_second]
    delta = (gain_first * weight[first]).sum(axis=1) + (gain_second * weight[second]).sum(axis=1)
    pair = contacts[first, second]
    delta -= pair * (table[a * size + a] + table[b * size + b] - 2.0 * table[a * size + b])
    return delta


class LocalFields:
    """Per-chain local fields H[c, k, x] = sum_m C_km B(x, s_m): the energy of putting residue x at site k.

    A swap's energy change is then four look-ups, and an accepted swap updates only the rows of the
    contacts of the two swapped sites (O(contacts x 20)). Row L is a scratch row the padded contact
    lists point to, so vectorized updates never collide with a real site.
    """

    def __init__(self, sequences: np.ndarray, contacts: np.ndarray, interactions: np.ndarray) -> None:
        self.contacts = contacts
        self.interactions = interactions
        self.length = contacts.shape[0]
        index, weight = neighbor_lists(contacts)
        self.neighbor_index = np.where(weight > 0, index, self.length)  # (L, K), padding -> scratch row
        self.fields = self.compute(sequences)

    def compute(self, sequences: np.ndarray) -> np.ndarray:
        """Fields from scratch: (C, L + 1, 20)."""
        chains = len(sequences)
        # float32 halves the memory traffic of the scattered updates; refreshed from scratch periodically.
        fields = np.zeros((chains, self.length + 1, len(self.interactions)), dtype=np.float32)
        contact_float = self.contacts.astype(np.float64)
        for start in range(0, chains, 512):  # (512, L, 20) at a time
            block = self.interactions[sequences[start : start + 512]]  # (n, L, 20)
            fields[start : start + 512, : self.length] = np.matmul(contact_float, block)
        return fields

    def deltas(self, sequences: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
        """Energy change of swapping sites first[c] and second[c] of chain c. (C,)"""
        chains, length = sequences.shape
        flat_sequences = sequences.ravel()
        base = np.arange(chains) * length
        a, b = flat_sequences[base + first], flat_sequences[base + second]
        return self._deltas(a, b, first, second)

    def _deltas(self, a: np.ndarray, b: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
        size = self.interactions.shape[0]
        flat_fields = self.fields.reshape(-1)
        row_first = (np.arange(len(a)) * (self.length + 1) + first) * size
        row_second = (np.arange(len(a)) * (self.length + 1) + second) * size
        table = self.interactions.reshape(-1)
        delta = (
            flat_fields[row_first + b] - flat_fields[row_first + a]
            + flat_fields[row_second + a] - flat_fields[row_second + b]
        )  # fmt: skip
        pair = self.contacts.reshape(-1)[first * self.length + second]
        return delta - pair * (table[a * size + a] + table[b * size + b] - 2.0 * table[a * size + b])

    def apply(self, sequences: np.ndarray, chains: np.ndarray, first: np.ndarray, second: np.ndarray) -> None:
        """Swap the two sites in the given chains and update their fields (a != b assumed)."""
        a, b = sequences[chains, first], sequences[chains, second]
        change = (self.interactions[b] - self.interactions[a]).astype(np.float32)  # (n, 20): first: a -> b
        rows = chains[:, None]
        self.fields[rows, self.neighbor_index[first]] += change[:, None, :]
        self.fields[rows, self.neighbor_index[second]] -= change[:, None, :]
        sequences[chains, first], sequences[chains, second] = b, a

    def sweep(self, sequences: np.ndarray, energies: np.ndarray, firsts: np.ndarray, seconds: np.ndarray,
              thresholds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Attempts ``t = 0, 1, ...`` in turn: chain c swaps sites ``firsts[t, c]`` and ``seconds[t, c]`` when
        the energy change is below ``thresholds[t, c]``; ``sequences`` (C-contiguous), the fields and
        ``energies`` are updated in place. Returns the accepted and the tried (two different residues) swaps
        per chain. The same arithmetic as ``_deltas`` and ``apply``, bit for bit: what does not depend on the
        chains' state (flat indices, the pair term's factor, a swap's field change) is computed once per sweep
        or once, so each attempt costs a few array operations (the loop is bound by numpy's per-call cost: a
        chain's attempts are sequential)."""
        chains, length = sequences.shape
        size = self.interactions.shape[0]
        flat_sequences = sequences.reshape(-1)  # views: writes through them update the arrays
        flat_fields = self.fields.reshape(-1)
        field_rows = self.fields.reshape(-1, size)
        if not np.shares_memory(flat_sequences, sequences):
            raise ValueError("sequences must be C-contiguous")
        rows = np.arange(chains)
        sites = rows * length + np.stack([firsts, seconds], axis=1)  # (attempts, 2, C): where a and b sit
        field_rows_of = (rows * (length + 1) + np.stack([firsts, firsts, seconds, seconds], axis=1)) * size
        pair = self.contacts.reshape(-1)[firsts * length + seconds]  # (attempts, C) bool
        near = rows[:, None] * (length + 1)  # + neighbor_index[site]: that chain's field rows
        table = self.interactions
        diagonal = np.diagonal(table)
        # B(a,a)+B(b,b)-2B(a,b)
        pair_factor = ((diagonal[:, None] + diagonal[None, :]) - 2.0 * table).reshape(-1)
        # a -> b
        changes = (table[None, :, :] - table[:, None, :]).astype(np.float32).reshape(size * size, size)
        accepted = np.zeros((len(firsts), chains), dtype=bool)
        different = np.empty((len(firsts), chains), dtype=bool)
        order = np.array([1, 0, 0, 1])  # H[i, b], H[i, a], H[j, a], H[j, b]
        for attempt in range(len(firsts)):
            residues = flat_sequences.take(sites[attempt])  # (2, C): a, b
            a, b = residues
            looked_up = flat_fields.take(field_rows_of[attempt] + residues[order])  # (4, C)
            delta = looked_up[0] - looked_up[1] + looked_up[2] - looked_up[3]
            pair_index = a * size + b
            delta = delta - pair[attempt] * pair_factor.take(pair_index)
            np.not_equal(a, b, out=different[attempt])  # same residue: a no-op swap
            accept = np.less(delta, thresholds[attempt], out=accepted[attempt])
            accept &= different[attempt]
            moved = np.flatnonzero(accept)
            if moved.size:
                change = changes.take(pair_index[moved], axis=0)[:, None, :]  # (n, 1, 20)
                field_rows[near[moved] + self.neighbor_index[firsts[attempt, moved]]] += change
                field_rows[near[moved] + self.neighbor_index[seconds[attempt, moved]]] -= change
                flat_sequences[sites[attempt][:, moved]] = residues[::-1, moved]
                energies[moved] += delta[moved]
        return accepted.sum(axis=0).astype(np.float64), different.sum(axis=0).astype(np.float64)


@dataclass
class TemperingReport:
    """Samples and diagnostics of one simulated-tempering run."""

    sequences: np.ndarray  # (n, L) sampled at the lowest temperature
    temperatures: list[float]  # the ladder, high to low
    acceptance_swap: list[float]  # per temperature, swaps of two different residues only
    acceptance_temperature: float  # temperature moves accepted / proposed
    mean_energy: list[float]  # per temperature, after burn-in
    visits: list[int]  # chain-sweeps spent at each temperature after burn-in
    mean_pairwise_identity: float  # between sampled sequences
    site_entropy: float  # mean over sites of the entropy (nats) of the sampled residues
    consecutive_identity: float  # between consecutive samples of the same chain (decorrelation check)
    sample_energies: np.ndarray = field(default_factory=lambda: np.zeros(0))  # (n,)
    # (n,) chain of each
    sample_chains: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    num_chains: int = 0
    swaps_attempted: int = 0
    sweeps: int = 0
    log_weights: list[float] = field(default_factory=list)

    def sample_energy_check(self) -> dict[str, float | bool]:
        """Samples drawn at equilibrium have the lowest level's mean energy: their mean minus that mean, its
        standard error, and whether they agree within three standard errors; and whether the samples' mean
        energy is the same in the first and second half of the run (stationarity). Samples of one chain are
        correlated, so the errors are clustered by chain."""
        if len(self.sample_energies) < 2 or not self.mean_energy:
            return {}
        count = len(self.sample_energies)
        chains = self.sample_chains if len(self.sample_chains) == count else np.arange(count)
        difference = float(self.sample_energies.mean() - self.mean_energy[-1])
        error = _clustered_error(self.sample_energies, chains) + 1e-12
        # Stationarity: the first and second half of the samples (in time) have the same mean energy. A
        # glassy landscape keeps relaxing long after the weights settle (measured on 1UBI with a ladder
        # topped at T = 2: the lowest level's mean fell from -363.7 to -365.0 between 10,000 and 30,000
        # burn-in sweeps, and the identity rose from 0.39 to 0.57), which the level comparison cannot see.
        half = count // 2
        early, late = self.sample_energies[:half], self.sample_energies[half:]
        drift = float(late.mean() - early.mean())
        drift_error = float(
            np.hypot(_clustered_error(early, chains[:half]), _clustered_error(late, chains[half:]))
        )
        return {
            "sample_minus_level_energy": difference,
            "sample_energy_standard_error": error,
            "samples_equilibrated": bool(abs(difference) < 3.0 * error),
            "sample_energy_drift": drift,
            "sample_energy_drift_error": drift_error,
            "samples_stationary": bool(abs(drift) < 3.0 * drift_error + 1e-12),
        }

    def summary(self) -> dict[str, object]:
        """JSON-ready diagnostics (no sequences)."""
        return {
            "num_sequences": len(self.sequences),
            "temperatures": self.temperatures,
            "acceptance_swap": self.acceptance_swap,
            "acceptance_temperature": self.acceptance_temperature,
            "mean_energy": self.mean_energy,
            "visits": self.visits,
            "mean_pairwise_identity": self.mean_pairwise_identity,
            "site_entropy": self.site_entropy,
            "consecutive_identity": self.consecutive_identity,
            "mean_sample_energy": float(self.sample_energies.mean()) if len(self.sample_energies) else None,
            **self.sample_energy_check(),
            "num_chains": self.num_chains,
            "swaps_attempted": self.swaps_attempted,
            "sweeps": self.sweeps,
        }


def _clustered_error(values: np.ndarray, clusters: np.ndarray) -> float:
    """Standard error of the mean of ``values`` whose members of one cluster (chain) are correlated:
    n^-1 sqrt(sum over clusters of (sum of its deviations from the mean)^2)."""
    if len(values) < 2:
        return float("nan")
    per_cluster = np.bincount(clusters, weights=values - values.mean())
    return float(np.sqrt((per_cluster**2).sum()) / len(values))


def default_chains(num_samples: int) -> int:
    """The tempering chains when none are given: about 3 samples per chain, 64 to 4,096."""
    return int(min(max(64, -(-num_samples // 3)), 4096))


def _checked_inputs(
    contacts: np.ndarray,
    composition: np.ndarray,
    temperatures: list[float] | tuple[float, ...],
    num_samples: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ladder sorted high to low, the contact map made symmetric without its diagonal, and the
    composition as ids; a clear error on a ladder, a map or a sample count that cannot be run."""
    ladder = np.sort(np.asarray(temperatures, dtype=np.float64))[::-1]  # high to low
    if len(ladder) < 2 or not (ladder > 0).all():
        raise ValueError(f"need at least two positive tempering temperatures, got {list(temperatures)}")
    contacts = np.asarray(contacts, dtype=bool)
    contacts = (contacts | contacts.T) & ~np.eye(len(contacts), dtype=bool)
    composition = np.asarray(composition, dtype=np.int64)
    length = len(composition)
    if contacts.shape != (length, length):
        raise ValueError(f"contact map {contacts.shape} does not match the composition length {length}")
    if num_samples < 1:
        raise ValueError("num_samples must be >= 1")
    return ladder, contacts, composition


class _TemperingChains:
    """The state of one tempering run: the chains' sequences, energies and levels, the tempering weights,
    the tallies per level and the samples collected so far. ``simulated_tempering`` drives it sweep by
    sweep; every random number is drawn from ``rng`` in the order the run has always drawn them."""

    def __init__(
        self,
        contacts: np.ndarray,
        interactions: np.ndarray,
        composition: np.ndarray,
        ladder: np.ndarray,
        chains: int,
        rng: np.random.Generator,
    ) -> None:
        self.contacts, self.interactions, self.ladder, self.rng = contacts, interactions, ladder, rng
        self.length, self.levels, self.chains = len(composition), len(ladder), chains
        self.betas = 1.0 / ladder  # ascending
        self.sequences = np.stack([rng.permutation(composition) for _ in range(chains)])  # (C, L)
        self.fields = LocalFields(self.sequences, contacts, interactions)
        self.energies = energy(contacts, interactions, self.sequences)  # (C,)
        self.level = np.arange(chains) % self.levels  # spread the chains over the ladder
        levels = self.levels
        self.correction = np.zeros(levels)
        self.log_weights = np.zeros(levels)  # -ln Z_k + const, set during burn-in
        # A level no chain starts at (fewer chains than levels) starts from every chain's mean: the start
        # sequences are alike random permutations. A NaN there made every weight past it NaN, so no chain ever
        # moved down to the lowest level: no sample, sweep after sweep, until max_sweeps.
        self.mean_energy = np.array([self.energies[self.level == k].mean() if (self.level == k).any()
                                     else self.energies.mean() for k in range(levels)])  # fmt: skip
        self.energy_sum, self.energy_count = np.zeros(levels), np.zeros(levels)
        self.accepted, self.tried = np.zeros(levels), np.zeros(levels)
        self.visits = np.zeros(levels, dtype=np.int64)
        self.temp_accepted = self.temp_tried = 0
        self.last_sample = np.full((chains, self.length), -1, dtype=np.int64)
        self.samples: list[np.ndarray] = []
        self.sample_energies: list[np.ndarray] = []
        self.sample_chains: list[np.ndarray] = []
        self.consecutive_same: list[float] = []
        self.collected = 0

    def swap_sweep(self) -> tuple[np.ndarray, np.ndarray]:
        """L swap attempts per chain, all chains at once; random numbers drawn per sweep. Returns the
        accepted and tried swaps per chain."""
        length, chains = self.length, self.chains
        firsts = self.rng.integers(0, length, (length, chains))
        seconds = (firsts + self.rng.integers(1, length, (length, chains))) % length  # a different site
        # accept when delta < threshold
        thresholds = np.log(self.rng.random((length, chains))) / -self.betas[self.level]
        return self.fields.sweep(self.sequences, self.energies, firsts, seconds, thresholds)

    def adapt_weights(self, sweep: int, adapt_rate: float) -> None:
        """One burn-in update of the level means and the tempering weights.

        The level means follow the chains as they equilibrate (moving average); the weights follow the
        means by thermodynamic integration, ln Z_{k+1} - ln Z_k ~ -(beta_{k+1} - beta_k) <E>, and an
        occupancy feedback (Wang-Landau-like) corrects what the integration misses where the chains drift.
        The weights adapt during burn-in only, then stay fixed: with weights that keep following the
        occupancy, chains stuck deep in a valley at the lowest level drive its weight down and push the
        others out, so the lowest level keeps only its deepest chains (measured on 1UBI: its mean energy
        sat 10 units below the level 3 % hotter, whatever the ladder's end). Fixed weights give the joint
        chain a fixed stationary distribution: at each level, that level's Boltzmann distribution.
        """
        levels, betas, mean_energy = self.levels, self.betas, self.mean_energy
        occupied = np.bincount(self.level, minlength=levels)
        per_level = np.bincount(self.level, weights=self.energies, minlength=levels)
        seen = occupied > 0
        mean_energy[seen] += adapt_rate * (per_level[seen] / occupied[seen] - mean_energy[seen])
        feedback = max(adapt_rate, 1.0 / (1.0 + sweep / 10.0))  # strong while the weights are far off
        self.correction -= feedback * np.log((occupied + 1.0) / (occupied.mean() + 1.0))
        steps = (betas[1:] - betas[:-1]) * 0.5 * (mean_energy[1:] + mean_energy[:-1])
        self.log_weights = np.concatenate([[0.0], np.cumsum(steps)]) + self.correction  # -ln Z_k + const

    def move_temperatures(self) -> None:
        """One temperature move per chain: up or down one level, Metropolis with the tempering weights."""
        level, betas, log_weights = self.level, self.betas, self.log_weights
        proposal = level + self.rng.choice((-1, 1), self.chains)
        inside = (proposal >= 0) & (proposal < self.levels)
        target = np.clip(proposal, 0, self.levels - 1)
        log_ratio = -(betas[target] - betas[level]) * self.energies + log_weights[target] - log_weights[level]
        move = inside & (np.log(self.rng.random(self.chains)) < log_ratio)
        self.temp_tried += int(inside.sum())
        self.temp_accepted += int(move.sum())
        self.level = np.where(move, target, level)

    def refresh(self) -> None:
        """Fields and energies from scratch: bounds the float32 round-off of the local updates."""
        self.fields.fields = self.fields.compute(self.sequences)
        self.energies = energy(self.contacts, self.interactions, self.sequences)

    def tally(self, level_before: np.ndarray, accepted_chain: np.ndarray, tried_chain: np.ndarray) -> None:
        """Count a sampling sweep's swap acceptance (at the level each chain swapped at), energies and
        visits per level."""
        levels, level = self.levels, self.level
        self.accepted += np.bincount(level_before, weights=accepted_chain, minlength=levels)
        self.tried += np.bincount(level_before, weights=tried_chain, minlength=levels)
        self.energy_sum += np.bincount(level, weights=self.energies, minlength=levels)
        self.energy_count += np.bincount(level, minlength=levels)
        self.visits += np.bincount(level, minlength=levels)

    def collect(self, num_samples: int) -> None:
        """Keep every chain now at the lowest level, up to ``num_samples`` in all.

        A sample is every chain at the lowest level at a fixed tick: the joint stationary distribution,
        given the level, is that level's Boltzmann distribution. Any rule that looks at a chain's history
        (sample on arrival, after a climb, after a hold) selects chains that came down recently and carry
        the energy of the level above (measured: 1.6 to 7.7 energy units above the level's mean on 1UBI).
        """
        take = np.arange(self.chains)[self.level == self.levels - 1][: num_samples - self.collected]
        if not take.size:
            return
        sequences = self.sequences
        previous = self.last_sample[take]
        known = previous[:, 0] >= 0
        if known.any():
            self.consecutive_same.extend((previous[known] == sequences[take][known]).mean(axis=1).tolist())
        self.samples.append(sequences[take].copy())
        self.sample_energies.append(self.energies[take].copy())
        self.sample_chains.append(take)
        self.last_sample[take] = sequences[take]
        self.collected += take.size

    def report(self, num_samples: int, sweeps: int) -> TemperingReport:
        """The run's samples and diagnostics after ``sweeps`` sweeps."""
        sampled = np.concatenate(self.samples)[:num_samples]
        energy_count = self.energy_count
        mean_energy = np.where(energy_count > 0, self.energy_sum / np.maximum(energy_count, 1), np.nan)
        consecutive = self.consecutive_same
        return TemperingReport(
            sequences=sampled,
            temperatures=self.ladder.tolist(),
            acceptance_swap=(self.accepted / np.maximum(self.tried, 1)).tolist(),
            acceptance_temperature=self.temp_accepted / max(self.temp_tried, 1),
            mean_energy=mean_energy.tolist(),
            visits=self.visits.tolist(),
            mean_pairwise_identity=mean_pairwise_identity(sampled),
            site_entropy=mean_site_entropy(sampled),
            consecutive_identity=float(np.mean(consecutive)) if consecutive else float("nan"),
            sample_energies=np.concatenate(self.sample_energies)[:num_samples],
            sample_chains=np.concatenate(self.sample_chains)[:num_samples],
            num_chains=self.chains,
            swaps_attempted=int(sweeps * self.length * self.chains),
            sweeps=sweeps,
            log_weights=self.log_weights.tolist(),
        )


def simulated_tempering(
    contacts: np.ndarray,
    interactions: np.ndarray,
    composition: np.ndarray,
    num_samples: int,
    temperatures: list[float] | tuple[float, ...] = DEFAULT_LADDER,
    sweeps_between: int = 30,
    burn_in_sweeps: int = 150,
    seed: int = 0,
    num_chains: int | None = None,
    max_sweeps: int = 100_000,
    adapt_rate: float = 0.05,
    progress: Callable[[float, str], None] | None = None,
) -> TemperingReport:
    """Adaptive simulated tempering of ``num_chains`` chains; ``num_samples`` sequences at the lowest T.

    contacts (L, L) bool; interactions (20, 20) symmetric; composition (L,) ids whose multiset every
    sequence keeps (swap moves only). ``temperatures`` in any order (sorted high to low here). A sweep is
    L swap attempts per chain followed by one temperature move per chain. Sampling starts after
    ``burn_in_sweeps``; then every ``sweeps_between`` sweeps each chain at the lowest temperature is sampled.
    ``progress(fraction, message)`` is called every few sweeps (it may raise to cancel).
    """
    ladder, contacts, composition = _checked_inputs(contacts, composition, temperatures, num_samples)
    chains = num_chains or default_chains(num_samples)
    run = _TemperingChains(contacts, interactions, composition, ladder, chains, np.random.default_rng(seed))
    sweep = 0
    while run.collected < num_samples:
        if sweep >= max_sweeps:
            raise RuntimeError(
                f"simulated tempering collected {run.collected} of {num_samples} samples in {max_sweeps} "
                "sweeps; lower sweeps_between, or add chains"
            )
        accepted_chain, tried_chain = run.swap_sweep()
        if sweep < burn_in_sweeps:
            run.adapt_weights(sweep, adapt_rate)
        level_before = run.level
        if sweep >= burn_in_sweeps // 4:  # first quarter of burn-in: relax at fixed temperatures
            run.move_temperatures()
        sweep += 1
        if sweep % 50 == 0:
            run.refresh()
        if progress is not None and sweep % 10 == 0:
            # Burn-in counts for half the share, so the fraction moves before the first sample is kept.
            share = 0.5 * min(1.0, sweep / max(burn_in_sweeps, 1)) + 0.5 * run.collected / num_samples
            phase = "burn-in" if sweep <= burn_in_sweeps else "sampling"
            progress(share, f"tempering sweep {sweep} ({phase}): {run.collected}/{num_samples} sequences")
        if sweep <= burn_in_sweeps:
            continue
        run.tally(level_before, accepted_chain, tried_chain)
        if (sweep - burn_in_sweeps) % sweeps_between == 0:
            run.collect(num_samples)
    return run.report(num_samples, sweep)


def mean_site_entropy(sequences: np.ndarray) -> float:
    """Mean over sites of the Shannon entropy (nats) of the residues at that site in (n, L) id sequences
    (the authors' set: 1.57 nats)."""
    n, length = sequences.shape
    counts = np.zeros((length, 20))
    np.add.at(counts, (np.broadcast_to(np.arange(length), (n, length)), sequences), 1.0)  # (L, 20)
    frequencies = counts / n
    logs = np.log(np.where(frequencies > 0, frequencies, 1.0))
    return float(-(frequencies * logs).sum(axis=1).mean())


def mean_pairwise_identity(sequences: np.ndarray, max_sequences: int = 3000) -> float:
    """Mean fraction of identical sites over distinct pairs of (n, L) sequences (first ``max_sequences``)."""
    sequences = sequences[:max_sequences]
    n, length = sequences.shape
    if n < 2:
        return 1.0
    one_hot = np.zeros((n, length * 20), dtype=np.float32)
    one_hot[np.arange(n)[:, None], np.arange(length)[None, :] * 20 + sequences] = 1.0
    counts = one_hot.sum(axis=0, dtype=np.float64)  # (L*20,) identical pairs = sum over sites of c (c - 1)
    same_pairs = float((counts * (counts - 1)).sum())
    return same_pairs / (n * (n - 1) * length)


def write_fasta(path: str | Path, sequences: np.ndarray, prefix: str = "designed", width: int = 0) -> None:
    """Write (n, L) id sequences as FASTA records ``>prefix_00001`` (atomically: temp file, then rename)."""
    path = Path(path)
    lines = []
    for k, ids in enumerate(sequences, start=1):
        text = decode(ids)
        lines.append(f">{prefix}_{k:05d}")
        lines.extend([text[s : s + width] for s in range(0, len(text), width)] if width else [text])
    atomic_write_text(path, "\n".join(lines) + "\n")


def read_fasta(path: str | Path) -> np.ndarray:
    """Read equal-length amino-acid FASTA records into (n, L) ids; clear errors name the record."""
    path = Path(path)
    records: list[tuple[str, list[str]]] = []
    for number, line in enumerate(path.read_text(encoding="ascii").splitlines(), start=1):
        if line.startswith(">"):
            records.append((line[1:].strip() or f"line {number}", []))
        elif line.strip():
            if not records:
                raise ValueError(f"{path}:{number}: sequence text before the first '>' header")
            records[-1][1].append(line.strip())
    if not records:
        raise ValueError(f"{path}: no FASTA records")
    sequences = []
    for name, parts in records:
        try:
            sequences.append(encode("".join(parts)))
        except ValueError as error:
            raise ValueError(f"{path}: record {name!r}: {error}") from error
    lengths = {len(s) for s in sequences}
    if len(lengths) != 1:
        raise ValueError(f"{path}: records have different lengths {sorted(lengths)}")
    return np.stack(sequences)


def read_sequences(path: str | Path, length: int, source: str = "the structure") -> np.ndarray:
    """Sequences made elsewhere, as (n, L) ids: FASTA (records may wrap) or one sequence per line (blank lines
    and '#' comments skipped). Every sequence must have ``length`` residues from the 20 amino acids; the
    first that does not raises a ``ValueError`` of one line naming the file and the record."""
    path = Path(path)
    records = _sequence_records(path, _sequence_lines(path))
    if not records:
        raise ValueError(f"{path}: no sequences (FASTA records or one sequence per line)")
    encoded = []
    for name, parts in records:
        text = "".join(parts).upper()
        unknown = sorted({a for a in text if a not in AMINO_ACIDS})
        if unknown:
            raise ValueError(f"{path}: record {name}: letters outside the 20 amino acids: {''.join(unknown)}")
        if len(text) != length:
            raise ValueError(f"{path}: record {name}: {len(text)} residues, but {source} has {length}")
        encoded.append(encode(text))
    return np.stack(encoded)


def _sequence_lines(path: Path) -> list[str]:
    """The lines of a sequences file; a missing file or one that is not UTF-8 text raises naming it."""
    if not path.is_file():
        raise FileNotFoundError(f"sequences file not found: {path}")
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as error:
        raise ValueError(f"{path}: not a text file of sequences ({error.reason})") from error


def _sequence_records(path: Path, lines: list[str]) -> list[tuple[str, list[str]]]:
    """``(name, sequence lines)`` per record: FASTA records when any line is a '>' header, else one record
    per line (blank lines and '#' comments skipped)."""
    records: list[tuple[str, list[str]]] = []
    fasta = any(line.startswith(">") for line in lines)
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        if text.startswith(">"):
            records.append((f"{text[1:].strip() or '(unnamed)'} (line {number})", []))
        elif fasta:
            if not records:
                raise ValueError(f"{path}: line {number}: sequence text before the first '>' header")
            records[-1][1].append(text)
        else:
            records.append((f"line {number}", [text]))
    return records
