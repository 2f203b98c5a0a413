"""The tree's one atomic-write helper and one unique-name rule (analyzers/files.py)."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest

from analyzers.files import (
    atomic_folder,
    atomic_write_json,
    atomic_write_text,
    staging_folder,
    unique_name,
    unique_names,
    write_unique,
)


def test_unique_names_count_from_two_and_keep_the_number_when_cut() -> None:
    names = unique_names("claim", ".md")
    assert [next(names) for _ in range(3)] == ["claim.md", "claim-2.md", "claim-3.md"]
    assert unique_name("abcdef", {"abcdef", "abcd-2"}, max_length=6) == "abcd-3"
    assert unique_name("x", set()) == "x"


def test_atomic_write_keeps_mode_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("old")
    os.chmod(path, 0o640)
    atomic_write_text(path, "new")
    assert path.read_text() == "new" and (path.stat().st_mode & 0o777) == 0o640
    atomic_write_json(tmp_path / "b.json", {"x": float("nan"), "p": tmp_path})
    assert json.loads((tmp_path / "b.json").read_text())["p"] == str(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.json"]


def test_write_unique_never_overwrites_even_when_racing(tmp_path: Path) -> None:
    written: list[Path] = []
    lock = threading.Lock()

    def write(i: int) -> None:
        target = write_unique(tmp_path, "note", ".md", f"{i}".encode())
        with lock:
            written.append(target)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({p.name for p in written}) == 8  # eight names, eight files, no lost write
    assert sorted(p.read_text() for p in written) == [str(i) for i in range(8)]


def test_atomic_folder_replaces_the_old_folder_whole_or_leaves_it(tmp_path: Path) -> None:
    target = tmp_path / "out"
    target.mkdir()
    (target / "old.txt").write_text("old")
    with pytest.raises(RuntimeError), atomic_folder(target) as staging:
        (staging / "new.txt").write_text("half")
        raise RuntimeError("the block failed")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"] and (target / "old.txt").read_text() == "old"
    with atomic_folder(target) as staging:
        (staging / "new.txt").write_text("new")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no staging or backup folder left beside it
    assert sorted(p.name for p in target.iterdir()) == ["new.txt"]


def test_staging_folder_takes_the_umask_mode_not_mkdtemps_0700(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        staging = staging_folder(tmp_path / "out")
    finally:
        os.umask(old)
    assert stat.S_IMODE(staging.stat().st_mode) == 0o755 and staging.parent == tmp_path
