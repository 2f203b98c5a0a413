"""A worker started while its PostgreSQL index is down waits for it, as a running worker does (real server,
real ``kb worker`` processes); only ``--no-wait`` exits 3 at once."""

from __future__ import annotations

import collections
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from kb.core import KnowledgeBase
from kb.queue import store as queue_store
from kb.settings import Settings
from tests.helpers.workers import wait_until
from tests.servers import start_postgres, stop_postgres

ROOT = Path(__file__).resolve().parents[1]


def _answers(url: str) -> bool:
    engine = create_engine(url, pool_pre_ping=True)
    try:
        with engine.connect() as connection:
            connection.execute(text("SELECT 1"))
        return True
    except Exception:  # noqa: BLE001 - down, refusing, starting up: all mean "not now"
        return False
    finally:
        engine.dispose()


@pytest.mark.postgres
def test_a_worker_started_during_an_outage_waits_and_no_wait_exits_3(tmp_path: Path, pg_database: str,
                                                                      pg_url: str) -> None:
    (tmp_path / "papers").mkdir()
    kb = KnowledgeBase(Settings(papers=tmp_path / "papers", home=tmp_path / "home", database_url=pg_database))
    log = tmp_path / "executions.log"
    queue_store.enqueue(kb.engine, "noop", {"value": 1.0, "log_file": str(log)})
    kb.engine.dispose()
    # The server stays down until both workers have met the outage (the waiting one said so, --no-wait exited),
    # however long this machine takes to start them, and then comes back: no fixed outage to outlast start-up.
    stop_postgres(pg_url)
    said = tmp_path / "waiting.err"
    try:
        command = [sys.executable, "-m", "kb.cli", "worker", "--papers", str(tmp_path / "papers"), "--home",
                   str(tmp_path / "home")]
        env = {**os.environ, "KB_DATABASE_URL": pg_database}
        with said.open("w") as stderr:
            waiting = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=stderr, text=True)
        at_once = subprocess.run([*command, "--no-wait"], cwd=ROOT, env=env, capture_output=True, text=True,
                                 timeout=60)
        wait_until(lambda: "unavailable while starting the worker" in said.read_text(), 60,
                   "the waiting worker met the outage")
        assert not _answers(pg_database), "the server was down all along"
    finally:
        start_postgres(pg_url)
    out, _ = waiting.communicate(timeout=120)
    err = said.read_text()
    assert at_once.returncode == 3 and "not answering just now" in at_once.stderr, at_once.stderr
    assert waiting.returncode == 0, err
    assert "unavailable while starting the worker" in err and "answers again after" in err, err
    assert "1 succeeded" in out, out
    assert collections.Counter(log.read_text().splitlines()) == {"start 1.0": 1, "end 1.0": 1}
