"""The same work is never queued twice (faults and a shared queue): a verify of a claim whose same runs are
queued or running joins them, on the CLI, in the app's Re-verify and in the demo, and a person's verify
hastens a run the demo queued in bulk; other work (another device, the runs ended) is queued anew."""

from __future__ import annotations

from pathlib import Path

from kb.queue import store as queue_store
from schemas import RunStatus
from tests.helpers.cli import run_kb
from tests.helpers.queue_kb import queue_kb

KEY = "q#echo-big"


def test_a_second_verify_joins_the_queued_run_and_a_person_hastens_a_bulk_one(tmp_path: Path) -> None:
    kb = queue_kb(tmp_path)
    (bulk,), _ = kb.verify()  # every claim, as the demo queues them: bulk
    assert bulk.priority == queue_store.BULK and bulk.id not in kb.joined_runs
    (again,), skipped = kb.verify([KEY])  # a person now waits on it
    assert again.id == bulk.id and again.id in kb.joined_runs and skipped == []
    assert [r.id for r in kb.runs(limit=10)] == [bulk.id]  # one run, not two
    record = queue_store.get_run(kb.engine, bulk.id)
    assert record is not None and record.priority == queue_store.INTERACTIVE
    (elsewhere,), _ = kb.verify([KEY], device="cuda")  # other work: queued anew
    assert elsewhere.id != bulk.id and elsewhere.id not in kb.joined_runs
    kb.cancel(elsewhere.id)
    assert kb.work(once=True) == {"succeeded": 1}
    (fresh,), _ = kb.verify([KEY])  # the run ended: verifying again is new work
    assert fresh.id not in {bulk.id, elsewhere.id} and fresh.id not in kb.joined_runs


def test_a_running_run_is_joined_too(tmp_path: Path) -> None:
    kb = queue_kb(tmp_path)
    (first,), _ = kb.verify([KEY])
    taken = queue_store.claim_next(kb.engine, "elsewhere:1")  # a worker holds it
    assert taken is not None and taken.id == first.id
    (again,), _ = kb.verify([KEY])
    assert again.id == first.id and again.status is RunStatus.running
    # what the CLI prints and the app flashes, from one place
    assert kb.queued_message([again], "the claim") == (
        "queued 0 run(s) for the claim; joined 1 already queued or running (the same work, not queued twice)")
    assert kb.queued_message(kb.verify([KEY], device="cuda")[0]) == "queued 1 run(s)"


def test_the_cli_says_it_joined_the_queued_run(tmp_path: Path) -> None:
    kb = queue_kb(tmp_path)
    papers, home = kb.settings.papers, kb.settings.home
    first = run_kb(papers, home, "verify", KEY, "--queue-only")
    assert first.returncode == 0 and "queued 1 run(s)" in first.stdout, first.stdout + first.stderr
    second = run_kb(papers, home, "verify", KEY, "--queue-only")
    assert second.returncode == 0, second.stderr
    assert "queued 0 run(s); joined 1 already queued or running" in " ".join(second.stdout.split())
    assert len(kb.runs(limit=10)) == 1
    # in the foreground, the joined run is the one run here, and its verdict lands
    third = run_kb(papers, home, "verify", KEY)
    assert third.returncode == 0 and "q#echo-big: supported" in third.stdout, third.stdout + third.stderr
    assert [r.status for r in kb.runs(limit=10)] == [RunStatus.succeeded]
