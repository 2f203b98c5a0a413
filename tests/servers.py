"""Real servers on loopback for the tests: PostgreSQL, an S3-protocol server (moto_server), a Slurm cluster.

Each fixture starts the real thing once per test session (or checks that it runs) and skips, saying why,
where it cannot: the PostgreSQL server binaries, moto's server or Slurm are missing. ``.ci/system-deps``
installs and starts them on CI's machine, so no test that uses them skips there.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

PG_BIN = Path("/usr/lib/postgresql/15/bin")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for_port(port: int, proc: subprocess.Popen[bytes], what: str, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with code {proc.returncode} before it listened on port {port}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError(f"{what} did not listen on port {port} within {seconds:.0f} s")


def _as_server_user(args: list[str]) -> list[str]:
    # initdb refuses to run as root; CI runs as root, so the server runs as the 'postgres' user.
    return ["runuser", "-u", "postgres", "--", *args] if os.geteuid() == 0 else args


# The data folder, log and port of each cluster ``postgres_server`` started, by the URL it yielded.
_CLUSTERS: dict[str, tuple[Path, Path, int]] = {}


def _pg_start(data: Path, log: Path, port: int) -> None:
    subprocess.run(_as_server_user([str(PG_BIN / "pg_ctl"), "-D", str(data), "-l", str(log), "-w",
                                    "-o", f"-k {data.parent} -p {port} -c listen_addresses=127.0.0.1 "
                                    "-c max_connections=200", "start"]),
                   check=True, capture_output=True)


def _cluster(url: str) -> tuple[Path, Path, int]:
    prefix = url.rsplit("/", 1)[0]
    return next(v for k, v in _CLUSTERS.items() if k.rsplit("/", 1)[0] == prefix)


def stop_postgres(url: str) -> None:
    """Stop the test cluster behind ``url`` (fast shutdown: every client's connection is cut, as in a real
    restart); ``start_postgres`` starts it again on the same port."""
    data, _, _ = _cluster(url)
    subprocess.run(_as_server_user([str(PG_BIN / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"]),
                   check=True, capture_output=True)


def start_postgres(url: str) -> None:
    """Start the test cluster behind ``url`` that ``stop_postgres`` stopped, on its port."""
    _pg_start(*_cluster(url))


def restart_postgres(url: str, down_seconds: float = 2.0) -> None:
    """Stop the test cluster behind ``url``, leave it down for ``down_seconds``, and start it again."""
    stop_postgres(url)
    time.sleep(down_seconds)
    start_postgres(url)


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    """A throw-away PostgreSQL cluster on 127.0.0.1 (as the 'postgres' user when root); yields its URL."""
    root = Path(tempfile.mkdtemp(prefix="kb-pg-"))
    root.chmod(0o777)
    data, port = root / "data", free_port()
    subprocess.run(_as_server_user([str(PG_BIN / "initdb"), "-D", str(data), "-A", "trust", "-U", "kb"]),
                   check=True, capture_output=True)
    _pg_start(data, root / "log", port)
    url = f"postgresql+psycopg://kb@127.0.0.1:{port}/postgres"
    _CLUSTERS[url] = (data, root / "log", port)
    try:
        yield url
    finally:
        _CLUSTERS.pop(url, None)
        subprocess.run(_as_server_user([str(PG_BIN / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]),
                       capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def s3_server() -> Iterator[str]:
    """moto's standalone S3-protocol server on 127.0.0.1; yields its endpoint URL."""
    server = shutil.which("moto_server") or str(Path(sys.executable).parent / "moto_server")
    port = free_port()
    proc = subprocess.Popen([server, "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        _wait_for_port(port, proc, "moto_server")
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """The session's PostgreSQL server; skipped where PostgreSQL is not installed."""
    if not (PG_BIN / "initdb").exists():
        pytest.skip("PostgreSQL server binaries not installed (apt-get install postgresql)")
    pytest.importorskip("psycopg")
    with postgres_server() as url:
        yield url


@pytest.fixture
def pg_database(pg_url: str) -> Iterator[str]:
    """A fresh, empty database on the session's PostgreSQL server, dropped after the test."""
    from sqlalchemy import create_engine, text

    name = f"kb_{uuid.uuid4().hex[:12]}"
    admin = create_engine(pg_url, isolation_level="AUTOCOMMIT", pool_pre_ping=True)  # tests may restart the server
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield pg_url.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """A real S3-protocol server (moto's standalone server, the one s3fs's own tests use) on loopback."""
    if not (shutil.which("moto_server") or (Path(sys.executable).parent / "moto_server").exists()):
        pytest.skip("moto_server is not installed (pip install 'moto[server]')")
    with s3_server() as endpoint:
        yield endpoint


@pytest.fixture
def s3_url(s3_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh bucket on the loopback server, reached the way an operator would: AWS_* environment variables."""
    import s3fs

    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    s3fs.S3FileSystem.clear_instance_cache()
    bucket = f"kb-{uuid.uuid4().hex[:16]}"
    s3fs.S3FileSystem().mkdir(bucket)
    return f"s3://{bucket}/team-kb"


@pytest.fixture(scope="session")
def slurm_cluster() -> str:
    """The single-node Slurm cluster (.ci/slurm-up starts it); returns its default partition."""
    from kb.queue.slurm import slurm_available

    script = Path(__file__).resolve().parents[1] / ".ci" / "slurm-up"
    if slurm_available() is not None and shutil.which("slurmctld") is not None:
        subprocess.run(["bash", str(script)], capture_output=True, timeout=120)
    why = slurm_available()
    if why is not None:
        pytest.skip(f"no Slurm cluster here: {why} (.ci/system-deps installs one, .ci/slurm-up starts it)")
    out = subprocess.run(["sinfo", "-h", "-o", "%P"], capture_output=True, text=True, timeout=30)
    return out.stdout.split()[0].rstrip("*")
