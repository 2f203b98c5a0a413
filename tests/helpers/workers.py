"""Real ``kb worker --forever`` processes on a test's notes and KB home, and waiting on what they do: what the
queue's process-level tests (signals, store outages, fairness, the index's identity) share."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]  # the checkout: workers start there, as a user's would


@pytest.fixture
def kb_workers(tmp_path: Path) -> Iterator[Callable[..., subprocess.Popen[bytes]]]:
    """Start workers on ``tmp_path/papers`` and ``tmp_path/home`` (keyword arguments: extra environment), each
    logging to ``tmp_path/worker-N.log``; any still alive at the end is stopped (SIGTERM, then killed)."""
    started: list[subprocess.Popen[bytes]] = []

    def start(**env: str) -> subprocess.Popen[bytes]:
        out = (tmp_path / f"worker-{len(started)}.log").open("wb")
        proc = subprocess.Popen([sys.executable, "-m", "kb.cli", "worker", "--forever", "--papers",
                                 str(tmp_path / "papers"), "--home", str(tmp_path / "home")],
                                cwd=ROOT, env={**os.environ, **env}, stdout=out, stderr=subprocess.STDOUT)
        started.append(proc)
        return proc

    yield start
    for proc in started:  # SIGTERM first: a worker hands its run back and exits; killed if it does not
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def wait_until(condition: Callable[[], bool], seconds: float, what: str) -> float:
    """Poll ``condition`` every 0.1 s until it holds (returns the seconds it took) or fail saying ``what``."""
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        if condition():
            return time.monotonic() - start
        time.sleep(0.1)
    raise AssertionError(f"not within {seconds:.0f} s: {what}")
