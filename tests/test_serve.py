"""`kb app`: serves localhost by default, and stopping it stops the Streamlit server it started."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

from tests.helpers.cli import kb_command, run_kb
from tests.servers import free_port


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _health(port: int) -> None:
    """Wait until the Streamlit server on ``port`` answers its health check (it listens a moment before)."""
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            pass
        assert time.monotonic() < deadline, "the app's health check did not answer"
        time.sleep(0.3)


def test_app_on_a_port_another_program_holds_says_so_and_how_to_pick_another(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:  # listens, never answers HTTP
        port = taken.getsockname()[1]
        done = run_kb(tmp_path / "papers", tmp_path / "home", "app", "--port", str(port))
    assert done.returncode == 1
    said = " ".join(done.stderr.split())
    assert f"port {port} is busy (another program listens on it, not kb's app)" in said
    assert f"kb app --port {port + 1}" in said and "not available" not in said


def test_app_listens_on_localhost_and_sigterm_stops_streamlit(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "KB_APP_WORKER": "false"}
    app = subprocess.Popen(kb_command(tmp_path / "papers", tmp_path / "home", "app", "--port", str(port)), env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    (tmp_path / "papers").mkdir()
    deadline = time.monotonic() + 60
    while True:
        assert app.poll() is None, app.stderr.read() if app.stderr else ""
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            assert time.monotonic() < deadline, "the app did not start"
            time.sleep(0.3)
    servers = _children(app.pid)
    assert servers, "kb app runs Streamlit as a child process"
    _health(port)
    # In this process: the port is checked before Streamlit would start (a second start would cost seconds).
    again = run_kb(tmp_path / "papers", tmp_path / "home", "app", "--port", str(port), env={"KB_APP_WORKER": "false"})
    assert again.returncode == 1 and "Port" not in again.stderr, again.stderr  # not Streamlit's own message
    said = " ".join(again.stderr.split())
    assert f"kb's app is already running at http://localhost:{port}" in said and f"--port {port + 1}" in said
    listening = subprocess.run(["ss", "-ltnH", f"sport = :{port}"], capture_output=True, text=True).stdout
    assert listening and all(("127.0.0.1:" in line or "[::1]:" in line) for line in listening.splitlines()), listening

    app.send_signal(signal.SIGTERM)
    assert app.wait(timeout=30) is not None
    time.sleep(0.5)
    assert not [pid for pid in servers if Path(f"/proc/{pid}").exists()
                and "Z" not in Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]], \
        "Streamlit kept serving after kb app was stopped"
