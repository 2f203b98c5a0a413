"""Unfinished S3 multipart uploads a killed worker left are aborted by its peers (real S3 server, moto's).

Only the uploads of dead attempts go: a checkpoint upload whose run still has a live lease is left to the
worker making it; an evidence upload (content-addressed, it names no run) goes once it is an hour old.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from sqlalchemy import update
from sqlmodel import Session, col

from kb.core import KnowledgeBase
from kb.evidence.artifact_store import ArtifactStore
from kb.index.database import Run
from kb.queue import execution
from kb.queue import store as queue_store
from kb.settings import Settings


def _start_upload(store: ArtifactStore, key: str) -> str:
    bucket, _, prefix = store.root.partition("/")
    found = store.fs.call_s3("create_multipart_upload", Bucket=bucket, Key=f"{prefix}/{key}")
    return str(found["UploadId"])


def test_peers_abort_the_uploads_of_dead_attempts_only(tmp_path: Path, s3_url: str) -> None:
    (tmp_path / "papers").mkdir()
    kb = KnowledgeBase(Settings(papers=tmp_path / "papers", home=tmp_path / "home", artifact_store=s3_url))
    store = ArtifactStore(tmp_path / "home", s3_url)
    dead = queue_store.enqueue(kb.engine, "noop", {"value": 1.0})
    live = queue_store.enqueue(kb.engine, "noop", {"value": 2.0})
    assert queue_store.claim_next(kb.engine, "elsewhere:1", run_id=live.id) is not None  # a live lease
    assert queue_store.claim_next(kb.engine, "elsewhere:2", run_id=dead.id) is not None
    with Session(kb.engine) as session:  # its worker stopped renewing: the lease ran out a minute ago
        session.exec(update(Run).where(col(Run.id) == dead.id)  # type: ignore[call-overload]
                     .values(lease_expires_at=dt.datetime.now(dt.UTC) - dt.timedelta(minutes=1)))
        session.commit()
    uploads = {name: _start_upload(store, key) for name, key in {
        "dead": f"checkpoints/{dead.id}/state.bin", "live": f"checkpoints/{live.id}/state.bin",
        "evidence": "evidence/ab/" + "ab" * 32 + "/big.bin"}.items()}
    assert {upload for _, upload, _ in store.pending_uploads()} == set(uploads.values())
    # moto reports every upload as started on 2010-11-10: the evidence upload is old, and goes too.
    assert all(started.year == 2010 for _, _, started in store.pending_uploads())
    assert execution.sweep_uploads(kb.engine, store) == 2
    assert {upload for _, upload, _ in store.pending_uploads()} == {uploads["live"]}
