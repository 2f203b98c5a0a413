"""The app's run page says where a queued run stands: its place in line and expected start (Streamlit AppTest)."""

from __future__ import annotations

from kb.queue import store as queue_store
from tests.helpers.app_env import AppEnv, open_app


def test_runs_page_shows_a_queued_runs_place_in_line(app_env: AppEnv) -> None:
    kb = app_env.kb
    queue_store.enqueue(kb.engine, "noop", {"value": 9.0}, priority=queue_store.BULK, expected_seconds=600)
    (mine,), _ = kb.verify(["noop-note#value-above-two"])  # interactive: ahead of the bulk run queued first
    at = open_app("runs", run=mine.id)
    shown = [element.proto.text for element in at.get("progress")]
    assert shown and shown[0].startswith("queued: #1 in line"), shown
