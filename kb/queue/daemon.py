"""The background worker of a KB home: find it, or start one ``kb worker --forever`` process.

Runs live in the database; a worker executes them. The app queues runs and makes sure one worker per
KB home is alive: a process started in its own session (``start_new_session``), so that it outlives
the browser tab, the Streamlit script thread and the app process itself. The worker writes a pidfile
(``<home>/worker.json``: pid, host, command, start time) and its output goes to
``<home>/logs/worker.log``. Liveness is checked against the pidfile and ``/proc`` (a zombie or a pid
recycled by another program does not count), under a file lock so two app sessions never start two
workers at once. A worker killed mid-run leaves its run ``running``; any live worker re-queues it
(``kb.queue.store.reclaim``).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from analyzers.files import atomic_write_bytes
from kb.settings import Settings

PIDFILE = "worker.json"
LOCKFILE = "worker.lock"
LOGFILE = Path("logs") / "worker.log"
#: The checkout the worker imports kb from (``python -m kb.cli`` run from here finds this very kb). Not the
#: ``kb/`` folder itself: run from there, its ``queue`` package would shadow the standard library's.
ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class WorkerInfo:
    """A background worker process of one KB home."""

    pid: int
    host: str
    started_at: str  # ISO 8601, UTC
    log_path: Path
    command: list[str]
    # a command working the queue in a terminal (``kb demo``): it ends with that command
    foreground: bool = False

    def words(self) -> str:
        """What this worker is, and what closing the app does to it, as the app says it."""
        if self.foreground:
            return (
                f"`{command_name(self.command)}` works the queue in a terminal (pid {self.pid}): its "
                "runs stop "
                "when that command ends; closing this tab does not stop them"
            )
        return (f"background worker (pid {self.pid}): runs survive closing the tab and restarting the app")

    def runner(self) -> str:
        """Who runs the queued runs: 'the background worker (pid 12)', '`kb demo` in a terminal (pid 12)'."""
        if self.foreground:
            return f"`{command_name(self.command)}` in a terminal (pid {self.pid})"
        return f"the background worker (pid {self.pid})"


def command_name(command: list[str]) -> str:
    """'kb demo' from a worker's command line (``python -m kb.cli demo ...``, ``.../bin/kb demo``)."""
    for index, part in enumerate(command):
        if part in ("kb", "kb.cli") or part.endswith("/kb"):
            rest = [p for p in command[index + 1:] if not p.startswith("-")]
            return f"kb {rest[0]}" if rest else "kb"
    return Path(command[0]).name if command else "a command"


def pidfile_path(home: Path) -> Path:
    """Where the worker of ``home`` records its pid."""
    return Path(home).resolve() / PIDFILE


def log_path(home: Path) -> Path:
    """Where the worker of ``home`` writes its stdout and stderr."""
    return Path(home).resolve() / LOGFILE


