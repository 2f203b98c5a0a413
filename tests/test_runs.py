"""The durable queue and worker on a real SQLite database: claims, evidence, verdicts, crashes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from sqlmodel import Session

from kb.core import KnowledgeBase
from kb.evidence.artifact_store import ArtifactStore
from kb.index.database import Run
from kb.queue import execution
from kb.queue import store as queue_store
from kb.settings import Settings
from schemas import RunStatus
from tests.helpers.queue_kb import NOTE, queue_kb


@pytest.mark.analyzer("noop")
def test_verify_runs_and_records_supported_verdict_with_artifacts(tmp_path: Path) -> None:
    kb = queue_kb(tmp_path)
    queued, skipped = kb.verify(["q#echo-big"])
    assert len(queued) == 1 and not skipped
    assert kb.work() == {"succeeded": 1}
    (ev,) = kb.evidence("q#echo-big")
    assert ev.verdict is not None and ev.verdict.kind.value == "supported"
    assert ev.metrics["value"] == 3.0
    assert ev.provenance is not None and ev.provenance.params_hash and ev.provenance.device == "cpu"
    stored = [kb.settings.home / a for a in ev.artifacts]
    assert any(p.name == "value.txt" and p.read_text() == "3.0\n" for p in stored)
    assert kb.staleness("q#echo-big") is None


def test_reverify_after_param_change_marks_old_evidence_stale(tmp_path: Path) -> None:
    kb = queue_kb(tmp_path)
    kb.verify(["q"])
    kb.work()
    (tmp_path / "papers" / "q.md").write_text(NOTE.format(value=1.0), encoding="utf-8")
    kb.index()
    assert kb.staleness("q#echo-big") == "the claim's analyzer parameters changed"
    assert kb.claim_keys(stale_only=True) == ["q#echo-big"]
    kb.verify(stale_only=True)
    kb.work()
    latest, earlier = kb.evidence("q#echo-big")
    assert latest.verdict and latest.verdict.kind.value == "refuted" and not latest.stale
    assert earlier.stale and "superseded" in (earlier.stale_reason or "")


def test_failed_run_keeps_earlier_evidence(tmp_path: Path) -> None:
    kb = queue_kb(tmp_path)
    kb.verify(["q"])
    kb.work()
    queue_store.enqueue(kb.engine, "noop", {"fail": True}, claim_key="q#echo-big")
    assert kb.work() == {"failed": 1}
    failed = kb.runs(status="failed")[0]
    assert "asked to fail" in (failed.error or "")
    (ev,) = kb.evidence("q#echo-big")
    assert ev.verdict and ev.verdict.kind.value == "supported" and not ev.stale


def test_not_runnable_is_recorded_with_reason(tmp_path: Path) -> None:
    kb = queue_kb(tmp_path)
    kb.index()
    queue_store.enqueue(kb.engine, "noop", {"not_runnable": "needs a GPU"}, claim_key="q#echo-big")
    kb.work()
    (ev,) = kb.evidence("q#echo-big")
    assert ev.verdict and ev.verdict.kind.value == "not_runnable" and ev.verdict.reason == "needs a GPU"


def test_two_workers_never_take_the_same_run(tmp_path: Path) -> None:
    kb = queue_kb(tmp_path)
    kb.index()
    ids = {queue_store.enqueue(kb.engine, "noop", {}).id for _ in range(40)}
    taken: dict[str, list[str]] = {"a": [], "b": []}

    def take(name: str) -> None:
        while (run := queue_store.claim_next(kb.engine, name)) is not None:
            taken[name].append(run.id)

    threads = [threading.Thread(target=take, args=(n,)) for n in taken]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(taken["a"] + taken["b"]) == sorted(ids)
    assert not set(taken["a"]) & set(taken["b"])


def test_a_run_that_reported_no_progress_does_not_say_started_once_it_succeeded(tmp_path: Path) -> None:
    # the Runs table showed "started" beside every finished run of an analyzer that reports no progress
    kb = queue_kb(tmp_path)
    silent, talking = (queue_store.enqueue(kb.engine, "noop", {}).id for _ in range(2))
    for run_id in (silent, talking):
        assert queue_store.claim_next(kb.engine, "w", run_id) is not None
    queue_store.heartbeat(kb.engine, talking, 0.5, message="halfway", attempt=1)
    for run_id in (silent, talking):
        assert queue_store.finish(kb.engine, run_id, RunStatus.succeeded, attempt=1)
    with Session(kb.engine) as session:
        messages = {run_id: session.get(Run, run_id).message for run_id in (silent, talking)}  # type: ignore[union-attr]
    assert messages == {silent: queue_store.FINISHED_SILENTLY, talking: "halfway"}


def test_cancel_stops_running_analyzer(tmp_path: Path) -> None:
    kb = queue_kb(tmp_path)
    kb.index()
    run = queue_store.enqueue(kb.engine, "noop", {"steps": 200, "step_seconds": 0.05})
    claimed = queue_store.claim_next(kb.engine, "w")
    assert claimed is not None
    threading.Timer(0.5, queue_store.cancel, args=(kb.engine, run.id)).start()
    t0 = time.monotonic()
    status = execution.execute(kb.engine, kb.job_config, claimed, heartbeat_interval=0.1)
    assert status.value == "cancelled" and time.monotonic() - t0 < 5
    assert kb.runs()[0].status.value == "cancelled"
    assert kb.evidence("q#echo-big") == []


def test_sigkilled_worker_run_is_requeued_and_finished(tmp_path: Path) -> None:
    kb = queue_kb(tmp_path)
    kb.verify(["q"])
    kb.work()  # earlier evidence that must survive the crash
    run = queue_store.enqueue(kb.engine, "noop", {"value": 5.0, "steps": 400, "step_seconds": 0.05},
                              claim_key="q#echo-big")
    script = textwrap.dedent(f"""
        from pathlib import Path
        from kb.core import KnowledgeBase
        from kb.settings import Settings
        KnowledgeBase(Settings(papers=Path({str(tmp_path / 'papers')!r}), home=Path({str(tmp_path / 'home')!r}))).work()
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=Path(__file__).resolve().parents[1])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with Session(kb.engine) as session:
            row = session.get(Run, run.id)
            if row is not None and row.status == "running" and row.progress > 0:
                break
        time.sleep(0.1)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert kb.runs(status="running")[0].id == run.id
    assert len(kb.evidence("q#echo-big")) == 1  # earlier evidence intact
    import datetime as dt

    assert queue_store.recover_stale(kb.engine, watched=frozenset(), stale_after=dt.timedelta(seconds=0)) == [run.id]
    assert kb.runs(status="queued")[0].id == run.id
    with Session(kb.engine) as session:  # make it fast to finish
        row = session.get(Run, run.id)
        assert row is not None
        row.params_json = '{"value": 5.0}'
        session.add(row)
        session.commit()
    assert kb.work() == {"succeeded": 1}
    assert [e.metrics["value"] for e in kb.evidence("q#echo-big")] == [5.0, 3.0]


