"""Contact-precision significance: the chance test against a known answer (random vs planted maps)."""

from __future__ import annotations

import numpy as np

from analyzers.langevin.analysis import precision_chance_test


def test_analysis_chance_test_rejects_a_random_map_and_accepts_a_planted_one() -> None:
    rng = np.random.default_rng(0)
    length = 76
    upper = np.triu(rng.random((length, length)) < 0.03, k=6)
    contacts = upper | upper.T
    noise = rng.random((length, length))
    random_map = (noise + noise.T) / 2
    planted = random_map + 0.8 * contacts  # the contacts lifted above the noise
    random_result = precision_chance_test(random_map, contacts, permutations=1000)
    planted_result = precision_chance_test(planted, contacts, permutations=1000)
    assert random_result["p_value"] > 0.05 and planted_result["p_value"] < 0.01
    assert planted_result["precision"] > 5 * planted_result["chance"]
    # the chance level is the contact fraction among candidate pairs, computed independently
    i, j = np.triu_indices(length, k=6)
    assert planted_result["chance"] == contacts[i, j].mean()
