"""A full disk is not corruption: a real 2 MiB tmpfs as the KB home (mounting needs root, as in CI).

Read commands say "disk full at PATH (N MB free)" in one line, never that the index is damaged; a rebuild never
moves a healthy index aside; a run that fills the disk fails, leaves no partial output and `kb verify` exits
non-zero. A lock held on the index reads as "not answering", never as damage.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from kb.core import IndexDamaged, IndexUnavailable, index_error
from kb.disk import DiskFull, disk_full_message, is_disk_full
from tests.helpers.cli import run_kb_process

ROOT = Path(__file__).resolve().parents[1]
NOTE = """---
paper_id: "t:full"
title: "Full disk note"
claims:
  - id: echo
    statement: "The value is above two."
    analyzer: {name: noop, params: {value: 3}}
    expect: {metric: value, op: ">", value: 2}
  - id: fill
    statement: "Writing 64 MB fits."
    analyzer: {name: disk-filler}
    expect: {metric: written_mb, op: ">", value: 1}
---
Body.
"""


@pytest.fixture
def tmpfs_home(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs mounted as the KB home; unmounted afterwards."""
    home = tmp_path / "home"
    home.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2M", "tmpfs", str(home)], capture_output=True,
                             text=True, check=False)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root, as CI runs): {mounted.stderr.strip()}")
    try:
        yield home
    finally:
        subprocess.run(["umount", "-l", str(home)], capture_output=True, check=False)


@pytest.fixture
def papers(tmp_path: Path) -> Path:
    folder = tmp_path / "papers"
    folder.mkdir()
    (folder / "full-note.md").write_text(NOTE, encoding="utf-8")
    return folder


def kb_cli(papers: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KB_ANALYZER_MODULES": "tests.noop_analyzer,tests.helpers.disk_filler", "COLUMNS": "250"}
    return run_kb_process(papers, home, *args, env=env, cwd=ROOT)


def fill(home: Path) -> Path:
    """Fill the disk holding ``home`` to the last byte. Unbuffered: a buffered file keeps the bytes of the last,
    partial write and fails again when closed, which happened whenever the free space was not a multiple of the
    chunk (an index two pages larger made it so)."""
    filler = home / "filler.bin"
    with filler.open("wb", buffering=0) as handle:
        try:
            while True:
                handle.write(b"\0" * 65536)
        except OSError as exc:
            assert is_disk_full(exc)
    return filler


def one_disk_full_line(stderr: str) -> str:
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert "disk full at" in lines[0] and "MB free" in lines[0], stderr
    assert "rebuild" not in lines[0] and "cannot be read" not in lines[0], stderr
    return lines[0]


def test_disk_full_read_commands_and_rebuild_never_call_the_index_damaged(papers: Path, tmpfs_home: Path) -> None:
    assert kb_cli(papers, tmpfs_home, "index").returncode == 0
    before = (tmpfs_home / "index.sqlite").read_bytes()
    filler = fill(tmpfs_home)
    for command in (["list"], ["index", "--rebuild"]):  # a read, and the command that used to move it aside
        done = kb_cli(papers, tmpfs_home, *command)
        assert done.returncode == 4, (command, done.stdout, done.stderr)
        one_disk_full_line(done.stderr)
    assert not list(tmpfs_home.glob("*.damaged-*")), "a full disk never moves the index aside"
    assert (tmpfs_home / "index.sqlite").read_bytes() == before

    filler.unlink()
    done = kb_cli(papers, tmpfs_home, "index", "--rebuild")
    assert done.returncode == 0, done.stderr
    assert "passed its integrity check: kept it" in done.stdout
    assert not list(tmpfs_home.glob("*.damaged-*"))
    assert "full-note" in kb_cli(papers, tmpfs_home, "list").stdout


def test_disk_full_a_run_that_fills_the_disk_fails_and_removes_its_output(papers: Path, tmpfs_home: Path) -> None:
    assert kb_cli(papers, tmpfs_home, "index").returncode == 0
    done = kb_cli(papers, tmpfs_home, "verify", "full-note#fill", "full-note#echo", "--json")
    assert done.returncode == 1, (done.stdout, done.stderr)  # one of its runs failed
    runs = {r["claim_key"]: r for r in json.loads(kb_cli(papers, tmpfs_home, "runs", "--json").stdout)}
    failed, other = runs["full-note#fill"], runs["full-note#echo"]
    assert failed["status"] == "failed" and failed["error"].startswith("disk full at "), failed
    assert len(failed["error"].splitlines()) == 1 and "MB free" in failed["error"]
    assert other["status"] == "succeeded", "the room was given back: the next run went on"
    staging = tmpfs_home / "staging"
    assert not staging.exists() or not any(staging.iterdir()), "no partial output is left"
    assert not list(tmpfs_home.rglob("big.bin"))


def test_disk_full_a_damaged_index_is_still_moved_aside_on_rebuild(papers: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert kb_cli(papers, home, "index").returncode == 0
    (home / "index.sqlite").write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        (home / f"index.sqlite{suffix}").unlink(missing_ok=True)
    listed = kb_cli(papers, home, "list")
    assert listed.returncode == 3 and "kb index --rebuild" in listed.stderr
    done = kb_cli(papers, home, "index", "--rebuild")
    assert done.returncode == 0 and "rebuilt the index" in done.stdout, done.stderr
    assert list(home.glob("index.sqlite.damaged-*"))


def test_disk_full_a_lock_or_an_outage_is_not_damage(tmp_path: Path) -> None:
    from sqlalchemy.exc import OperationalError

    database = tmp_path / "index.sqlite"
    sqlite3.connect(database).close()
    locked = OperationalError("SELECT 1", {}, sqlite3.OperationalError("database is locked"))
    assert isinstance(index_error(f"sqlite:///{database}", locked), IndexUnavailable)
    gone = OperationalError("SELECT 1", {}, Exception("connection to server at 10.0.0.1 failed: Connection refused"))
    assert isinstance(index_error("postgresql+psycopg://kb@db/kb", gone), IndexUnavailable)
    full = OperationalError("INSERT", {}, sqlite3.OperationalError("database or disk is full"))
    assert isinstance(index_error(f"sqlite:///{database}", full), DiskFull)
    broken = OperationalError("SELECT 1", {}, sqlite3.DatabaseError("file is not a database"))
    assert isinstance(index_error(f"sqlite:///{database}", broken), IndexDamaged)
    assert disk_full_message(tmp_path).startswith(f"disk full at {tmp_path} (")


# A full disk's message names the full disk: the KB home given with --home, not the current folder's (the
# command runs from the checkout, whose own .kb folder sits on another, roomy disk).
def test_disk_full_names_the_home_given_with_home_and_its_free_space(tmp_path: Path, tmpfs_home: Path) -> None:
    papers = tmp_path / "papers"
    papers.mkdir()
    (papers / "full-note.md").write_text(NOTE, encoding="utf-8")
    assert kb_cli(papers, tmpfs_home, "index").returncode == 0
    fill(tmpfs_home)
    for command in (["list"], ["worker"]):
        done = kb_cli(papers, tmpfs_home, *command)
        assert done.returncode == 4, (command, done.stdout, done.stderr)
        line = one_disk_full_line(done.stderr)
        assert f"disk full at {tmpfs_home}" in line and "(0.0 MB free)" in line, line