SEEDED = textwrap.dedent("""\
    ---
    paper_id: "test:seeds"
    title: "Seeds test"
    claims:
      - id: mean-above
        statement: "The value is above {threshold}."
        kind: quantitative
        analyzer: {{name: noop, seeds: [0, 1, 2], params: {{value: 2.0, value_per_seed: 0.5}}}}
        expect: {{metric: value, op: ">", value: {threshold}}}
    ---
    body
    """)


def test_verify_with_seeds_queues_a_group_and_judges_the_mean_and_spread(tmp_path: Path) -> None:
    papers = tmp_path / "papers"
    papers.mkdir()
    (papers / "s.md").write_text(SEEDED.format(threshold=1.0), encoding="utf-8")
    kb = KnowledgeBase(Settings(papers=papers, home=tmp_path / "home"))
    queued, _ = kb.verify(["s"])
    assert [r.params["seed"] for r in queued] == [0, 1, 2]
    assert kb.work() == {"succeeded": 3}
    evidence = kb.evidence("s#mean-above")
    assert len(evidence) == 3 and not any(e.stale for e in evidence)  # seeds of one group do not supersede
    verdict = evidence[0].verdict
    assert verdict is not None and verdict.kind.value == "supported"
    assert verdict.observed == 2.5 and verdict.spread == 0.5  # values 2.0, 2.5, 3.0
    assert "3 seeds" in verdict.reason
    first = evidence[-1].verdict
    assert first is not None and "1 of 3 seeds so far" in first.reason

    # A new threshold inside the seed spread: no new run is needed, the stored metrics are re-judged.
    (papers / "s.md").write_text(SEEDED.format(threshold=2.4), encoding="utf-8")
    kb.index()
    assert kb.staleness("s#mean-above") is None
    rejudged = kb.evidence("s#mean-above")[0].verdict
    assert rejudged is not None and rejudged.kind.value == "inconclusive" and "re-judged" in rejudged.reason
    assert rejudged.observed == 2.5 and rejudged.expected == "value > 2.4"

    # Re-verifying queues a new group that supersedes the old one as a whole.
    kb.verify(["s"])
    kb.work()
    latest = kb.evidence("s#mean-above")
    assert latest[0].verdict is not None and latest[0].verdict.kind.value == "inconclusive"
    assert sum(not e.stale for e in latest) == 3 and sum(e.stale for e in latest) == 3


