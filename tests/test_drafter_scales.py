"""The drafter proposes a scale for a drafted claim that states none (issue 35), read from the paper's own text:
the bundled reading-group minutes and analysis note, whose sentences rarely repeat the model size. The proposal
is shown, and enters the note only when the user accepts it; a claim accepted without it still reads 'the claim
states no scale' against any run."""

from __future__ import annotations

import shutil
from pathlib import Path

from app.claims_editor import from_draft, proposed_scale_text
from kb.agents.drafter import draft
from kb.agents.scales import propose_scale
from kb.core import KnowledgeBase
from kb.evidence.verdicts import proxy_reason
from kb.settings import Settings
from schemas import EvidenceScale
from tests.helpers.cli import run_kb

ROOT = Path(__file__).resolve().parents[1]
MINUTES = ROOT / "papers" / "sources" / "depth-reading-group-minutes.txt"
ANALYSIS = ROOT / "papers" / "siji-2026-analysis-note-arxiv-2502-00001.md"


def test_the_minutes_propose_the_sweeps_size_and_data() -> None:
    proposal = propose_scale(MINUTES.read_text(encoding="utf-8"))
    assert proposal is not None
    assert proposal.scale.parameters == 6.5e8 and proposal.scale.data == "UniRef50"
    assert "size 650M x3" in proposal.basis and "6, 12, 24, 36, 48 layers" in proposal.basis  # the sweep's list
    assert proposal.text().startswith("650M parameters, UniRef50")


def test_the_analysis_note_proposes_its_36_layer_650m_setting_counting_every_spelling() -> None:
    body = ANALYSIS.read_text(encoding="utf-8").split("\n---\n", 1)[1]
    proposal = propose_scale(body)
    assert proposal is not None and proposal.scale.parameters == 6.5e8
    assert proposal.scale.description == "36 layers"  # '36 层', '36层' and '36-layer' are one count


def test_a_text_naming_no_setting_proposes_nothing() -> None:
    abstract = (ROOT / "papers" / "sources" / "siji-2026-curse-of-depth-in-plms.txt").read_text(encoding="utf-8")
    assert propose_scale(abstract) is None
    assert propose_scale("Deeper is better. See Table 3 and 2021.") is None


def test_the_rule_based_drafter_shows_the_proposal_only_where_the_quote_states_no_scale() -> None:
    text = MINUTES.read_text(encoding="utf-8")
    result = draft(text, analyzers={})
    stated = [c for c in result.claims if c.scale is not None]
    proposed = [c for c in result.claims if c.scale is None]
    assert stated and proposed, [c.quote for c in result.claims]
    for claim in proposed:
        assert claim.proposed_scale is not None and claim.proposed_scale.parameters == 6.5e8
        assert any(note.startswith("proposed scale (the paper's text, not the quote): 650M parameters")
                   for note in claim.notes)
        assert claim.to_claim().scale is None  # not accepted yet
        assert claim.to_claim(with_proposed_scale=True).scale == claim.proposed_scale
        assert proposed_scale_text(claim).startswith("650M parameters")
        assert "scale" not in from_draft(claim) and from_draft(claim, True)["scale"]["parameters"] == 6.5e8
    for claim in stated:
        assert claim.proposed_scale is None and proposed_scale_text(claim) == ""


def test_accepting_writes_the_proposed_scale_only_when_asked(tmp_path: Path) -> None:
    papers, home = tmp_path / "papers", tmp_path / "home"
    shutil.copytree(ROOT / "papers", papers)
    env = {"KB_CHAT_MODEL": ""}
    drafted = draft(MINUTES.read_text(encoding="utf-8"), analyzers={}).claims  # the ids the CLI drafts too
    ident = next(c.id for c in drafted if c.scale is None)
    note, other = "plm-architecture-discussion", "plm-bert-vs-gpt-comments"  # the same draft into two notes
    first = run_kb(papers, home, "draft-claims", str(MINUTES), "--into", note, "--accept", ident, env=env)
    assert first.returncode == 0, first.stderr
    assert "proposed" in first.stdout and "650M" in first.stdout  # shown (in the table's notes), not taken
    took = run_kb(papers, home, "draft-claims", str(MINUTES), "--into", other, "--accept", ident,
                  "--with-proposed-scale", env=env)
    assert took.returncode == 0, took.stderr
    kb = KnowledgeBase(Settings(papers=papers, home=home))
    plain = next(c for c in kb.read(note).meta.claims if c.id == ident)
    scaled = next(c for c in kb.read(other).meta.claims if c.id == ident)
    small = EvidenceScale(name="small", parameters=1.2e4)
    assert plain.scale is None
    assert "the claim states no scale" in (proxy_reason(plain, small) or "")  # until one is set
    assert scaled.scale is not None and scaled.scale.parameters == 6.5e8 and scaled.scale.data == "UniRef50"
    assert "states no scale" not in (proxy_reason(scaled, small) or "")
