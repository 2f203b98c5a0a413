"""A shared artifact store is data: a file in it that is a symbolic link, and a run record naming files
outside it, make kb read nothing outside the store (the real CLI in process, a real folder store)."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

import pytest

from kb.evidence.artifact_store import ArtifactStore
from tests.helpers.cli import run_kb
from tests.helpers.store_records import noop_note, verified_once

NOTE = noop_note("keys", 2)
SECRET = "SECRET-7f3a: never leaves this file"


@pytest.fixture
def verified(tmp_path: Path) -> tuple[Path, Path, dict[str, Any]]:
    """One run of a noop claim in a folder store (the KB home); returns papers, home and its record."""
    return verified_once(tmp_path, "keys", NOTE)


def _secret(tmp_path: Path) -> Path:
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text(SECRET)
    return secret


def _bundle_text(bundle: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in bundle.rglob("*") if p.is_file())


def test_a_store_file_that_is_a_symlink_is_neither_read_nor_exported(verified: tuple[Path, Path, dict[str, Any]],
                                                                    tmp_path: Path) -> None:
    """Someone with write access to a shared store folder swaps a run's log for a link to a private file:
    ``kb evidence export`` must not carry that file to whoever the bundle goes to."""
    papers, home, record = verified
    log = next(k for k in json.loads(record["evidence"]["artifacts_json"]) if k.endswith("log.txt"))
    (home / log).unlink()
    (home / log).symlink_to(_secret(tmp_path))
    store = ArtifactStore(home)
    assert store.local_path(log) is None and store.read_bytes(log) is None and not store.exists(log)
    # a linked folder on the way to the file is the same escape
    folder = (home / log).parent
    (home / log).unlink()
    os.rename(folder, tmp_path / "outside" / "moved")
    (tmp_path / "outside" / "moved" / "log.txt").write_text(SECRET)
    folder.symlink_to(tmp_path / "outside" / "moved")
    assert store.local_path(log) is None

    exported = run_kb(papers, home, "evidence", "export", "--all", "-o", str(tmp_path / "bundle"))
    assert exported.returncode == 0, exported.stderr
    assert SECRET not in _bundle_text(tmp_path / "bundle")
    assert "log.txt (not in the artifact store)" in exported.stdout + exported.stderr


def test_a_folder_store_writes_nothing_through_a_linked_folder(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path / "home")
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "home" / "evidence").mkdir(parents=True)
    (tmp_path / "home" / "evidence" / "ab").symlink_to(outside)
    source = tmp_path / "a.txt"
    source.write_bytes(b"data")
    with pytest.raises(ValueError, match="symbolic link"):
        store.put_file(source, f"evidence/ab/{'ab' * 32}/a.txt")
    assert list(outside.iterdir()) == []


def _planted(home: Path, real: dict[str, Any], artifacts: list[str]) -> str:
    record = json.loads(json.dumps(real))
    run_id = uuid.uuid4().hex
    record["run"]["id"] = record["evidence"]["run_id"] = run_id
    record["evidence"]["artifacts_json"] = json.dumps(artifacts)
    path = home / "runs" / run_id / "attempt-1.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(record))
    return f"runs/{run_id}/attempt-1.json"


def test_a_store_record_naming_files_outside_the_store_is_skipped(verified: tuple[Path, Path, dict[str, Any]],
                                                                 tmp_path: Path) -> None:
    """A record planted in the store whose file list leaves the store (through the read cache of a remote
    store, the very file named): ``kb index --rebuild`` skips it by name, and export and the listing work."""
    papers, home, real = verified
    secret = _secret(tmp_path)
    bad = [_planted(home, real, [str(secret)]),
           _planted(home, real, [f"evidence/aa/{'a' * 64}/{'../' * 12}{str(secret).lstrip('/')}"]),
           _planted(home, real, [{"key": "evidence/x"}]),  # type: ignore[list-item]
           _planted(home, real, ["evidence/aa/b\\..\\..\\c.txt"])]
    for suffix in ("", "-wal", "-shm"):
        (home / f"index.sqlite{suffix}").unlink(missing_ok=True)
    rebuilt = run_kb(papers, home, "index", "--rebuild")
    assert rebuilt.returncode == 0 and "Traceback" not in rebuilt.stderr, rebuilt.stderr
    skipped = [line for line in rebuilt.stderr.splitlines() if line.startswith("skipped store record")]
    assert len(skipped) == len(bad), rebuilt.stderr
    for key in bad:
        line = next(line for line in skipped if key in line)
        assert "evidence.artifacts_json" in line, line
    exported = run_kb(papers, home, "evidence", "export", "--all", "-o", str(tmp_path / "bundle"))
    assert exported.returncode == 0 and "Traceback" not in exported.stderr, exported.stderr
    assert SECRET not in _bundle_text(tmp_path / "bundle")
