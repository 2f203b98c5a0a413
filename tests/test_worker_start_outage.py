"""A worker started while its PostgreSQL index is down waits for it, as a running worker does (real server,
real ``kb worker`` processes); only ``--no-wait`` exits 3 at once."""

from __future__ import annotations

import collections
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from kb.core import KnowledgeBase
from kb.queue import store as queue_store
from kb.settings import Settings
from tests.servers import restart_postgres

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
    outage = threading.Thread(target=restart_postgres, args=(pg_url, 25.0))
    outage.start()
    deadline = time.monotonic() + 30
    while _answers(pg_database) and time.monotonic() < deadline:
        time.sleep(0.2)
    command = [sys.executable, "-m", "kb.cli", "worker", "--papers", str(tmp_path / "papers"), "--home",
               str(tmp_path / "home")]
    env = {**os.environ, "KB_DATABASE_URL": pg_database}
    waiting = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    at_once = subprocess.run([*command, "--no-wait"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert outage.is_alive(), "the server was down all along (a slower machine needs a longer outage)"
    outage.join()
    out, err = waiting.communicate(timeout=120)
    assert at_once.returncode == 3 and "not answering just now" in at_once.stderr, at_once.stderr
    assert waiting.returncode == 0, err
    assert "unavailable while starting the worker" in err and "answers again after" in err, err
    assert "1 succeeded" in out, out
    assert collections.Counter(log.read_text().splitlines()) == {"start 1.0": 1, "end 1.0": 1}
