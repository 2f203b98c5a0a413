"""Grounding: claim quotes checked against source text, including the seed note/abstract pair."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.core import KnowledgeBase
from kb.notes.files import read_note
from kb.notes.grounding import Grounding, check_note, check_quote


def test_check_quote_tolerates_whitespace_dashes_hyphenation_and_case() -> None:
    source = "the lack of a first–order–like transi-\ntion in the loss\nof the Transformer"
    assert check_quote("first-order-like transition in the loss of the transformer", source)
    assert check_quote("“lack of a first – order”".strip("“”"), source)
    assert not check_quote("a second-order transition", source)


@pytest.mark.parametrize(("quote", "source"), [
    # kb add keeps a word's own hyphen at a line's end ('non-parametric', the document's spelling); a reader's
    # PDF viewer joined it (multcomp-generalsiminf's marked claim)
    ("obtained from nonparametric test procedures", "obtained from non-parametric test procedures"),
    # the other way: the quote kept the hyphen, the text joined the word
    ("dynamic touch-screen instruments", "dynamic touchscreen instruments"),
    ("self-supervised encoders", "self-\nsupervised encoders"),
])
def test_check_quote_takes_a_hyphen_between_letters_as_optional(quote: str, source: str) -> None:
    assert check_quote(quote, source)


def test_check_quote_keeps_hyphens_between_numbers_and_words_apart() -> None:
    """Only a hyphen between two letters is optional: a range keeps its hyphen, and words stay words."""
    source = "layers 10-20 of the non-linear model"
    assert check_quote("layers 10-20", source)
    assert not check_quote("layers 1020", source)
    assert not check_quote("non linear model", source)


def test_bundled_notes_are_grounded_in_their_sources(kb: KnowledgeBase) -> None:
    for note_id in ("siji-2026-curse-of-depth-in-plms", "sampling-intermediate-temperatures-langevin",
                    "plm-architecture-discussion"):
        results = check_note(kb.read(note_id))
        assert results and all(r.status is Grounding.grounded for r in results), results


def test_seed_note_claims_not_found_in_seed_abstract(seeds: Path, tmp_path: Path) -> None:
    """Seed 000 (analysis note) describes experiments its paper's abstract (seed 001) never mentions."""
    seed_note = read_note(seeds / "000_ce90e91fe3e899e8.txt")
    abstract = (seeds / "001_32a4a64f9919c504.txt").read_text(encoding="utf-8")
    # Claims as the note states them, quoted from the note's own body.
    note_text = seed_note.body
    quotes = {
        "optimal-depth": "PLM (ESM-style) | 24-36",
        "fixed-650m": "参数量固定: ~650M",
        "erank-45": "rank_eff 维持在初始值的 45%",
        "curse-in-plms": "deeper layers primarily fine-tune the output distribution",
    }
    assert all(q in note_text or q in abstract for q in quotes.values())
    found = {cid: check_quote(q, abstract) for cid, q in quotes.items()}
    assert found == {"optimal-depth": False, "fixed-650m": False, "erank-45": False, "curse-in-plms": True}


def test_check_note_reports_missing_source(tmp_path: Path) -> None:
    path = tmp_path / "n.md"
    path.write_text('---\npaper_id: "a:1"\ntitle: "T"\nsource_file: "missing.txt"\nclaims:\n'
                    '  - id: c1\n    statement: "s"\n    source: {quote: "q"}\n  - id: c2\n    statement: "t"\n---\n',
                    encoding="utf-8")
    results = check_note(read_note(path))
    assert [r.status for r in results] == [Grounding.no_source, Grounding.no_quote]
    assert "missing.txt" in results[0].reason


def test_numbers_in_normalizes_separators_decimals_and_number_words() -> None:
    from kb.notes.grounding import numbers_in

    assert numbers_in("optimal depth 24–36 at 650M, 1,000 sequences, 0.50 ratio, six PLMs, 45 %") == {
        "24", "36", "650", "1000", "0.5", "6", "45"}
    assert numbers_in("arXiv v2.1 and x2") == set()  # digits glued to letters or dots are not stated numbers


def test_disagreements_find_numbers_ids_and_years_the_source_does_not_state(tmp_path: Path) -> None:
    from kb.notes.grounding import disagreements

    (tmp_path / "src.txt").write_text("A Study of Depth\narXiv:2602.21750, February 2026. We study six PLMs "
                                      "with 12 to 36 layers.\n", encoding="utf-8")
    path = tmp_path / "n.md"
    path.write_text('---\npaper_id: "arxiv:2502.00001"\ntitle: "A Study of Depth"\n'
                    'publication: {year: 2025}\nsource_file: "src.txt"\nclaims:\n'
                    '  - id: backed\n    statement: "Six PLMs with 12 to 36 layers."\n'
                    '  - id: unbacked\n    statement: "The optimal depth is 24-36 layers at 650M parameters."\n---\n',
                    encoding="utf-8")
    found = {d.where: d for d in disagreements(read_note(path))}
    assert set(found) == {"paper_id", "year", "unbacked"}
    assert "2602.21750" in found["paper_id"].reason and "2026" in found["year"].reason
    assert found["unbacked"].reason == "the source never states 24, 650, which the claim does"


