"""`kb app`: serves localhost by default, and stopping it stops the Streamlit server it started."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

from tests.helpers.cli import kb_command
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
    listening = subprocess.run(["ss", "-ltnH", f"sport = :{port}"], capture_output=True, text=True).stdout
    assert listening and all(("127.0.0.1:" in line or "[::1]:" in line) for line in listening.splitlines()), listening

    app.send_signal(signal.SIGTERM)
    assert app.wait(timeout=30) is not None
    time.sleep(0.5)
    assert not [pid for pid in servers if Path(f"/proc/{pid}").exists()
                and "Z" not in Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]], \
        "Streamlit kept serving after kb app was stopped"
