"""Runs of one plan that share cached stages (the Langevin note's three claims: two on the sweep, one on the
contacts of one experiment) are estimated once: the first run pays for the design, training and samples,
the others reuse them, so the demo's plan no longer counts the same hours three times."""

from __future__ import annotations

import shutil
from pathlib import Path

from analyzers import registry
from kb.core import KnowledgeBase
from kb.evidence.estimates import RunEstimate, sharing
from kb.settings import Settings

PAPERS = Path(__file__).resolve().parents[1] / "papers"
LANGEVIN = "sampling-intermediate-temperatures-langevin"


def test_the_langevin_claims_share_one_estimate_and_queue_after_the_run_that_builds_the_stages(
        tmp_path: Path) -> None:
    papers = tmp_path / "papers"
    papers.mkdir()
    shutil.copy(PAPERS / f"{LANGEVIN}.md", papers)
    kb = KnowledgeBase(Settings(papers=papers, home=tmp_path / "home"))
    kb.index()
    queued, skipped = kb.verify([LANGEVIN])
    assert not skipped and len(queued) == 3
    assert {run.analyzer for run in queued} == {"langevin.sweep", "langevin.contacts"}
    # transformer-smooth-ffn-jumps is bound to `paper` (its 169k 4-block model): the two `small` runs share
    at_small = [run for run in queued if run.params.get("sampling_steps") != 200_000]
    assert len(at_small) == 2
    found = [kb.run_estimates[run.id] for run in at_small]
    first, *later = found
    assert not first.shares_work and first.seconds is not None and first.seconds > 60
    assert all(e.shares_work and e.seconds is None for e in later)
    assert all(e.text().startswith("quick after the earlier run whose cached stages it reuses") for e in later)
    assert first.sort_key < min(e.sort_key for e in later)


def test_sharing_needs_an_equal_key_and_leaves_a_not_runnable_run_alone() -> None:
    sweep, contacts = registry.get("langevin.sweep"), registry.get("langevin.contacts")
    small = sweep.params_for(scale="small")
    other_seed = sweep.params_for({"seed": small.seed + 1}, scale="small")
    probe = registry.get("depth.probe")
    estimate = RunEstimate(100.0, "test", "small")
    marked = sharing([(sweep, small, estimate), (contacts, contacts.params_for(scale="small"), estimate),
                      (sweep, other_seed, estimate), (probe, probe.params_for(scale="smoke"), estimate),
                      (probe, probe.params_for(scale="smoke"), estimate),
                      (sweep, small, RunEstimate(0.0, "preflight", "small", not_runnable="no GPU"))])
    # contacts (the transformer only) reuses what the sweep (transformer and FFN) builds; another seed builds
    # its own; depth.probe caches no stages; a run that cannot run here ends at once whatever it shares
    assert [e.shares_work for e in marked] == [False, True, False, False, False, False]
    ffn_later = sharing([(contacts, contacts.params_for(scale="small"), estimate), (sweep, small, estimate)])
    assert [e.shares_work for e in ffn_later] == [False, False]  # the FFN's stages are still to build
