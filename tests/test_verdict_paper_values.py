"""The paper's number compared (issue 35): where a claim carries ``paper_values``, kb says whether its interval
contains the paper's value, separately from the verdict on the claim's threshold, in
``kb.evidence.claim_states`` (through
the real seed rule), the CLI's ``kb evidence`` (text and ``--json``) and the app's Note page."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kb.core import KnowledgeBase
from kb.evidence.claim_states import paper_comparisons
from schemas import Claim
from tests.helpers.cli import run_kb
from tests.helpers.paper_values import note_page


def claim(paper: Any) -> Claim:
    return Claim.model_validate({"id": "c", "statement": "s", "expect": {"metric": "m", "op": ">", "value": 0},
                                 "paper_values": [{"value": paper, "where": "Table 2"}]})


def seeds(*values: float) -> list[dict[str, Any]]:
    """One result per seed, each with its own standard error over 30 sequences."""
    return [{"m": v, "checks": {"m": {"stderr": 0.01, "units": 30, "source": "sequences"}}} for v in values]


def test_kbs_interval_containing_the_papers_value_reproduces_it() -> None:
    (found,) = paper_comparisons(claim(0.5), seeds(0.49, 0.50, 0.51))
    assert found.reproduces is True and found.comparison() == "reproduces the paper's 0.5"


def test_kbs_interval_excluding_the_papers_value_does_not_and_shows_kbs_interval() -> None:
    (found,) = paper_comparisons(claim(0.5), seeds(0.04, 0.05, 0.06))
    assert found.reproduces is False and found.kb is not None
    assert found.comparison() == f"does not: kb 0.05 [{found.kb.low:.4g}, {found.kb.high:.4g}] excludes the paper's 0.5"
    assert found.kb.low is not None and found.kb.high is not None and found.kb.high < 0.5
    assert "does not: kb 0.05" in found.text() and "paper 0.5 (Table 2)" in found.text()


def test_a_reported_range_is_reproduced_when_kbs_interval_overlaps_it() -> None:
    assert paper_comparisons(claim([0.4, 0.6]), seeds(0.61, 0.62, 0.63))[0].reproduces is True
    assert paper_comparisons(claim([0.4, 0.6]), seeds(0.9, 0.91, 0.92))[0].reproduces is False


def test_kb_cannot_tell_when_its_value_settles_nothing() -> None:
    (two,) = paper_comparisons(claim(0.5), seeds(0.49, 0.51))  # two seeds: unresolved
    assert two.reproduces is None and two.comparison().startswith("cannot tell")
    (none,) = paper_comparisons(claim(0.5), None)
    assert none.reproduces is None and "not run yet" in none.text()


def test_cli_and_json_say_whether_kb_reproduces_the_papers_value(kb_env: KnowledgeBase) -> None:
    queued, _ = kb_env.verify(["paper-values"])
    assert kb_env.work() == {"succeeded": len(queued)}
    papers, home = kb_env.settings.papers, kb_env.settings.home
    shown = run_kb(papers, home, "evidence", "paper-values#echoed")
    assert shown.returncode == 0, shown.stderr
    words = " ".join(shown.stdout.replace("│", " ").split())  # the panel's borders and wrapping removed
    assert "does not: kb 3 [3, 3] excludes the paper's 3.2" in words, words
    printed = run_kb(papers, home, "evidence", "paper-values#echoed", "--json")
    (record,) = json.loads(printed.stdout)
    (paper,) = record["paper_vs_kb"]
    assert paper["reproduces"] is False and paper["paper"] == 3.2 and paper["kb"]["mean"] == 3
    assert record["verdict"]["kind"] == "supported"  # the claim's own threshold holds: a separate question


def test_app_note_page_says_whether_kb_reproduces_the_papers_value(kb_env: KnowledgeBase) -> None:
    queued, _ = kb_env.verify(["paper-values"])
    assert kb_env.work() == {"succeeded": len(queued)}
    # What a person reads: the Markdown source with the escapes that keep a note's text from being Markdown.
    texts = [m.value.replace("\\", "") for m in note_page("paper-values").markdown]
    assert any("kb 3" in t and "does not: kb 3 [3, 3] excludes the paper's 3.2" in t for t in texts), texts


@pytest.mark.parametrize("paper", [3, 3.0])
def test_an_exact_value_equal_to_the_papers_reproduces_it(paper: float) -> None:
    (found,) = paper_comparisons(claim(paper), [{"m": 3, "checks": {"m": {"exact": True}}}])
    assert found.reproduces is True
