"""A read-only KB home reads its write-ahead log: writes its worker made but did not checkpoint are shown.

The home is a real read-only bind mount (mounting needs root, as CI runs); the log is left the way a worker
killed mid-work leaves it: committed, never checkpointed into ``index.sqlite``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kb.core import KnowledgeBase
from kb.queue import store as queue_store
from kb.settings import Settings
from tests.helpers.cli import run_kb_process as run_kb

# Commit a write and leave without closing: SQLite keeps it in the WAL, uncheckpointed.
WRITER = """
import os, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("PRAGMA wal_autocheckpoint=0")
db.execute("UPDATE run SET status='succeeded', progress=1.0 WHERE id=?", (sys.argv[2],))
db.commit()
os._exit(0)
"""


@pytest.fixture
def read_only_view(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    home, view = tmp_path / "home", tmp_path / "view"
    home.mkdir()
    view.mkdir()
    bound = subprocess.run(["mount", "--bind", str(home), str(view)], capture_output=True, text=True, check=False)
    if bound.returncode != 0:
        pytest.skip(f"cannot bind-mount here (needs root, as CI runs): {bound.stderr.strip()}")
    try:
        done = subprocess.run(["mount", "-o", "remount,bind,ro", str(view)], capture_output=True, text=True,
                              check=False)
        if done.returncode != 0:
            pytest.skip(f"cannot make a read-only mount here: {done.stderr.strip()}")
        yield home, view
    finally:
        subprocess.run(["umount", "-l", str(view)], capture_output=True, check=False)


def test_a_read_only_home_shows_what_its_write_ahead_log_holds(tmp_path: Path,
                                                               read_only_view: tuple[Path, Path]) -> None:
    home, view = read_only_view
    (tmp_path / "papers").mkdir()
    kb = KnowledgeBase(Settings(papers=tmp_path / "papers", home=home))
    run = queue_store.enqueue(kb.engine, "noop", {"value": 1.0})
    kb.engine.dispose()
    subprocess.run([sys.executable, "-c", WRITER, str(home / "index.sqlite"), run.id], check=True)
    assert (home / "index.sqlite-wal").stat().st_size > 0, "the write is in the log only"
    listed = run_kb(tmp_path / "papers", view, "runs", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [r["status"] for r in json.loads(listed.stdout)] == ["succeeded"]
    assert not list(view.glob("*.damaged-*"))
