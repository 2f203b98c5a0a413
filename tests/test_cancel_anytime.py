"""Cancel at any moment: a run cancelled after its analyzer returned, while its files are being stored.

The cancel is a real write to the real SQLite index, made from inside the store's upload (the moment the
issue found: a 150 MB output on its way to the store); the store is a real folder store. The run must end
cancelled, with its cancelled record in the store and none of its files, and a rebuild must restore it
cancelled.
"""

from __future__ import annotations

import json
from pathlib import Path

from kb.core import KnowledgeBase
from kb.evidence.artifact_store import ArtifactStore
from kb.queue import execution
from kb.queue import store as queue_store
from kb.settings import Settings
from schemas import RunStatus


class CancelledWhileStoring(ArtifactStore):
    """A folder store whose user cancels the run once its files are uploaded, before the outcome is recorded."""

    kb: KnowledgeBase
    run_id: str
    stored: list[str]

    def put_tree(self, folder: Path, *, move: bool = True) -> list[str]:
        self.stored = super().put_tree(folder, move=move)
        assert self.kb.cancel(self.run_id)
        return self.stored


def test_a_run_cancelled_while_its_output_is_stored_ends_cancelled_and_leaves_no_files(tmp_path: Path) -> None:
    (tmp_path / "papers").mkdir()
    store_url = str(tmp_path / "store")
    kb = KnowledgeBase(Settings(papers=tmp_path / "papers", home=tmp_path / "home", artifact_store=store_url))
    log = tmp_path / "executions.log"
    run = queue_store.enqueue(kb.engine, "noop", {"value": 7.0, "plot": True, "log_file": str(log)})
    store = CancelledWhileStoring(tmp_path / "home", store_url)
    store.kb, store.run_id = kb, run.id
    counts = execution.work(kb.engine, kb.job_config, watched=frozenset(), once=True, store=store)
    assert counts == {"cancelled": 1}
    assert log.read_text().splitlines() == ["start 7.0", "end 7.0"]  # it did run to the end, once
    found = kb.get_run(run.id)
    assert found is not None and found.status is RunStatus.cancelled
    assert store.stored and not any(store.exists(key) for key in store.stored), "its files left the store"
    records = sorted((tmp_path / "store" / "runs" / run.id).glob("attempt-*.json"))
    assert [json.loads(p.read_text())["run"]["status"] for p in records] == ["cancelled"]
    rebuilt = KnowledgeBase(Settings(papers=tmp_path / "papers", home=tmp_path / "home2", artifact_store=store_url))
    _, restored = rebuilt.rebuild_index()
    assert restored.restored == 1 and restored.skipped == []
    again = rebuilt.get_run(run.id)
    assert again is not None and again.status is RunStatus.cancelled
    assert rebuilt.runs(status="queued") == []
