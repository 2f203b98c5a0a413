"""A worker notices its SQLite index replaced or deleted under it (real ``kb worker --forever`` processes).

Without the check, a worker whose ``index.sqlite`` was deleted (and its write-ahead log) keeps working in
the deleted file and never sees runs queued in the new index. Executions are counted in the noop analyzer's
own log.
"""

from __future__ import annotations

import collections
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from kb.core import KnowledgeBase
from kb.queue import store as queue_store
from kb.settings import Settings
from tests.helpers.workers import wait_until

ROOT = Path(__file__).resolve().parents[1]


def _index_files(home: Path) -> list[Path]:
    return [home / name for name in ("index.sqlite", "index.sqlite-wal", "index.sqlite-shm")]


def _fresh(tmp_path: Path) -> KnowledgeBase:
    return KnowledgeBase(Settings(papers=tmp_path / "papers", home=tmp_path / "home"))


def _started(log: Path, value: float) -> bool:
    return log.exists() and f"start {value}" in log.read_text()


def test_a_replaced_index_is_noticed_and_its_runs_are_worked(
        tmp_path: Path, kb_workers: Callable[..., subprocess.Popen[bytes]]) -> None:
    (tmp_path / "papers").mkdir()
    log = tmp_path / "executions.log"
    queue_store.enqueue(_fresh(tmp_path).engine, "noop", {"value": 1.0, "steps": 200, "step_seconds": 0.25,
                                                          "log_file": str(log)})
    proc = kb_workers()
    wait_until(lambda: _started(log, 1.0), 60, "the worker took the first run")
    moved = tmp_path / "old-index"
    moved.mkdir()
    for path in _index_files(tmp_path / "home"):
        if path.exists():
            path.rename(moved / path.name)
    new = _fresh(tmp_path)  # a new index under the same name (a rebuild, a restored backup)
    queue_store.enqueue(new.engine, "noop", {"value": 2.0, "log_file": str(log)})
    wait_until(lambda: [r.status.value for r in new.runs()] == ["succeeded"], 60, "the run queued in the new index ran")
    said = (tmp_path / "worker-0.log").read_text()
    assert said.count("was replaced under this worker") == 1, said
    assert proc.poll() is None
    lines = collections.Counter(log.read_text().splitlines())
    assert lines["start 1.0"] == 1 and lines["start 2.0"] == lines["end 2.0"] == 1, lines


def test_a_deleted_index_stops_the_worker_with_one_line(
        tmp_path: Path, kb_workers: Callable[..., subprocess.Popen[bytes]]) -> None:
    (tmp_path / "papers").mkdir()
    _fresh(tmp_path).index()
    proc = kb_workers()
    wait_until(lambda: (tmp_path / "home" / "worker.json").exists(), 60, "the worker started")
    time.sleep(2)  # the worker is polling its index
    for path in _index_files(tmp_path / "home"):
        path.unlink(missing_ok=True)
    assert proc.wait(timeout=20) == 0
    said = (tmp_path / "worker-0.log").read_text()
    assert said.count("was deleted under this worker") == 1, said
    assert not (tmp_path / "home" / "index.sqlite").exists(), "the worker did not make an empty index in its place"
