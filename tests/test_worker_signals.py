"""SIGTERM and SIGINT finish or hand back: real ``kb worker --forever`` processes beside a live peer.

A worker told to stop takes no new run, lets the running one reach its next checkpoint (bounded by
``KB_STOP_GRACE_SECONDS``), hands the run back to the queue at once (no waiting for a lease), removes its
staging folders and exits 0; the peer resumes the run from that checkpoint and it ends once, counted in the
noop analyzer's own log.
"""

from __future__ import annotations

import collections
import json
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlmodel import Session, select

from kb.core import KnowledgeBase
from kb.index.database import Evidence, Run
from kb.queue import store as queue_store
from kb.settings import Settings
from tests.helpers.cli import run_kb
from tests.helpers.workers import wait_until

ROOT = Path(__file__).resolve().parents[1]


def _kb(tmp_path: Path) -> KnowledgeBase:
    (tmp_path / "papers").mkdir(exist_ok=True)
    return KnowledgeBase(Settings(papers=tmp_path / "papers", home=tmp_path / "home"))


def _row(kb: KnowledgeBase, run_id: str) -> Run:
    with Session(kb.engine) as session:
        row = session.get(Run, run_id)
        assert row is not None
        return row


def _staging(tmp_path: Path, run_id: str, attempt: int) -> list[Path]:
    root = tmp_path / "home" / "staging"
    return [p for p in root.iterdir() if f"-{run_id}-a{attempt}-" in p.name] if root.is_dir() else []


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stopped_worker_hands_its_run_to_a_live_peer_at_its_next_checkpoint(
        tmp_path: Path, kb_workers: Callable[..., subprocess.Popen[bytes]], sig: signal.Signals) -> None:
    kb = _kb(tmp_path)
    log = tmp_path / "executions.log"
    run = queue_store.enqueue(kb.engine, "noop", {"value": 1.0, "steps": 40, "step_seconds": 0.25,
                                                  "log_file": str(log)})
    first = kb_workers(KB_STOP_GRACE_SECONDS="20")
    wait_until(lambda: (_row(kb, run.id).progress or 0) >= 0.2, 60, "the first worker is a fifth of the way")
    peer = kb_workers()
    time.sleep(1.0)  # the peer is up and polling (the run stays with the first worker meanwhile)
    assert _row(kb, run.id).attempts == 1
    stopped_at = time.monotonic()
    first.send_signal(sig)
    assert first.wait(timeout=15) == 0, (tmp_path / "worker-0.log").read_text()
    assert time.monotonic() - stopped_at < 5, "it stopped at its next checkpoint, not at the run's end"
    assert not _staging(tmp_path, run.id, 1), "its staging folders are gone"
    wait_until(lambda: _row(kb, run.id).status == "succeeded", 60, "the peer finished the run")
    row = _row(kb, run.id)
    assert row.attempts == 2 and row.worker_id and row.worker_id.endswith(f":{peer.pid}")
    said = (tmp_path / "worker-0.log").read_text()
    assert "taking no more runs" in said and "handed back to the queue" in said, said
    lines = collections.Counter(log.read_text().splitlines())
    assert lines == {"start 1.0": 2, "end 1.0": 1}, lines  # one execution, resumed once, ended once
    with Session(kb.engine) as session:
        evidence = session.exec(select(Evidence).where(Evidence.run_id == run.id)).one()
    notes = json.loads(evidence.metrics_json).get("notes") or []
    assert any("resumed from a checkpoint at step" in note for note in notes), evidence.metrics_json
    log_key = next(key for key in json.loads(evidence.artifacts_json) if key.endswith("/log.txt"))
    run_log = (tmp_path / "home" / log_key).read_text()
    assert "attempt 1 on" in run_log and "attempt 2 on" in run_log, run_log  # log.txt keeps every attempt
    assert run_log.index("attempt 1 on") < run_log.index("attempt 2 on")
    assert peer.poll() is None


def test_a_run_that_reaches_no_checkpoint_is_handed_back_when_the_grace_period_ends(
        tmp_path: Path, kb_workers: Callable[..., subprocess.Popen[bytes]]) -> None:
    kb = _kb(tmp_path)
    log = tmp_path / "executions.log"
    # One step of 6 s: no progress report and no checkpoint until it ends. The worker is stopped as the step
    # starts, so its 1 s grace ends about 5 s before the step would; the new worker then sleeps the whole step.
    run = queue_store.enqueue(kb.engine, "noop", {"value": 2.0, "steps": 1, "step_seconds": 6.0,
                                                  "log_file": str(log)})
    first = kb_workers(KB_STOP_GRACE_SECONDS="1")
    wait_until(lambda: log.exists() and "start 2.0" in log.read_text(), 60, "the run started")
    first.send_signal(signal.SIGTERM)
    assert first.wait(timeout=10) == 0, (tmp_path / "worker-0.log").read_text()
    assert "grace period; handed back" in (tmp_path / "worker-0.log").read_text()
    assert not _staging(tmp_path, run.id, 1)
    row = _row(kb, run.id)
    assert row.status == "queued" and "stopped" in (row.message or ""), (row.status, row.message)
    listing = run_kb(tmp_path / "papers", tmp_path / "home", "runs")
    assert "#1 in line" in listing.stdout and "no worker is alive" in listing.stdout, listing.stdout
    kb_workers()
    wait_until(lambda: _row(kb, run.id).status == "succeeded", 60, "a new worker finished it")
    assert collections.Counter(log.read_text().splitlines()) == {"start 2.0": 2, "end 2.0": 1}


def test_a_killed_worker_reads_as_stopped_until_a_worker_takes_its_run(
        tmp_path: Path, kb_workers: Callable[..., subprocess.Popen[bytes]]) -> None:
    kb = _kb(tmp_path)
    run = queue_store.enqueue(kb.engine, "noop", {"value": 3.0, "steps": 40, "step_seconds": 0.25})
    first = kb_workers()
    wait_until(lambda: _row(kb, run.id).status == "running", 60, "the worker took the run")
    first.kill()
    first.wait()
    listing = run_kb(tmp_path / "papers", tmp_path / "home", "runs", "--json")
    shown = {r["id"]: r for r in json.loads(listing.stdout)}
    assert shown[run.id]["status"] == "running"
    assert shown[run.id]["waiting"] == queue_store.ORPHANED


def test_an_idle_worker_exits_at_once_on_sigterm(tmp_path: Path,
                                                  kb_workers: Callable[..., subprocess.Popen[bytes]]) -> None:
    _kb(tmp_path)
    idle = kb_workers()
    wait_until(lambda: "worker" in (tmp_path / "home" / "worker.json").read_text()
          if (tmp_path / "home" / "worker.json").exists() else False, 60, "the worker registered")
    idle.send_signal(signal.SIGTERM)
    assert idle.wait(timeout=10) == 0
    assert not (tmp_path / "home" / "worker.json").exists(), "it took its pidfile away"