def test_evidence_on_cpu_records_no_gpu_time(tmp_path: Path) -> None:
    kb = queue_kb(tmp_path)
    kb.verify(["q"])
    kb.work()
    (ev,) = kb.evidence("q#echo-big")
    assert ev.provenance is not None and ev.provenance.gpu_seconds is None and ev.provenance.wall_seconds


def test_cuda_run_on_a_machine_without_gpu_is_not_runnable_with_why(tmp_path: Path) -> None:
    import torch

    if torch.cuda.is_available():
        import pytest

        pytest.skip("this machine has CUDA")
    kb = queue_kb(tmp_path)
    kb.verify(["q"], device="cuda")
    assert kb.work() == {"succeeded": 1}
    (ev,) = kb.evidence("q#echo-big")
    assert ev.verdict is not None and ev.verdict.kind.value == "not_runnable"
    assert "CUDA is not available" in ev.verdict.reason


def test_artifact_store_keeps_paths_moves_files_and_stores_identical_ones_once(tmp_path: Path) -> None:
    import hashlib

    home, staging = tmp_path / "home", tmp_path / "home" / "staging" / "run-1"
    files = {"log.txt": b"log\n", "checkpoints/depth-02/config.json": b"{}", "checkpoints/depth-04/config.json": b"{}",
             "checkpoints/depth-04/model.bin": b"w" * 3_000_000}
    for rel, data in files.items():
        (staging / rel).parent.mkdir(parents=True, exist_ok=True)
        (staging / rel).write_bytes(data)
    stored = ArtifactStore(home).put_tree(staging)
    sha = hashlib.sha256(b"{}").hexdigest()
    assert f"evidence/{sha[:2]}/{sha}/checkpoints/depth-02/config.json" in stored
    assert f"evidence/{sha[:2]}/{sha}/checkpoints/depth-04/config.json" in stored  # same bytes, its own name
    big = next(a for a in stored if a.endswith("model.bin"))
    assert (home / big).read_bytes() == b"w" * 3_000_000 and hashlib.sha256(b"w" * 3_000_000).hexdigest() in big
    assert not (staging / "checkpoints" / "depth-04" / "model.bin").exists()  # moved, not copied