@contextlib.contextmanager
def _locked(home: Path) -> Iterator[None]:
    """Hold an exclusive lock on the home's worker lock file (serializes find-or-start)."""
    home.mkdir(parents=True, exist_ok=True)
    with (home / LOCKFILE).open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _proc_state(pid: int) -> str | None:
    """The process state letter from /proc (R, S, Z, ...), or None where /proc does not say."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[-1].split()[0]


def _cmdline(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def pid_alive(pid: int) -> bool:
    """Whether ``pid`` is a running (not zombie) process."""
    # A child of this process that exited stays a zombie until reaped, and kill(pid, 0) still succeeds
    # on a zombie: reap it first when it is ours.
    with contextlib.suppress(ChildProcessError, OSError):
        reaped, _ = os.waitpid(pid, os.WNOHANG)
        if reaped == pid:
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, owned by someone else
    return _proc_state(pid) not in ("Z", "X")


def _read_pidfile(home: Path) -> WorkerInfo | None:
    path = pidfile_path(home)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return WorkerInfo(pid=int(data["pid"]), host=str(data["host"]), started_at=str(data["started_at"]),
                          log_path=Path(data["log_path"]), command=[str(c) for c in data["command"]],
                          foreground=bool(data.get("foreground", False)))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def find_worker(home: Path) -> WorkerInfo | None:
    """The live background worker of ``home`` on this host, or None."""
    info = _read_pidfile(home)
    if info is None or info.host != socket.gethostname() or not pid_alive(info.pid):
        return None
    cmdline = _cmdline(info.pid)
    # A pid recycled by an unrelated program must not pass for the worker.
    if cmdline is not None and cmdline[1:] != info.command[1:]:
        return None
    return info


def worker_command(settings: Settings, python: str | None = None) -> list[str]:
    """The command line of the background worker for these settings (absolute paths)."""
    return [python or sys.executable, "-m", "kb.cli", "worker", "--forever",
            "--papers", str(Path(settings.papers).resolve()), "--home", str(Path(settings.home).resolve())]


def ensure_worker(settings: Settings, python: str | None = None) -> tuple[WorkerInfo, bool]:
    """The live worker of the settings' KB home, starting one when none is alive.

    Returns the worker and whether it was started by this call. The database URL travels in the
    environment (``KB_DATABASE_URL``), never on the command line, where other users could read it.
    """
    home = Path(settings.home).resolve()
    with _locked(home):
        found = find_worker(home)
        if found is not None:
            return found, False
        command = worker_command(settings, python)
        env = {**os.environ, "KB_PAPERS": command[command.index("--papers") + 1], "KB_HOME": str(home),
               "PYTHONUNBUFFERED": "1"}
        if settings.database_url:
            env["KB_DATABASE_URL"] = settings.database_url
        else:
            env.pop("KB_DATABASE_URL", None)
        log = log_path(home)
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("ab") as out:
            started = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
            out.write(f"--- {started} starting: {' '.join(command)}\n".encode())
            out.flush()
            process = subprocess.Popen(command, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                       stderr=subprocess.STDOUT, start_new_session=True)
        info = WorkerInfo(pid=process.pid, host=socket.gethostname(), started_at=started, log_path=log,
                          command=command)
        _write_pidfile(home, info)
        return info, True


def _write_pidfile(home: Path, info: WorkerInfo) -> None:
    """Record ``info`` as the worker of ``home`` (what ``_read_pidfile`` reads back); the caller holds the
    lock."""
    record = {
        "pid": info.pid,
        "host": info.host,
        "started_at": info.started_at,
        "log_path": str(info.log_path),
        "command": info.command,
        "foreground": info.foreground,
    }
    atomic_write_bytes(pidfile_path(home), (json.dumps(record, indent=2) + "\n").encode())



@contextlib.contextmanager
def registered_worker(home: Path) -> Iterator[bool]:
    """Record this process as the worker of ``home`` while it works the queue in the foreground (``kb demo``,
    ``kb worker``), so the app sees a worker running and starts no second one beside it on the same cores.

    Yields whether it was recorded: not when a live worker already is (then both work the queue, each run
    claimed by one). The record goes when the block ends, if it is still this process's.
    """
    home = Path(home).resolve()
    pid = os.getpid()
    with _locked(home):
        if find_worker(home) is not None:
            recorded = False
        else:
            _write_pidfile(
                home,
                WorkerInfo(
                    pid=pid,
                    host=socket.gethostname(),
                    started_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                    log_path=Path("the terminal it runs in"),
                    command=_cmdline(pid) or [sys.executable, *sys.argv],
                    foreground=True,
                ),
            )
            recorded = True
    try:
        yield recorded
    finally:
        if recorded:
            with _locked(home):
                info = _read_pidfile(home)
                if info is not None and info.pid == pid and info.host == socket.gethostname():
                    with contextlib.suppress(FileNotFoundError):
                        pidfile_path(home).unlink()

def stop_worker(home: Path, timeout: float = 45.0) -> bool:
    """Stop the background worker of ``home`` (SIGTERM, then SIGKILL after ``timeout``, past its grace period
    for the running run: ``KB_STOP_GRACE_SECONDS``); True when one was running.

    The worker hands the run it was executing back to the queue (``kb.queue.execution.Stop``); one killed
    past its grace leaves it ``running`` until the next worker re-queues it.
    """
    home = Path(home).resolve()
    with _locked(home):
        info = find_worker(home)
        if info is None:
            return False
        _signal_group(info.pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while pid_alive(info.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if pid_alive(info.pid):
            _signal_group(info.pid, signal.SIGKILL)
            while pid_alive(info.pid):
                time.sleep(0.05)
        with contextlib.suppress(FileNotFoundError):
            pidfile_path(home).unlink()
        return True


def _signal_group(pid: int, sig: signal.Signals) -> None:
    """Signal the worker and anything it spawned (it leads its own process group)."""
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)


def log_tail(home: Path, max_bytes: int = 20_000) -> str:
    """The end of the worker's log (empty when there is none)."""
    path = log_path(home)
    try:
        with path.open("rb") as handle:
            handle.seek(max(0, path.stat().st_size - max_bytes))
            return handle.read().decode(errors="replace")
    except OSError:
        return ""
