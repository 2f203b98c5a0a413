"""The Slurm executor end to end: a real single-node Slurm cluster, a real PostgreSQL index and a real
S3-protocol store on loopback. The "laptop" (KB home A) queues; jobs run in KB home B on the node; nothing is
shared but the database and the store."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from kb.core import KnowledgeBase
from kb.settings import Settings, SlurmSettings

pytestmark = [pytest.mark.slurm, pytest.mark.postgres]
APP_MAIN = Path(__file__).resolve().parents[1] / "app" / "main.py"

NOTE = """---
paper_id: "t:slurm"
title: "Slurm note"
claims:
  - id: echo
    statement: "The value is above two."
    analyzer: {{name: noop, params: {{value: 3, steps: {steps}, step_seconds: {step_seconds}, plot: true}}}}
    expect: {{metric: value, op: ">", value: 2}}
---
Body.
"""


def _laptop(tmp_path: Path, db: str, store: str, partition: str, steps: int = 3, step_seconds: float = 0.0,
            ) -> KnowledgeBase:
    papers = tmp_path / "papers"
    papers.mkdir()
    (papers / "slurm-note.md").write_text(NOTE.format(steps=steps, step_seconds=step_seconds), encoding="utf-8")
    settings = Settings(papers=papers, home=tmp_path / "home-a", database_url=db, artifact_store=store,
                        app_worker=False,
                        slurm=SlurmSettings(partition=partition, time_minutes=5, mem_gb=1, cpus_per_task=1,
                                            job_home=str(tmp_path / "home-b")))
    kb = KnowledgeBase(settings)
    kb.index()
    return kb


def _wait(kb: KnowledgeBase, run_id: str, until: set[str], seconds: float = 120, reconcile: bool = False) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        record = kb.get_run(run_id)
        assert record is not None
        if record.status.value in until:
            return record.status.value
        if reconcile:
            kb.reconcile({"slurm"})
        time.sleep(0.5)
    pytest.fail(f"run {run_id} did not reach {until} within {seconds} s: {kb.get_run(run_id)}")


def test_app_queues_on_slurm_and_shows_the_verdict_and_plot_from_the_store(
        tmp_path: Path, pg_database: str, s3_url: str, slurm_cluster: str, monkeypatch: pytest.MonkeyPatch) -> None:
    kb = _laptop(tmp_path, pg_database, s3_url, slurm_cluster)
    for key, value in {"KB_PAPERS": kb.settings.papers, "KB_HOME": kb.settings.home, "KB_DATABASE_URL": pg_database,
                       "KB_ARTIFACT_STORE": s3_url, "KB_APP_WORKER": "false",
                       "KB_SLURM__PARTITION": slurm_cluster, "KB_SLURM__MEM_GB": "1", "KB_SLURM__CPUS_PER_TASK": "1",
                       "KB_SLURM__JOB_HOME": str(tmp_path / "home-b")}.items():
        monkeypatch.setenv(key, str(value))
    at = AppTest.from_file(str(APP_MAIN), default_timeout=60).run()
    at.query_params["id"] = "slurm-note"
    at.switch_page("views/note.py").run()
    assert not at.exception, at.exception
    at.segmented_control(key="reverify_executor").set_value("Slurm").run()
    at.button(key="reverify_note").click().run()
    assert not at.exception, at.exception
    (record,) = kb.runs()
    assert record.executor == "slurm" and record.job_id, record
    assert _wait(kb, record.id, {"succeeded", "failed"}) == "succeeded", kb.get_run(record.id)

    (evidence,) = kb.evidence("slurm-note#echo")
    assert evidence.verdict is not None and evidence.verdict.kind.value == "supported"
    assert evidence.provenance.scheduler_job_id == record.job_id
    assert not (kb.settings.home / "evidence").exists(), "the plot came through the store, not the laptop's disk"
    # the job records the run's end, then removes its scratch home on the way out: give it a moment to get there
    deadline = time.monotonic() + 30
    while list((tmp_path / "home-b").glob("kb-job-*")) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not list((tmp_path / "home-b").glob("kb-job-*")), "the job cleaned its scratch home"

    at = AppTest.from_file(str(APP_MAIN), default_timeout=60).run()
    at.query_params["id"] = "slurm-note"
    at.switch_page("views/note.py").run()
    assert not at.exception, at.exception
    assert any("supported" in m.value for m in at.markdown if "-badge[" in m.value)
    assert at.get("image"), "the evidence plot is shown"
    cached = kb.settings.home / "cache" / "artifacts"
    assert any(p.name == "value.png" for p in cached.rglob("*.png")), "read once into the laptop's cache"


def test_a_job_killed_mid_run_resumes_from_its_checkpoint(
        tmp_path: Path, pg_database: str, s3_url: str, slurm_cluster: str) -> None:
    kb = _laptop(tmp_path, pg_database, s3_url, slurm_cluster, steps=30, step_seconds=0.3)
    (record,) = kb.verify(["slurm-note"], executor="slurm")[0]
    first_job = kb.submit("slurm", [record.id])[record.id]
    deadline = time.monotonic() + 120
    while (current := kb.get_run(record.id)) is not None and current.progress < 0.3:
        assert time.monotonic() < deadline, current
        time.sleep(0.3)
    subprocess.run(["scancel", first_job], check=True, timeout=30)  # what preemption or a time limit does

    assert _wait(kb, record.id, {"succeeded", "failed"}, reconcile=True) == "succeeded", kb.get_run(record.id)
    final = kb.get_run(record.id)
    assert final is not None and final.attempts == 2 and final.job_id != first_job
    (evidence,) = kb.evidence("slurm-note#echo")
    assert evidence.metrics["value"] == 3.0  # what an uninterrupted run gives
    assert any(note.startswith("resumed from a checkpoint at step") and int(note.rsplit(" ", 1)[1]) >= 9
               for note in evidence.metrics["notes"]), evidence.metrics["notes"]
    log = kb.store.read_bytes(next(a for a in evidence.artifacts if a.endswith("log.txt")))
    assert log is not None and b"restored 1 checkpoint file(s)" in log


def test_cancelling_a_run_cancels_its_job(tmp_path: Path, pg_database: str, s3_url: str, slurm_cluster: str) -> None:
    from kb.queue import slurm

    kb = _laptop(tmp_path, pg_database, s3_url, slurm_cluster, steps=200, step_seconds=0.5)
    (record,) = kb.verify(["slurm-note"], executor="slurm")[0]
    job = kb.submit("slurm", [record.id])[record.id]
    _wait(kb, record.id, {"running"})
    assert kb.cancel(record.id)
    deadline = time.monotonic() + 60
    # One squeue reading per check: the job may leave the queue between two readings.
    while (state := slurm.job_states([job]).get(job)) not in (None, "CANCELLED", "COMPLETED"):
        assert time.monotonic() < deadline, state
        time.sleep(0.5)
    assert kb.get_run(record.id).status.value == "cancelled"  # type: ignore[union-attr]


def test_a_job_that_keeps_dying_fails_after_the_attempt_limit(
        tmp_path: Path, pg_database: str, s3_url: str, slurm_cluster: str) -> None:
    kb = _laptop(tmp_path, pg_database, s3_url, slurm_cluster, steps=200, step_seconds=0.5)
    (record,) = kb.verify(["slurm-note"], executor="slurm")[0]
    kb.submit("slurm", [record.id])
    for _ in range(3):
        _wait(kb, record.id, {"running"}, reconcile=True)
        current = kb.get_run(record.id)
        assert current is not None and current.job_id
        subprocess.run(["scancel", current.job_id], check=True, timeout=30)
        deadline = time.monotonic() + 60
        while (now := kb.get_run(record.id)) is not None and now.job_id == current.job_id \
                and now.status.value != "failed":
            assert time.monotonic() < deadline
            kb.reconcile({"slurm"})
            time.sleep(0.5)
        if kb.get_run(record.id).status.value == "failed":  # type: ignore[union-attr]
            break
    final = kb.get_run(record.id)
    assert final is not None and final.status.value == "failed" and final.attempts == 3
    assert final.error is not None and "gave up after 3 attempts" in final.error


def test_slurm_needs_a_shared_index(tmp_path: Path) -> None:
    kb = KnowledgeBase(Settings(papers=tmp_path, home=tmp_path / "home"))
    kb.index()
    with pytest.raises(ValueError, match="PostgreSQL"):
        kb.submit("slurm", ["any"])
