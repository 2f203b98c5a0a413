"""One clock: leases are judged on the database's time, so workers whose clocks disagree never rob each other.

Two real ``kb worker --forever`` processes share a PostgreSQL index; one of them runs under Debian's
``faketime`` 5 minutes ahead of (or behind) the host and, in its own UTS namespace, under another host
name, so that its peer cannot see its process and must judge its runs by their leases alone, as a worker
on another machine does. Each run must execute exactly once, counted in the analyzer's own log.
"""

from __future__ import annotations

import collections
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlmodel import Session, select

from kb.core import KnowledgeBase
from kb.index.database import Run
from kb.queue import store as queue_store
from kb.settings import Settings

ROOT = Path(__file__).resolve().parents[1]


def _other_host_command(offset: str, command: list[str]) -> list[str]:
    """``command`` under a clock ``offset`` away from the host's, as host 'kb-peer' (a new UTS namespace)."""
    script = 'hostname kb-peer && exec faketime -f "$0" "$@"'
    return ["unshare", "--uts", "sh", "-c", script, offset, *command]


def _can_fake_another_host() -> str | None:
    if shutil.which("faketime") is None:
        return "faketime is not installed (apt-get install faketime)"
    probe = subprocess.run(_other_host_command("+5m", ["hostname"]), capture_output=True, text=True, check=False)
    if probe.returncode != 0 or probe.stdout.strip() != "kb-peer":
        return f"cannot start a process under another host name here ({probe.stderr.strip()[:200]})"
    return None


@pytest.fixture
def worker_pair(tmp_path: Path) -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for proc in started:  # each in its own process group: faketime runs the worker as its child, which a
        # signal to faketime alone would leave running after the test (a `kb worker --forever` orphan)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.mark.postgres
@pytest.mark.parametrize("offset", ["+5m", "-5m"])
def test_two_workers_five_minutes_apart_run_each_run_once(
        tmp_path: Path, pg_database: str, offset: str, worker_pair: list[subprocess.Popen[bytes]]) -> None:
    why_not = _can_fake_another_host()
    if why_not:
        pytest.skip(why_not)
    (tmp_path / "papers").mkdir()
    settings = Settings(papers=tmp_path / "papers", home=tmp_path / "home", database_url=pg_database)
    kb = KnowledgeBase(settings)
    log = tmp_path / "executions.log"
    values = [float(i) for i in range(6)]
    for value in values:  # 4 s each: several heartbeats, and far longer than one lease is skewed by the clocks
        queue_store.enqueue(kb.engine, "noop", {"value": value, "steps": 8, "step_seconds": 0.5, "log_file": str(log)})
    command = [sys.executable, "-m", "kb.cli", "worker", "--forever", "--papers", str(tmp_path / "papers"),
               "--home", str(tmp_path / "home")]
    env = {**os.environ, "KB_DATABASE_URL": pg_database, "KB_LEASE_SECONDS": "6"}
    for n, cmd in enumerate([command, _other_host_command(offset, command)]):
        out = (tmp_path / f"worker-{n}.log").open("wb")
        worker_pair.append(subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                            start_new_session=True))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        with Session(kb.engine) as session:
            statuses = collections.Counter(r.status for r in session.exec(select(Run)).all())
        if statuses["succeeded"] == len(values):
            break
        time.sleep(0.3)
    logs = [(tmp_path / f"worker-{n}.log").read_text(errors="replace") for n in range(2)]
    assert statuses["succeeded"] == len(values), (statuses, logs)
    counted = collections.Counter(line for line in log.read_text().splitlines())
    assert counted == {f"{event} {value}": 1 for value in values for event in ("start", "end")}, (counted, logs)
    with Session(kb.engine) as session:
        runs = session.exec(select(Run)).all()
    assert {r.attempts for r in runs} == {1}, [(r.attempts, r.worker_id) for r in runs]
    holders = {(r.worker_id or "").split(":")[0] for r in runs}
    assert "kb-peer" in holders and len(holders) == 2, f"both workers took runs: {holders}"
    assert not any("its worker stopped" in text or "re-queued" in text for text in logs), logs
