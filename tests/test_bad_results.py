"""An analyzer that returns None (with a metrics.json of its own, JSON or not) fails its run with the reason,
and nothing it wrote becomes evidence. A real ``kb worker`` process on a real SQLite index and folder store.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from sqlmodel import Session, select

from kb.core import KnowledgeBase
from kb.index.database import Evidence
from kb.queue import store as queue_store
from kb.settings import Settings

ROOT = Path(__file__).resolve().parents[1]


def test_an_analyzer_returning_none_fails_its_run_and_leaves_no_evidence(tmp_path: Path) -> None:
    (tmp_path / "papers").mkdir()
    kb = KnowledgeBase(Settings(papers=tmp_path / "papers", home=tmp_path / "home"))
    kb.index()
    ids = [queue_store.enqueue(kb.engine, "none-result", {"broken_metrics": broken}).id for broken in (False, True)]
    env = {**os.environ, "KB_ANALYZER_MODULES": "tests.noop_analyzer,tests.helpers.bad_result"}
    done = subprocess.run([sys.executable, "-m", "kb.cli", "worker", "--papers", str(tmp_path / "papers"),
                           "--home", str(tmp_path / "home")], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    for run_id in ids:
        run = kb.get_run(run_id)
        assert run is not None and run.status.value == "failed", run
        assert run.error is not None and run.error.startswith("invalid result: analyzer none-result returned "
                                                              "NoneType, not its result (NoneResult)"), run.error
        record = json.loads((tmp_path / "home" / "runs" / run_id / "attempt-1.json").read_text())
        assert record["run"]["status"] == "failed" and record["evidence"] is None
    with Session(kb.engine) as session:
        assert session.exec(select(Evidence)).all() == []
    assert not list((tmp_path / "home").rglob("metrics.json")), "nothing it wrote was kept"
    assert not (tmp_path / "home" / "evidence").exists()
