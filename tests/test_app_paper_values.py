"""The Note page's claim cards (issue 26): where a claim would be settled and what that costs, the paper's own values
beside kb's, and the verdict's reason in one line (Streamlit AppTest over a real knowledge base)."""

from __future__ import annotations

import re

from kb.core import KnowledgeBase
from tests.helpers.paper_values import note_page


def test_note_page_says_where_a_proxy_claim_is_settled_and_the_papers_value(kb_env: KnowledgeBase) -> None:
    at = note_page("siji-2026-analysis-note-arxiv-2502-00001")
    texts = [m.value for m in at.markdown]
    # labelled fields: what settles it, that the bound preset runs a proxy, and its one cost
    assert any("at `esm2_3b`" in t for t in texts), texts
    assert any("smoke runs a proxy" in t for t in texts)
    assert any(t.startswith("about 0.5 GPU-hours") for t in texts)
    assert any("paper 0.45" in t and "kb: not run yet" in t for t in texts)
    assert not any("settled only at" in t for t in texts)  # no long sentence repeated on the card


def test_note_page_puts_kbs_value_beside_the_papers_once_verified(kb_env: KnowledgeBase) -> None:
    queued, _ = kb_env.verify(["paper-values"])
    assert kb_env.work() == {"succeeded": len(queued)}
    texts = [m.value for m in note_page("paper-values").markdown]
    assert any("value: paper 3.2 (Table 1) · kb 3" in t for t in texts), texts
    reason = next(t for t in texts if t.startswith("value = 3"))
    assert "\n" not in reason and "meets '> 2.0'" in reason  # the path is not repeated inside the threshold


def test_a_not_runnable_card_gives_one_cost_and_its_reason_once(kb_env: KnowledgeBase) -> None:
    key = "siji-2026-analysis-note-arxiv-2502-00001#perplexity-rises-at-48"
    queued, _ = kb_env.verify([key])
    kb_env.work()
    at = note_page("siji-2026-analysis-note-arxiv-2502-00001")
    texts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    # one figure for the cost wherever it is said (the Cost field, the reason): never 475 here and 500 there
    hours = {m for t in texts for m in re.findall(r"([\d,.]+) (?:GPU-)?hours", t)}
    assert "475" in hours and "500" not in hours, hours  # (other claims on the page have their own costs)
    assert sum("this sweep trains" in t for t in texts) == 1  # the reason, once
    for label in ("Verdict", "Scale: claim · evidence", "Settled by", "Cost", "Why"):
        assert label in texts, label
