"""``kb.notes.field_names``: what counts as one typo, checked against every single edit of a word spelled out."""

from __future__ import annotations

import string

from kb.notes.field_names import near_miss, typo_of, typos


def _one_edit(word: str, alphabet: str) -> set[str]:
    """Every string one deletion, insertion, substitution or swap of neighbours away from ``word``."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    deleted = {a + b[1:] for a, b in splits if b}
    swapped = {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1 and b[0] != b[1]}
    replaced = {a + c + b[1:] for a, b in splits if b for c in alphabet if c != b[0]}
    inserted = {a + c + b for a, b in splits for c in alphabet}
    return deleted | swapped | replaced | inserted


def test_typos_is_one_exactly_for_the_single_edits_of_a_word() -> None:
    alphabet = "aeyr_"
    for word in ("year", "yr", "a_e"):
        edits = _one_edit(word, alphabet) - {word}
        # Every string of up to len+1 letters over the alphabet, checked against the spelled-out set.
        for length in range(len(word) - 1, len(word) + 2):
            for candidate in _strings(alphabet, length):
                assert (typos(word, candidate) == 1) == (candidate in edits), (word, candidate)


def _strings(alphabet: str, length: int) -> list[str]:
    found = [""]
    for _ in range(length):
        found = [s + c for s in found for c in alphabet]
    return found


def test_typo_of_and_near_miss_name_the_field_meant_at_its_depth() -> None:
    assert typo_of("yeer", ["venue", "year"]) == "year" and typo_of("year", ["year"]) is None
    assert typo_of("quality_scroe", ["quality_score", "status"]) == "quality_score"
    assert typo_of("reading_notes", sorted(string.ascii_lowercase)) is None
    data = {"title": "T", "publication": {"year": 2020}, "claims": [{"id": "c1", "statement": "s"}]}
    miss = near_miss(data, "publication.yeer")
    assert miss is not None and (miss.key, miss.known) == ("publication.yeer", "publication.year")
    assert near_miss(data, "publication.year") is None and near_miss(data, "publication.pages") is None
    claim = near_miss(data, "claims.c1.statment")
    assert claim is not None and claim.known == "claims.c1.statement"
    assert near_miss(data, "titel") is not None and near_miss(data, "urls.pdf_ulr") is not None
