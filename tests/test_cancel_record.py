"""A queued run cancelled from the CLI leaves the same outcome record in the artifact store as a running run
cancelled under its worker, so ``kb index --rebuild`` restores it cancelled (real SQLite, the real CLI through
typer's runner, the noop analyzer on the real queue and worker)."""

from __future__ import annotations

import json
import textwrap
import threading
from pathlib import Path
from typing import Any

from kb.core import KnowledgeBase
from kb.queue import execution
from kb.queue import store as queue_store
from kb.settings import Settings
from tests.helpers.cli import run_kb

NOTE = textwrap.dedent("""\
    ---
    paper_id: "test:cancel"
    title: "Cancel test"
    claims:
      - id: echo
        statement: "The echoed value is above 2."
        analyzer: {name: noop, params: {value: 3}}
        expect: {metric: value, op: ">", value: 2}
    ---
    body
    """)


def _kb(tmp_path: Path) -> KnowledgeBase:
    papers = tmp_path / "papers"
    papers.mkdir()
    (papers / "c.md").write_text(NOTE, encoding="utf-8")
    return KnowledgeBase(Settings(papers=papers, home=tmp_path / "home"))


def _records(home: Path, run_id: str) -> dict[str, dict[str, Any]]:
    """The run's outcome records in the (folder) artifact store, by file name."""
    paths = sorted((home / "runs" / run_id).glob("*.json"))
    return {path.name: json.loads(path.read_text()) for path in paths}


def _cli(kb: KnowledgeBase, *args: str) -> str:
    result = run_kb(kb.papers_dir, kb.settings.home, *args)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout + result.stderr


def test_cancel_a_queued_run_from_the_cli_records_its_outcome_like_a_cancelled_running_run(
        tmp_path: Path) -> None:
    kb = _kb(tmp_path)
    (queued,), _ = kb.verify(["c#echo"])
    assert _records(kb.settings.home, queued.id) == {}
    assert f"cancelled {queued.id}" in _cli(kb, "cancel", queued.id)
    (name, record), = _records(kb.settings.home, queued.id).items()
    assert name == "attempt-0.json"  # the attempt it never started
    assert record["run"]["status"] == "cancelled" and record["run"]["error"] is None
    assert record["evidence"] is None
    assert record["run"]["message"] == "cancelled" and record["run"]["finished_at"]
    # Cancelling again changes nothing: the run has ended.
    assert run_kb(kb.papers_dir, kb.settings.home, "cancel", queued.id).returncode != 0
    assert list(_records(kb.settings.home, queued.id)) == ["attempt-0.json"]

    # A running run cancelled under its worker: the record its worker writes has the same shape.
    running = queue_store.enqueue(kb.engine, "noop", {"steps": 200, "step_seconds": 0.05})
    claimed = queue_store.claim_next(kb.engine, "w", run_id=running.id)
    assert claimed is not None
    threading.Timer(0.5, kb.cancel, args=(running.id,)).start()
    status = execution.execute(kb.engine, kb.job_config, claimed, heartbeat_interval=0.1)
    assert status.value == "cancelled"
    (other,) = _records(kb.settings.home, running.id).values()
    assert set(other) == set(record) and set(other["run"]) == set(record["run"])
    assert (other["format"], other["run"]["status"], other["evidence"]) == (
        record["format"], "cancelled", None)

    # The index is a cache: rebuilt from the notes and the store, both runs come back cancelled, none queued.
    (kb.settings.home / "index.sqlite").unlink()
    _cli(kb, "index", "--rebuild")
    rebuilt = KnowledgeBase(Settings(papers=kb.papers_dir, home=kb.settings.home))
    assert {r.id: r.status.value for r in rebuilt.runs()} == {queued.id: "cancelled", running.id: "cancelled"}


def test_a_queued_run_a_worker_finished_first_keeps_no_cancelled_record(tmp_path: Path) -> None:
    kb = _kb(tmp_path)
    (queued,), _ = kb.verify(["c#echo"])
    assert kb.work() == {"succeeded": 1}
    assert not kb.cancel(queued.id)
    (record,) = _records(kb.settings.home, queued.id).values()
    assert record["run"]["status"] == "succeeded"
