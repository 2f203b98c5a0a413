"""Fair, visible scheduling: a person's verify of one claim is never stuck behind hours of bulk work.

The queue's order (interactive before bulk, short before long, waiting raises priority) is checked on a
real SQLite index; the second lane through real processes: a ``kb worker --forever`` holds a 7-hour bulk
run of the noop analyzer when ``kb verify <claim> --queue-only`` (what the app's re-verify does) queues a
short one, and the verdict must come within a minute, counted in the analyzer's own log.
"""

from __future__ import annotations

import collections
import datetime as dt
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import update
from sqlmodel import Session, col

from kb.core import KnowledgeBase
from kb.index.database import Run
from kb.queue import store as queue_store
from kb.settings import Settings
from tests.helpers.app_env import SOURCE_TEXT, noop_note
from tests.helpers.cli import run_kb
from tests.helpers.workers import wait_until

ROOT = Path(__file__).resolve().parents[1]
CLAIM = "noop-note#value-above-two"
SEVEN_HOURS = 7 * 3600.0


def _home(tmp_path: Path, log: Path | None = None) -> KnowledgeBase:
    """A KB home over one note whose claim the noop analyzer settles (its executions logged to ``log``)."""
    papers = tmp_path / "papers"
    (papers / "sources").mkdir(parents=True)
    (papers / "sources" / "noop.txt").write_text(SOURCE_TEXT, encoding="utf-8")
    note = noop_note()
    indent = note.split("name: noop")[0].rsplit("\n", 1)[1]
    note = note.replace("name: noop", f"name: noop\n{indent}scale: smoke")  # a preset: its time is known
    if log is not None:
        indent = note.split("value: 3")[0].rsplit("\n", 1)[1]
        note = note.replace("value: 3", f'value: 3\n{indent}log_file: "{log}"')
    (papers / "noop-note.md").write_text(note, encoding="utf-8")
    kb = KnowledgeBase(Settings(papers=papers, home=tmp_path / "home"))
    kb.index()
    return kb


def _status(kb: KnowledgeBase, run_id: str) -> str | None:
    found = kb.get_run(run_id)
    return found.status.value if found is not None else None


def test_the_queue_serves_interactive_then_short_then_old(tmp_path: Path) -> None:
    kb = _home(tmp_path)
    engine = kb.engine
    bulk_long = queue_store.enqueue(engine, "noop", {"value": 1.0}, priority=queue_store.BULK, expected_seconds=3600)
    bulk_short = queue_store.enqueue(engine, "noop", {"value": 2.0}, priority=queue_store.BULK, expected_seconds=5)
    mine_unknown = queue_store.enqueue(engine, "noop", {"value": 3.0})
    mine_long = queue_store.enqueue(engine, "noop", {"value": 4.0}, expected_seconds=600)
    mine_short = queue_store.enqueue(engine, "noop", {"value": 5.0}, expected_seconds=10)
    positions = queue_store.queue_positions(engine)
    assert [positions[r.id][0] for r in (mine_short, mine_long, mine_unknown, bulk_short, bulk_long)] == [1, 2, 3, 4, 5]
    assert positions[mine_long.id][1] == pytest.approx(10.0)  # nothing running: the runs ahead of it
    assert positions[bulk_short.id][1] is None  # behind a run of unknown length
    # A bulk run that waited three age steps is more urgent than a fresh interactive one: it goes first.
    with Session(engine) as session:
        session.exec(update(Run).where(col(Run.id) == bulk_long.id)  # type: ignore[call-overload]
                     .values(created_at=dt.datetime.now(dt.UTC) - 3 * queue_store.AGE_STEP - dt.timedelta(minutes=1)))
        session.commit()
    order = []
    while (run := queue_store.claim_next(engine, "test:1")) is not None:
        order.append(run.id)
    assert order == [bulk_long.id, mine_short.id, mine_long.id, mine_unknown.id, bulk_short.id]


def test_verify_queues_named_claims_as_interactive_and_all_as_bulk(tmp_path: Path) -> None:
    kb = _home(tmp_path)
    every, _ = kb.verify(None)
    assert [r.priority for r in every] == [queue_store.BULK]
    named, _ = kb.verify([CLAIM])  # the same work, now named: it joins the bulk run and hastens it
    assert [r.id for r in named] == [r.id for r in every] and named[0].id in kb.joined_runs
    hastened = kb.get_run(named[0].id)
    assert hastened is not None and hastened.priority == queue_store.INTERACTIVE
    kb.cancel(named[0].id)
    named, _ = kb.verify([CLAIM])
    assert [r.priority for r in named] == [queue_store.INTERACTIVE] and named[0].id not in kb.joined_runs
    assert named[0].expected_seconds is not None and named[0].expected_seconds < queue_store.SHORT_SECONDS
    queue_store.enqueue(kb.engine, "noop", {"value": 1.0}, priority=queue_store.BULK)  # a second in line
    listing = run_kb(kb.settings.papers, kb.settings.home, "runs")
    assert "#1 in line" in listing.stdout and "#2 in line" in listing.stdout, listing.stdout
    assert "no worker is alive" in listing.stdout, listing.stdout


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="the second lane needs 2 cores")
@pytest.mark.parametrize("lane", [True, False])
def test_a_short_verify_behind_a_seven_hour_run_gets_its_verdict_within_a_minute(
        tmp_path: Path, kb_workers: Callable[..., subprocess.Popen[bytes]], lane: bool) -> None:
    log = tmp_path / "executions.log"
    kb = _home(tmp_path, log)
    steps = 100_000  # 100,000 steps of 0.252 s: 7 hours
    long_run = queue_store.enqueue(kb.engine, "noop", {"value": 99.0, "steps": steps, "step_seconds": 0.252,
                                                       "log_file": str(log)},
                                   priority=queue_store.BULK, expected_seconds=SEVEN_HOURS)
    kb_workers(KB_SHORT_LANE=str(lane).lower())
    wait_until(lambda: _status(kb, long_run.id) == "running", 60, "the worker took the 7-hour run")
    queued_at = time.monotonic()
    out = run_kb(kb.settings.papers, kb.settings.home, "verify", CLAIM, "--queue-only")
    assert out.returncode == 0, out.stderr
    assert "in line" in out.stdout, out.stdout  # its place and expected start, said when it is queued

    def verdict() -> bool:
        found = kb.evidence(CLAIM)
        return bool(found) and found[0].verdict is not None

    if not lane:  # without the lane it waits behind the long run: the lane is what makes the difference
        time.sleep(10)
        assert not verdict()
        return
    wait_until(verdict, 60, "the short verify's verdict")
    waited = time.monotonic() - queued_at
    print(f"\nshort interactive verify queued behind a 7-hour run: verdict {waited:.1f} s after queueing")
    assert kb.evidence(CLAIM)[0].verdict.kind.value == "supported"  # type: ignore[union-attr]
    assert _status(kb, long_run.id) == "running"  # the long run went on beside it
    lines = collections.Counter(log.read_text().splitlines())
    assert lines == {"start 99.0": 1, "start 3.0": 1, "end 3.0": 1}, lines
