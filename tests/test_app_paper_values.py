"""The Note page's claim cards (issue 26): where a claim would be settled and what that costs, the paper's own values
beside kb's, and the verdict's reason in one line (Streamlit AppTest over a real knowledge base)."""

from __future__ import annotations

from kb.core import KnowledgeBase
from tests.helpers.paper_values import note_page


def test_note_page_says_where_a_proxy_claim_is_settled_and_the_papers_value(kb_env: KnowledgeBase) -> None:
    texts = [m.value for m in note_page("siji-2026-analysis-note-arxiv-2502-00001").markdown]
    settled = next(t for t in texts if "settled only at 'esm2_3b'" in t)
    assert "'smoke' runs a proxy here" in settled and "GPU-hours" in settled
    assert any("paper 0.45" in t and "kb: not run yet" in t for t in texts)
    assert not any("settled only at" in t for t in texts if "structure-supervision" in t)


def test_note_page_puts_kbs_value_beside_the_papers_once_verified(kb_env: KnowledgeBase) -> None:
    queued, _ = kb_env.verify(["paper-values"])
    assert kb_env.work() == {"succeeded": len(queued)}
    texts = [m.value for m in note_page("paper-values").markdown]
    assert any("value: paper 3.2 (Table 1) · kb 3" in t for t in texts), texts
    reason = next(t for t in texts if t.startswith("value = 3"))
    assert "\n" not in reason and "meets '> 2.0'" in reason  # the path is not repeated inside the threshold
