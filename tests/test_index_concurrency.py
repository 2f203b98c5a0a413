"""Concurrent indexers and readers all succeed, on SQLite and PostgreSQL (real processes)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import BUNDLED_PAPERS
from tests.helpers.cli import kb_command


def _start(args: list[str], papers: Path, home: Path, db: str | None) -> subprocess.Popen[str]:
    extra = ["--db", db] if db else []
    return subprocess.Popen([*kb_command(papers, home, *args), *extra], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _all_succeed(procs: list[subprocess.Popen[str]]) -> list[str]:
    outputs = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0 and "Traceback" not in err, err
        outputs.append(out)
    return outputs


def _concurrent_indexers_and_readers(tmp_path: Path, db: str | None) -> None:
    papers = tmp_path / "papers"
    shutil.copytree(BUNDLED_PAPERS, papers)
    home = tmp_path / "home"
    # Two indexers on a database that does not exist yet: both migrate and index at once.
    _all_succeed([_start(["index"], papers, home, db), _start(["index"], papers, home, db)])
    # A note appears; `kb list` and `kb search` (which index first) and an indexer race for it.
    (papers / "fresh.md").write_text('---\npaper_id: "t:fresh"\ntitle: "Fresh trigram note"\n---\nBody.\n',
                                     encoding="utf-8")
    listed, found, _ = _all_succeed([_start(["list", "--json"], papers, home, db),
                                     _start(["search", "trigram", "--json"], papers, home, db),
                                     _start(["index"], papers, home, db)])
    assert "fresh" in {row["id"] for row in json.loads(listed)}
    assert [hit["id"] for hit in json.loads(found)] == ["fresh"]


@pytest.mark.parametrize("trial", range(2))
def test_concurrent_indexers_and_readers_on_sqlite(tmp_path: Path, trial: int) -> None:
    _concurrent_indexers_and_readers(tmp_path, None)


@pytest.mark.postgres
def test_concurrent_indexers_and_readers_on_postgres(tmp_path: Path, pg_database: str) -> None:
    _concurrent_indexers_and_readers(tmp_path, pg_database)
