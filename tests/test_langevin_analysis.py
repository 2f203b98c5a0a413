"""Contact-precision significance against known answers: the one chance rule (contact labels shuffled within
each sequence separation) rejects random attention, accepts planted contacts, gives a diagonal-hugging map no
credit, and its chance level equals the exact expectation under that null."""

from __future__ import annotations

import numpy as np
import pytest

from analyzers.langevin.analysis import _top_pairs, contact_chance_test, shuffled_contact_maps


def _contacts(length: int, rng: np.random.Generator) -> np.ndarray:
    """Helical neighbours (|i-j| <= 4) plus random long-range contacts, symmetric."""
    index = np.arange(length)
    gap = np.abs(index[:, None] - index[None, :])
    upper = np.triu(rng.random((length, length)) < 0.04, k=6) | ((gap >= 1) & (gap <= 4) & np.triu(np.ones_like(gap,
                                                                                                     dtype=bool)))
    return upper | upper.T


@pytest.mark.parametrize("metric", ["p_at_l", "tolerance"])
def test_analysis_chance_test_rejects_a_random_map_and_accepts_a_planted_one(metric: str) -> None:
    rng = np.random.default_rng(0)
    length = 76
    contacts = _contacts(length, rng)
    separation = 1 if metric == "p_at_l" else 6
    random_p = []
    for seed in range(20):
        noise = np.random.default_rng(100 + seed).random((length, length))
        random_p.append(contact_chance_test((noise + noise.T) / 2, contacts, metric, separation, permutations=200,
                                            seed=seed)["p_value"])  # fmt: skip
    assert sum(p < 0.05 for p in random_p) <= 3  # about 5 % false alarms, as a test at 0.05 should give
    noise = rng.random((length, length))
    long_range = contacts & (np.abs(np.arange(length)[:, None] - np.arange(length)[None, :]) > 6)
    planted = (noise + noise.T) / 2 + 0.8 * long_range  # the long-range contacts lifted above the noise
    result = contact_chance_test(planted, contacts, metric, separation, permutations=200)
    assert result["p_value"] < 0.01 and result["precision"] > 2 * result["chance"]


def test_analysis_chance_test_gives_a_diagonal_hugging_map_no_credit() -> None:
    """Attention that only decays with |i-j| scores a high P@L (the neighbours are contacts) but knows nothing
    the separation does not: shuffling within separations keeps its precision, so p is 1."""
    rng = np.random.default_rng(1)
    length = 60
    contacts = _contacts(length, rng)
    index = np.arange(length)
    diagonal = -np.abs(index[:, None] - index[None, :]).astype(float)
    result = contact_chance_test(diagonal, contacts, "p_at_l", 1, permutations=200)
    assert result["precision"] > 0.9  # P@L "prioritizes contacts close to the diagonal"
    assert result["p_value"] == 1.0 and result["chance"] == pytest.approx(result["precision"])


def test_analysis_chance_level_is_the_exact_expectation_under_shuffles_within_separations() -> None:
    rng = np.random.default_rng(2)
    length = 40
    contacts = _contacts(length, rng)
    scores = rng.random((length, length))
    result = contact_chance_test(scores, contacts, "p_at_l", 3, permutations=4000, seed=5)
    pairs = _top_pairs(scores, 3, length)
    # independent: a chosen pair (i, j) is a contact with probability = the contact density of its diagonal
    density = {s: np.mean([contacts[i, i + s] for i in range(length - s)]) for s in range(3, length)}
    exact = np.mean([density[j - i] for i, j in pairs])
    assert result["chance"] == pytest.approx(exact, abs=0.01)
    maps = shuffled_contact_maps(np.triu(contacts, 1), 3, 50, rng)
    for s in (3, 7, 20):  # each diagonal keeps its number of contacts
        rows = np.arange(length - s)
        assert (maps[:, rows, rows + s].sum(axis=1) == contacts[rows, rows + s].sum()).all()


def _chance_row(p_at_l: tuple[float, float], tolerant: tuple[float, float]) -> dict[str, dict[str, float]]:
    return {"p_at_l": {"precision": p_at_l[0], "chance": 0.1, "p_value": p_at_l[1]},
            "tolerance_precision": {"precision": tolerant[0], "chance": 0.1, "p_value": tolerant[1]}}  # fmt: skip


def test_compute_contact_verdicts_need_the_best_temperature_to_beat_chance_after_bonferroni() -> None:
    from analyzers.langevin.compute import contact_untestable

    temperatures = [1e-5, 1e-4, 1e-3]
    # P@L best at T=1e-3 with p = 0.01 (x3 = 0.03 < 0.05); tolerant best at 1e-4 with p = 0.02 (x3 = 0.06)
    rows = [_chance_row((0.2, 0.5), (0.1, 0.9)), _chance_row((0.3, 0.2), (0.4, 0.02)),
            _chance_row((0.5, 0.01), (0.2, 0.3))]  # fmt: skip
    trained = {"ES": _chance_row((0.2, 0.6), (0.1, 0.9)), "OT": _chance_row((0.6, 0.001), (0.1, 0.8))}
    untestable = contact_untestable(rows, trained, temperatures, 0.05)
    assert "best_p_at_l_temperature_over_best_error_temperature" not in untestable
    assert "p = 0.02" in untestable["best_contact_temperature_over_best_error_temperature"]
    assert "tolerance_precision_by_temperature" in untestable and "p_at_l_by_temperature" not in untestable
    assert "ot_minus_es_p_at_l" not in untestable  # OT beats chance
    assert "neither ES nor OT" in untestable["ot_minus_es_tolerance_precision"]
