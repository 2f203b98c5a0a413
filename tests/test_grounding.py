"""Grounding: claim quotes checked against source text, including the seed note/abstract pair."""

from __future__ import annotations

from pathlib import Path

from kb.core import KnowledgeBase
from kb.grounding import Grounding, check_note, check_quote
from kb.notes import read_note


def test_check_quote_tolerates_whitespace_dashes_hyphenation_and_case() -> None:
    source = "the lack of a first–order–like transi-\ntion in the loss\nof the Transformer"
    assert check_quote("first-order-like transition in the loss of the transformer", source)
    assert check_quote("“lack of a first – order”".strip("“”"), source)
    assert not check_quote("a second-order transition", source)


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
