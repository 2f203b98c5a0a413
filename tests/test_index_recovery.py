"""The index is a cache; the evidence is not: a damaged index says how to rebuild it, and the rebuild
re-attaches every run's evidence from the artifact store (the real CLI, in process; real SQLite)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.cli import run_kb

NOTE = ('---\npaper_id: "t:rec"\ntitle: "Recovery"\nclaims:\n  - id: c\n    statement: "s"\n'
        '    analyzer: {name: noop, params: {value: 3}}\n    expect: {metric: value, op: ">", value: 2}\n---\n')


def test_a_damaged_index_is_rebuilt_with_its_evidence(tmp_path: Path) -> None:
    papers, home = tmp_path / "papers", tmp_path / "home"
    papers.mkdir()
    (papers / "rec.md").write_text(NOTE, encoding="utf-8")
    assert run_kb(papers, home, "verify", "rec").returncode == 0
    assert run_kb(papers, home, "verify", "rec").returncode == 0  # a second run: the first becomes history
    before = json.loads(run_kb(papers, home, "evidence", "rec#c", "--json").stdout)
    assert len(before) == 2 and not before[0]["stale"] and before[1]["stale"]

    (home / "index.sqlite").write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        (home / f"index.sqlite{suffix}").unlink(missing_ok=True)
    listed = run_kb(papers, home, "list")
    assert listed.returncode == 3 and "Traceback" not in listed.stderr
    assert "kb index --rebuild" in listed.stderr and len(listed.stderr.strip().splitlines()) <= 3, listed.stderr

    rebuilt = run_kb(papers, home, "index", "--rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "re-attached the evidence of 2 run(s)" in rebuilt.stdout
    after = json.loads(run_kb(papers, home, "evidence", "rec#c", "--json").stdout)
    assert [(e["run_id"], e["stale"], e["verdict"]["kind"]) for e in after] == \
        [(e["run_id"], e["stale"], e["verdict"]["kind"]) for e in before]
    assert list(home.glob("index.sqlite.damaged-*")), "the damaged file is kept aside, not deleted"
