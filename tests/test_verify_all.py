"""The 'done when' of re-verification: `kb verify --all` on the bundled notes leaves a verdict for each
bound claim, at the claims' own scales, through the real analyzers, queue and worker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kb.core import KnowledgeBase
from kb.index.indexing import bound_claims
from kb.settings import Settings
from tests.helpers.cli import run_kb


def _verify(papers: Path, home: Path, targets: list[str]) -> list[dict[str, object]]:
    result = run_kb(papers, home, "verify", *targets, "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    rows: list[dict[str, object]] = [json.loads(line) for line in result.stdout.splitlines()]  # JSON Lines
    return rows


@pytest.mark.slow  # ~65 s: it runs every bundled depth claim, the family probe of three models included
def test_verify_bundled_depth_claims_leaves_a_verdict_for_each(kb_dirs: tuple[Path, Path],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The default suite's share: every bundled claim bound to a depth analyzer, at its own scale (the Langevin
    claims run the `small` preset, half an hour or more on 2 cores: the slow test below verifies them all)."""
    papers, home = kb_dirs
    monkeypatch.setenv("KB_HOME", str(home))
    kb = KnowledgeBase(Settings(papers=papers, home=home))
    kb.index()
    depth = sorted(row.key for row in bound_claims(kb.engine) if str(row.analyzer).startswith("depth."))
    assert len(depth) >= 4
    rows = _verify(papers, home, depth)
    assert sorted(str(r["id"]) for r in rows) == depth
    assert all(r["status"] == "succeeded" and r["verdict"] for r in rows), rows
    verdict = kb.evidence("siji-2026-analysis-note-arxiv-2502-00001#optimal-depth-24-36")[0].verdict
    assert verdict is not None and verdict.kind.value == "not_runnable"
    assert "UniRef50 FASTA you provide" in verdict.reason or "CUDA" in verdict.reason


@pytest.mark.slow
# every bound claim: the Langevin claims at `small` alone take ~26 minutes from a fresh cache on 2 idle cores
# (analyzers/langevin/spec.py), the depth claims and two family probes a few more; 1,200 s stopped it mid-training
@pytest.mark.timeout(3600)
def test_verify_all_bundled_notes_leaves_a_verdict_for_every_bound_claim(kb_dirs: tuple[Path, Path],
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    papers, home = kb_dirs
    monkeypatch.setenv("KB_HOME", str(home))  # built-in models are trained and cached under the KB home
    rows = _verify(papers, home, ["--all"])
    kb = KnowledgeBase(Settings(papers=papers, home=home))
    bound = kb.claim_keys()
    assert sorted(str(r["id"]) for r in rows) == bound and len(bound) == 10
    assert all(r["status"] == "succeeded" and r["verdict"] for r in rows), rows
    for key in bound:
        (latest, *_) = kb.evidence(key)
        assert latest.verdict is not None and latest.verdict.kind.value != "error", (key, latest.verdict)
        assert latest.provenance is not None and latest.provenance.wall_seconds
        assert not latest.stale and kb.staleness(key) is None
    # The depth-sweep claims are about 650M-parameter models trained on UniRef50: bound to the paper scale, the
    # only one that can answer them, they are not runnable without a UniRef50 FASTA and CUDA, and say which.
    depth = kb.evidence("siji-2026-analysis-note-arxiv-2502-00001#optimal-depth-24-36")[0].verdict
    assert depth is not None and depth.kind.value == "not_runnable"
    assert "UniRef50 FASTA you provide" in depth.reason or "CUDA" in depth.reason
    assert kb.claim_keys(stale_only=True) == []