def test_seed_note_disagrees_with_seed_abstract_on_its_numbers(seeds: Path) -> None:
    """The analysis note's study (6 to 48 layers, ~650M parameters) is absent from the abstract."""
    from kb.notes.grounding import disagreements, numbers_in

    abstract = (seeds / "001_32a4a64f9919c504.txt").read_text(encoding="utf-8")
    note = read_note(seeds / "000_ce90e91fe3e899e8.txt")
    assert disagreements(note, abstract) == []  # same title, year 2026; its claims are still in prose
    stated = numbers_in("深度变化: 6, 12, 24, 36, 48 层; 参数量固定: ~650M; rank_eff 维持在初始值的 45%")
    assert stated - numbers_in(abstract) == {"12", "24", "36", "48", "650", "45"}  # 'six PLMs' backs only 6


def test_bundled_seed_note_is_the_seed_plus_claims_none_backed_by_the_abstract(seeds: Path, kb: KnowledgeBase) -> None:
    """The user's note (seed 000) is bundled byte for byte, plus claims kb checks against the abstract (seed 001)."""
    import difflib

    from kb.notes.grounding import disagreements

    seed = (seeds / "000_ce90e91fe3e899e8.txt").read_text(encoding="utf-8").splitlines()
    note = kb.read("siji-2026-analysis-note-arxiv-2502-00001")
    diff = [d for d in difflib.ndiff(seed, note.raw.decode("utf-8").splitlines()) if d[:2] in ("- ", "+ ")]
    assert not [d for d in diff if d.startswith("- ")]  # nothing the user wrote was lost or reformatted
    assert diff[:2] == ['+ source_file: "sources/siji-2026-abstract-page.txt"', "+ claims:"]
    assert note.meta.extra_fields["is_zheng_shuangjia_paper"] is False
    assert {r.status for r in check_note(note)} == {Grounding.not_found}
    differ = {d.where: d.reason for d in disagreements(note)}
    assert "650" in differ["optimal-depth-24-36"] and "45" in differ["stable-rank-retained-45pct"]


def _note_with_claims(tmp_path: Path, source: str, claims: str) -> Path:
    (tmp_path / "src.txt").write_text(source, encoding="utf-8")
    path = tmp_path / "n.md"
    path.write_text(f'---\npaper_id: "t:1"\ntitle: "T"\nsource_file: "src.txt"\nclaims:\n{claims}---\n',
                    encoding="utf-8")
    return path


def test_disagreements_number_counts_only_where_the_source_states_it_about_the_same_thing(tmp_path: Path) -> None:
    from kb.notes.grounding import disagreements

    path = _note_with_claims(tmp_path, "T\nThe model has 12 layers and 8 heads. Its perplexity is 7.5 on UniRef50.\n",
                             '  - id: ppl\n    statement: "Perplexity <= 12."\n'
                             '  - id: layers\n    statement: "The model stacks 12 layers."\n'
                             '  - id: ppl-ok\n    statement: "Its perplexity reaches 7.5."\n'
                             '  - id: bare\n    statement: "12"\n')
    found = {d.where: d.reason for d in disagreements(read_note(path))}
    assert set(found) == {"ppl"}
    assert found["ppl"] == "the source states 12 only about other things, not next to perpl as the claim does"


@pytest.mark.parametrize(("claim", "source", "reason"), [
    ("We compare 6 PLMs.", "We study six PLMs.", None),  # 'six PLMs' backs '6 PLMs'
    # 'layers' after a full stop is not what 24 is about
    ("24 layers", "Batch size 24. Layers were frozen.",
     "the source states 24 only about other things, not next to layer as the claim does"),
    ("36 layers at 650M", "six PLMs with 12 to 36 layers", "the source never states 650, which the claim does"),
])
def test_unbacked_numbers_stop_at_clause_ends_and_read_number_words(tmp_path: Path, claim: str, source: str,
                                                                    reason: str | None) -> None:
    from kb.notes.grounding import disagreements

    path = _note_with_claims(tmp_path, f"T\n{source}\n", f'  - id: c\n    statement: "{claim}"\n')
    found = {d.where: d.reason for d in disagreements(read_note(path))}
    assert found == ({"c": reason} if reason else {})


def test_check_note_tells_the_page_of_a_quote_and_refuses_a_wrong_page(tmp_path: Path) -> None:
    path = _note_with_claims(tmp_path, "T\nIntroduction text.\fResults\nThe optimal depth is 24 layers.\n",
                             '  - id: right\n    statement: "s"\n'
                             '    source: {quote: "optimal depth is 24 layers", page: 2}\n'
                             '  - id: wrong\n    statement: "s"\n'
                             '    source: {quote: "optimal depth is 24 layers", page: 1}\n'
                             '  - id: unpaged\n    statement: "s"\n    source: {quote: "Introduction text"}\n')
    results = {r.claim_id: r for r in check_note(read_note(path))}
    assert results["right"].status is Grounding.grounded and results["right"].reason == "quote found on page 2"
    assert results["wrong"].status is Grounding.not_found
    assert results["wrong"].reason == "the quote is on page 2, not on page 1 the claim cites"
    assert results["unpaged"].status is Grounding.grounded and "source.page: 1" in results["unpaged"].reason


def test_check_note_without_pages_keeps_the_plain_reason(tmp_path: Path) -> None:
    path = _note_with_claims(tmp_path, "T\nThe optimal depth is 24 layers.\n",
                             '  - id: c\n    statement: "s"\n    source: {quote: "optimal depth", page: 3}\n')
    (result,) = check_note(read_note(path))
    assert result.status is Grounding.grounded and result.reason == "quote found in the source text"
