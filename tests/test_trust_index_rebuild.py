"""A rebuild that always rebuilds: an index whose pages pass SQLite's integrity check but whose schema revision,
columns, rows or full-text tables are damaged (or a SQLite file kb never wrote) makes read commands say
"cannot be read: run `kb index --rebuild`" in one line, and the rebuild moves it aside and builds a new index
from the notes and the store (the real CLI, real SQLite files damaged with sqlite3)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.helpers.cli import run_kb

NOTE = ('---\npaper_id: "t:rb"\ntitle: "Folding rebuild"\nclaims:\n  - id: c\n    statement: "s"\n'
        '    analyzer: {name: noop, params: {value: 3}}\n    expect: {metric: value, op: ">", value: 2}\n---\nBody\n')


@pytest.fixture(scope="module")
def good_index(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A notes folder and a KB home whose index holds one note and one run's evidence."""
    root = tmp_path_factory.mktemp("good")
    papers, home = root / "papers", root / "home"
    papers.mkdir()
    (papers / "rb.md").write_text(NOTE, encoding="utf-8")
    assert run_kb(papers, home, "verify", "rb").returncode == 0
    with sqlite3.connect(home / "index.sqlite") as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return papers, home


def _damaged(good_index: tuple[Path, Path], tmp_path: Path, damage: str) -> tuple[Path, Path]:
    papers, home = tmp_path / "papers", tmp_path / "home"
    shutil.copytree(good_index[0], papers)
    shutil.copytree(good_index[1], home)
    for suffix in ("-wal", "-shm"):
        (home / f"index.sqlite{suffix}").unlink(missing_ok=True)
    if damage == "foreign":  # a SQLite file some other program wrote, with a table of the same name
        (home / "index.sqlite").unlink()
        with sqlite3.connect(home / "index.sqlite") as conn:
            conn.execute("CREATE TABLE paper (x)")
    else:
        with sqlite3.connect(home / "index.sqlite") as conn:
            conn.execute(damage)
    return papers, home


DAMAGES = {
    "DROP TABLE alembic_version": ("list", "cannot be read"),
    "foreign": ("list", "cannot be read"),
    "UPDATE claim SET claim_json = '{\"statement\": 1'": ("show rb", "cannot be read"),
    "ALTER TABLE claim DROP COLUMN grounding": ("evidence rb#c", "cannot be read"),
    "UPDATE evidence SET provenance_json = '{}'": ("evidence rb#c", "cannot be read"),
    "DELETE FROM paper_fts_config": ("search folding", "the search index is damaged: run `kb index --rebuild`"),
}


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_index_says_rebuild_and_the_rebuild_rebuilds(good_index: tuple[Path, Path], tmp_path: Path,
                                                               damage: str) -> None:
    papers, home = _damaged(good_index, tmp_path, damage)
    command, said = DAMAGES[damage]
    refused = run_kb(papers, home, *command.split())
    assert refused.returncode == 3 and "Traceback" not in refused.stderr, refused.stderr
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and said in lines[0] and "kb index --rebuild" in lines[0], refused.stderr

    rebuilt = run_kb(papers, home, "index", "--rebuild")
    assert rebuilt.returncode == 0 and "Traceback" not in rebuilt.stderr, rebuilt.stderr
    assert "rebuilt the index; re-attached the evidence of 1 run(s)" in rebuilt.stdout, rebuilt.stdout
    assert list(home.glob("index.sqlite.damaged-*")), "the damaged file is kept aside, not deleted"
    shown = run_kb(papers, home, "show", "rb", "--json")
    assert shown.returncode == 0, shown.stderr
    evidence = json.loads(run_kb(papers, home, "evidence", "rb#c", "--json").stdout)
    assert [row["verdict"]["kind"] for row in evidence] == ["supported"]
    assert run_kb(papers, home, "search", "folding").returncode == 0


def test_a_sound_index_is_kept_by_the_rebuild(good_index: tuple[Path, Path], tmp_path: Path) -> None:
    papers, home = tmp_path / "papers", tmp_path / "home"
    shutil.copytree(good_index[0], papers)
    shutil.copytree(good_index[1], home)
    rebuilt = run_kb(papers, home, "index", "--rebuild")
    assert rebuilt.returncode == 0 and "passed its integrity check: kept it" in rebuilt.stdout, rebuilt.stdout
    assert not list(home.glob("index.sqlite.damaged-*"))
