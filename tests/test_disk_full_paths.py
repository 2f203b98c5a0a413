"""A full disk's message names the full disk: the KB home given with ``--home``, not the current folder's.

A real 2 MiB tmpfs is the KB home (mounting needs root, as in CI); the command runs from the checkout, whose
own ``.kb`` folder sits on another, roomy disk.
"""

from __future__ import annotations

from pathlib import Path

from tests.test_disk_full import NOTE, fill, kb_cli, one_disk_full_line, tmpfs_home  # noqa: F401 - a fixture


def test_disk_full_names_the_home_given_with_home_and_its_free_space(tmp_path: Path, tmpfs_home: Path) -> None:  # noqa: F811
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
