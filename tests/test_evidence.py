"""One claim-state rule (``kb.evidence.claim_states``): every surface reports the same state for a claim in every state.

The claims are made real: a note bound to the noop analyzer, runs through the real queue and worker on
a real SQLite index, a binding changed after its run (stale), and evidence recorded before its claim
was indexed (no verdict). Then the rule itself, the Library, the CLI (``kb show``, ``kb evidence``),
the Note page (Streamlit AppTest) and the agents' tools must all say the same.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
import streamlit as st
from sqlmodel import Session, select
from streamlit.testing.v1 import AppTest

from app.widgets import STATE_STYLE
from kb import __version__
from kb.agents.queries import claim_states as agent_claim_states
from kb.agents.tools import build_tools
from kb.core import KnowledgeBase
from kb.evidence import claim_states as evidence
from kb.evidence.claim_states import ClaimState
from kb.index.database import Evidence
from kb.queue import store as queue_store
from kb.settings import Settings
from tests.helpers.cli import run_kb

ROOT = Path(__file__).resolve().parents[1]

# One claim per state; ``{stale_value}`` changes after the run, ``{late}`` adds a claim after its run.
NOTE = textwrap.dedent("""\
    ---
    paper_id: "test:states"
    title: "Every claim state"
    claims:
      - id: sup
        statement: "The echoed value is above 2."
        analyzer: {{name: noop, params: {{value: 3}}}}
        expect: {{metric: value, op: ">", value: 2}}
      - id: ref
        statement: "The echoed one is above 2."
        analyzer: {{name: noop, params: {{value: 1}}}}
        expect: {{metric: value, op: ">", value: 2}}
      - id: inc
        statement: "The echoed value is clearly above 2."
        analyzer: {{name: noop, params: {{value: 2.05}}}}
        expect: {{metric: value, op: ">", value: 2, inconclusive_band: 0.1}}
      - id: nr
        statement: "It needs a GPU."
        analyzer: {{name: noop, params: {{not_runnable: "needs a GPU"}}}}
        expect: {{metric: value, op: ">", value: 2}}
      - id: err
        statement: "A path the result does not have is positive."
        analyzer: {{name: noop, params: {{value: 3}}}}
        expect: {{metric: value.missing, op: ">", value: 0}}
      - id: old
        statement: "The value it was once given is above 2."
        analyzer: {{name: noop, params: {{value: {stale_value}}}}}
        expect: {{metric: value, op: ">", value: 2}}
      - id: pcon
        statement: "At 650M parameters the echoed value is above 2."
        analyzer: {{name: noop, params: {{value: 3}}}}
        expect: {{metric: value, op: ">", value: 2}}
        scale: {{parameters: 650000000}}
      - id: podd
        statement: "At 650M parameters the echoed one is above 2."
        analyzer: {{name: noop, params: {{value: 1}}}}
        expect: {{metric: value, op: ">", value: 2}}
        scale: {{parameters: 650000000}}
      - id: unv
        statement: "Never run yet."
        analyzer: {{name: noop, params: {{value: 9}}}}
        expect: {{metric: value, op: ">", value: 2}}
      - id: unb
        statement: "A claim with no analyzer."
    {late}---
    body
    """)
LATE = textwrap.indent(textwrap.dedent("""\
    - id: nov
      statement: "Evidence made before this claim was indexed."
      analyzer: {name: noop}
      expect: {metric: value, op: ">", value: 0}
    """), "  ")

EXPECTED = {
    "sup": "supported", "ref": "refuted", "inc": "inconclusive", "nr": "not_runnable", "err": "error",
    "old": "stale", "unv": "unverified", "unb": "unbound",
    # Evidence at a smaller scale than the claim's leans one way without settling it.
    "pcon": "consistent_proxy", "podd": "at_odds_proxy",
    # Evidence no verdict was ever drawn for settles nothing: inconclusive (the Note page used to say 'error').
    "nov": "inconclusive",
}


@pytest.fixture(scope="module")
def states_kb(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeBase:
    """A knowledge base whose note 'states' has one claim in every state (see ``EXPECTED``)."""
    root = tmp_path_factory.mktemp("states")
    papers = root / "papers"
    papers.mkdir()
    note = papers / "states.md"
    note.write_text(NOTE.format(stale_value=3, late=""), encoding="utf-8")
    kb = KnowledgeBase(Settings(papers=papers, home=root / "home"))
    kb.index()
    queue_store.enqueue(kb.engine, "noop", {"value": 1.0}, claim_key="states#nov")  # its claim is not indexed yet
    queued, skipped = kb.verify([f"states#{c}" for c in ("sup", "ref", "inc", "nr", "err", "old", "pcon", "podd")])
    assert len(queued) == 8 and not skipped
    assert kb.work() == {"succeeded": 9}
    note.write_text(NOTE.format(stale_value=4, late=LATE), encoding="utf-8")
    kb.index()
    return kb


def test_claim_state_rule_gives_every_state(states_kb: KnowledgeBase) -> None:
    found = {key.split("#")[1]: status for key, status in evidence.claim_states(states_kb.engine, "states").items()}
    assert {c: s.state.value for c, s in found.items()} == EXPECTED
    assert found["old"].stale_reason == "the claim's analyzer parameters changed"
    assert found["old"].verdict == "supported"  # the verdict is kept beside the stale state
    assert {s.value for s in ClaimState} == set(EXPECTED.values())  # the note covers every state


def test_claim_state_library_counts_the_same_states(states_kb: KnowledgeBase) -> None:
    (row,) = [r for r in states_kb.library() if r.id == "states"]
    assert row.states == Counter(EXPECTED.values())  # the claim without an analyzer is counted too
    assert row.flags() == {"refuted", "stale", "unverified"}


def test_claim_state_cli_show_and_evidence_report_the_same_state(states_kb: KnowledgeBase) -> None:
    where = (states_kb.papers_dir, states_kb.settings.home)
    wide = {"COLUMNS": "200"}
    shown = run_kb(*where, "show", "states", "--json", env=wide)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert {c["id"]: c["state"] for c in json.loads(shown.stdout)[0]["claims"]} == EXPECTED
    table = run_kb(*where, "show", "states", env=wide)
    assert table.returncode == 0, table.stdout + table.stderr
    for claim, state in EXPECTED.items():  # the table shows each claim's state by its label
        (line,) = [line for line in table.stdout.splitlines() if line.startswith(f"{claim} ")]
        assert f" {evidence.label(state)} " in line, (claim, line)
        result = run_kb(*where, "evidence", f"states#{claim}", env=wide)
        assert result.returncode == 0, result.stdout + result.stderr
        assert f"state: {evidence.label(state)}" in result.stdout, (claim, result.stdout, result.stderr)


def test_claim_state_agents_report_the_same_state(states_kb: KnowledgeBase) -> None:
    found = {s.claim_key.split("#")[1]: s.state for s in agent_claim_states(states_kb, note_id="states")}
    assert found == EXPECTED
    box = build_tools(states_kb, ["read_note", "list_claims"])
    note = json.loads(box.tools["read_note"].invoke({"note_id": "states"}))
    assert {c["claim_key"].split("#")[1]: c["state"] for c in note["claims"]} == EXPECTED
    listed = json.loads(box.tools["list_claims"].invoke({"note_id": "states", "limit": 50}))
    assert {c["claim_key"].split("#")[1]: c["state"] for c in listed} == EXPECTED
    stale = json.loads(box.tools["list_claims"].invoke({"state": ["stale"]}))
    assert [c["claim_key"] for c in stale] == ["states#old"]


def test_claim_state_note_page_shows_the_same_state(states_kb: KnowledgeBase,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KB_PAPERS", str(states_kb.papers_dir))
    monkeypatch.setenv("KB_HOME", str(states_kb.settings.home))
    monkeypatch.setenv("KB_APP_WORKER", "false")
    monkeypatch.delenv("KB_DATABASE_URL", raising=False)
    st.cache_resource.clear()
    st.cache_data.clear()
    try:
        at = AppTest.from_file(str(ROOT / "app" / "main.py"), default_timeout=60).run()
        at.query_params.update({"id": "states"})
        at.switch_page("views/note.py").run()
        assert not at.exception, at.exception
        label_to_state = {label: state for state, (_, _, label) in STATE_STYLE.items()}
        shown: dict[str, str] = {}
        current: str | None = None
        for markdown in (m.value for m in at.markdown):
            if markdown.startswith("##### `"):
                current = markdown.removeprefix("##### `").rstrip("`")
            elif current and current not in shown and "-badge[" in markdown:
                label = markdown.split("]", 1)[0].rsplit(":", 1)[-1].strip().removeprefix("[")
                if label in label_to_state:
                    shown[current] = label_to_state[label]
        assert shown == EXPECTED
        badges = [m.value for m in at.markdown if "-badge[" in m.value]
        for state, count in Counter(EXPECTED.values()).items():
            assert any(b.endswith(f" {count} {STATE_STYLE[state][2]}]") for b in badges), (state, badges)
    finally:
        st.cache_resource.clear()
        st.cache_data.clear()


def test_latest_evidence_is_the_newest_row_of_each_claim(states_kb: KnowledgeBase) -> None:
    with Session(states_kb.engine) as session:
        every = evidence.latest_evidence(session)
        some = evidence.latest_evidence(session, ["states#sup", "states#unv"], with_verdict=True)
    assert set(every) == {f"states#{c}" for c in ("sup", "ref", "inc", "nr", "err", "old", "nov", "pcon", "podd")}
    for key, latest in every.items():
        assert latest.run_id == evidence.evidence_for(states_kb.engine, key, limit=1)[0].run_id
        # Read only when asked for, or where the state needs it: an inconclusive verdict may be a proxy.
        assert (latest.verdict_json is None) == (latest.verdict_kind != "inconclusive"), key
    assert set(some) == {"states#sup"} and '"supported"' in (some["states#sup"].verdict_json or "")


def test_stale_reason_names_what_changed(states_kb: KnowledgeBase) -> None:
    with Session(states_kb.engine) as session:
        current = evidence.latest_evidence(session, ["states#sup"])["states#sup"]
    binding = current.binding_hash
    assert evidence.stale_reason(current, binding) is None
    assert evidence.stale_reason(replace(current, kb_version="0.0.0"), binding) == \
        f"kb version changed (0.0.0 -> {__version__})"
    assert "analyzer version changed" in (evidence.stale_reason(replace(current, analyzer_version="0"), binding) or "")
    assert evidence.stale_reason(replace(current, analyzer="gone"), binding) == \
        "analyzer 'gone' is no longer registered"
    assert evidence.stale_reason(replace(current, stale=True, stale_reason=None), binding) == "superseded"
    assert evidence.stale_reason(current, "another-binding") == "the claim's analyzer parameters changed"
    # Evidence recorded before the version columns existed is judged on its provenance.
    with Session(states_kb.engine) as session:
        row = session.exec(select(Evidence).where(Evidence.run_id == current.run_id)).one()
    legacy = replace(current, analyzer_version=None, kb_version=None, provenance_json=row.provenance_json)
    assert evidence.stale_reason(legacy, binding) is None
    status = evidence.claim_state(replace(current, kb_version="0.0.0"), bound=True, binding_hash=binding)
    assert status.state is ClaimState.stale and status.verdict == "supported"


def test_hashing_index_imports_neither_the_queue_nor_the_worker() -> None:
    code = ("import sys, kb.index.indexing; print(sorted(m for m in sys.modules"
            " if m in ('kb.queue.store', 'kb.queue.execution', 'kb.evidence.claim_states')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"
