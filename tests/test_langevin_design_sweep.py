"""The tempering sweep in few numpy calls (issue 28) does the arithmetic of one ``LocalFields.deltas`` /
``apply`` call per attempt, bit for bit: the same sequences, fields, energies and counts."""

from __future__ import annotations

import numpy as np

from analyzers.langevin import design, structure


def test_sweep_equals_the_attempt_by_attempt_reference() -> None:
    contacts = structure.shipped_contact_map().contacts
    interactions = design.interaction_matrix(3)
    composition = design.encode(structure.shipped_contact_map().sequence)
    rng = np.random.default_rng(0)
    chains, length = 30, len(composition)
    start = np.stack([rng.permutation(composition) for _ in range(chains)])
    firsts = rng.integers(0, length, (3 * length, chains))
    seconds = (firsts + rng.integers(1, length, firsts.shape)) % length
    thresholds = rng.normal(0.0, 2.0, firsts.shape)  # about half the swaps accepted

    reference_sequences = start.copy()
    reference = design.LocalFields(reference_sequences, contacts, interactions)
    reference_energies = design.energy(contacts, interactions, start)
    accepted = np.zeros(chains)
    tried = np.zeros(chains)
    for first, second, threshold in zip(firsts, seconds, thresholds, strict=True):
        delta = reference.deltas(reference_sequences, first, second)
        rows = np.arange(chains)
        different = reference_sequences[rows, first] != reference_sequences[rows, second]
        accept = different & (delta < threshold)
        reference.apply(reference_sequences, rows[accept], first[accept], second[accept])
        reference_energies[accept] += delta[accept]
        accepted += accept
        tried += different

    sequences = start.copy()
    fields = design.LocalFields(sequences, contacts, interactions)
    energies = design.energy(contacts, interactions, start)
    counts = fields.sweep(sequences, energies, firsts, seconds, thresholds)
    np.testing.assert_array_equal(sequences, reference_sequences)
    np.testing.assert_array_equal(fields.fields, reference.fields)
    np.testing.assert_array_equal(energies, reference_energies)
    np.testing.assert_array_equal(counts[0], accepted)
    np.testing.assert_array_equal(counts[1], tried)
    assert 0.2 < accepted.sum() / tried.sum() < 0.8  # both branches taken
    assert (np.sort(sequences, axis=1) == np.sort(composition)).all()
