"""The artifact store's outages are ridden out like the database's: real S3 server, real network cut.

A loopback TCP relay stands between the workers and the S3 server (moto's): taking it down refuses new
connections and cuts open ones, as a store restart or a network partition does, while the server keeps its
objects. Each test counts executions in the noop analyzer's own log and reads the records in the store.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlmodel import Session

from kb.core import KnowledgeBase
from kb.index.database import Run
from kb.queue import store as queue_store
from kb.settings import Settings
from tests.helpers.cli import run_kb_process
from tests.helpers.workers import wait_until

ROOT = Path(__file__).resolve().parents[1]


class Relay:
    """A TCP relay on loopback to ``upstream`` that can be taken down (connections refused and cut) and up."""

    def __init__(self, upstream: str) -> None:
        host, port = upstream.removeprefix("http://").split(":")
        self.upstream = (host, int(port))
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        self.port = probe.getsockname()[1]
        probe.close()
        self._open: list[socket.socket] = []
        self._listener: socket.socket | None = None
        self.up()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def up(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def down(self) -> None:
        if self._listener is not None:
            self._listener.close()
            self._listener = None
        for sock in self._open:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
        self._open.clear()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.upstream)
            self._open += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)


@pytest.fixture
def relay(s3_endpoint: str) -> Iterator[Relay]:
    found = Relay(s3_endpoint)
    yield found
    found.down()


def _row(kb: KnowledgeBase, run_id: str) -> Run:
    with Session(kb.engine) as session:
        row = session.get(Run, run_id)
        assert row is not None
        return row


def _record(s3_url: str, run_id: str, attempt: int) -> dict[str, object] | None:
    import s3fs

    fs = s3fs.S3FileSystem(skip_instance_cache=True)
    path = f"{s3_url.removeprefix('s3://')}/runs/{run_id}/attempt-{attempt}.json"
    return json.loads(fs.cat_file(path)) if fs.exists(path) else None


def test_a_store_outage_past_the_s3_clients_retries_mid_run_is_ridden_out(
        tmp_path: Path, s3_url: str, relay: Relay, kb_workers: Callable[..., subprocess.Popen[bytes]]) -> None:
    (tmp_path / "papers").mkdir()
    kb = KnowledgeBase(Settings(papers=tmp_path / "papers", home=tmp_path / "home", artifact_store=s3_url))
    log = tmp_path / "executions.log"
    run = queue_store.enqueue(kb.engine, "noop", {"value": 1.0, "steps": 20, "step_seconds": 0.3,
                                                  "log_file": str(log)})
    # botocore's own retries (AWS_MAX_ATTEMPTS, its documented setting; default 5 tries) absorb a cut of
    # several seconds before kb sees it. With one try the outage reaches kb's retries within seconds, so the
    # cut need only last until the worker says so and one of kb's waits more, not 20 s.
    kb_workers(KB_ARTIFACT_STORE=s3_url, AWS_ENDPOINT_URL=relay.url, AWS_MAX_ATTEMPTS="1")
    wait_until(lambda: (_row(kb, run.id).progress or 0) >= 0.2, 60, "the run is under way (checkpoints uploaded)")
    relay.down()
    wait_until(lambda: "unavailable while" in (tmp_path / "worker-0.log").read_text(), 60,
               "the worker's own retries took over from the S3 client's")
    time.sleep(2)  # past kb's first waits (0.5 s, 1 s): the store is still down when they end
    relay.up()
    wait_until(lambda: _row(kb, run.id).status in ("succeeded", "failed"), 90, "the run ended")
    said = (tmp_path / "worker-0.log").read_text()
    assert _row(kb, run.id).status == "succeeded", (_row(kb, run.id).error, said)
    assert "artifact store" in said and "answers again" in said, said
    assert collections.Counter(log.read_text().splitlines()) == {"start 1.0": 1, "end 1.0": 1}
    record = _record(s3_url, run.id, 1)
    assert record is not None and record["run"]["status"] == "succeeded"  # type: ignore[index]


@pytest.mark.slow  # ~200 s: an outage past the store's 31.5 s of retries (each checkpoint upload waits them out)
def test_outcomes_are_spooled_while_the_store_is_down_and_a_rebuild_says_one_line(
        tmp_path: Path, s3_url: str, relay: Relay, kb_workers: Callable[..., subprocess.Popen[bytes]]) -> None:
    (tmp_path / "papers").mkdir()
    kb = KnowledgeBase(Settings(papers=tmp_path / "papers", home=tmp_path / "home", artifact_store=s3_url))
    log = tmp_path / "executions.log"
    run = queue_store.enqueue(kb.engine, "noop", {"value": 2.0, "steps": 6, "step_seconds": 0.5,
                                                  "log_file": str(log)})
    env = {"KB_ARTIFACT_STORE": s3_url, "AWS_ENDPOINT_URL": relay.url}
    kb_workers(**env)
    wait_until(lambda: (_row(kb, run.id).progress or 0) >= 0.3, 60, "the run is under way")
    relay.down()
    rebuild = run_kb_process(tmp_path / "papers", tmp_path / "other-home", "index", "--rebuild",
                             env={**os.environ, **env}, cwd=ROOT)
    assert rebuild.returncode == 3, rebuild.stderr
    assert "did not answer" in rebuild.stderr and "Traceback" not in rebuild.stderr, rebuild.stderr
    assert len(rebuild.stderr.strip().splitlines()) <= 3, rebuild.stderr  # one line, wrapped at most
    wait_until(lambda: _row(kb, run.id).status in ("succeeded", "failed"), 90, "the run ended while the store was down")
    spooled = tmp_path / "home" / "spool" / "runs" / run.id / "attempt-1.json"
    assert spooled.is_file(), (tmp_path / "worker-0.log").read_text()
    assert _record(s3_url, run.id, 1) is None
    relay.up()
    wait_until(lambda: _record(s3_url, run.id, 1) is not None, 30, "the spooled outcome reached the store")
    assert not spooled.exists()
    assert _record(s3_url, run.id, 1)["run"]["status"] == _row(kb, run.id).status  # type: ignore[index]
    assert collections.Counter(log.read_text().splitlines())["start 2.0"] == 1
