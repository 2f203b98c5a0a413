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


def _timing(papers: Path, home: Path) -> list[tuple[str, float | None, float | None, dict[str, float]]]:
    runs = json.loads(run_kb(papers, home, "runs", "--json").stdout)
    return sorted((r["id"], r["actual_seconds"], r["expected_seconds"], r["stages"]) for r in runs)


def _lose_index(home: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        (home / f"index.sqlite{suffix}").unlink(missing_ok=True)


def test_the_rebuild_restores_each_runs_measured_time(tmp_path: Path) -> None:
    """A run's actual time and stage times (migration 0009) come back from its store record; a record written
    before kb kept them restores the run without them, and the rebuild says how many such runs it restored."""
    papers, home = tmp_path / "papers", tmp_path / "home"
    papers.mkdir()
    (papers / "rec.md").write_text(NOTE, encoding="utf-8")
    assert run_kb(papers, home, "verify", "rec").returncode == 0
    before = _timing(papers, home)
    assert len(before) == 1 and before[0][1] is not None and before[0][1] > 0 and before[0][3], before
    assert before[0][1] >= sum(before[0][3].values()) * 0.999  # the stages lie within the run's time

    _lose_index(home)
    rebuilt = run_kb(papers, home, "index", "--rebuild")
    assert rebuilt.returncode == 0 and "have no measured time" not in rebuilt.stdout, rebuilt.stdout
    assert _timing(papers, home) == before

    # The record as an older kb wrote it: no actual time, no stages, no estimate.
    (record,) = home.glob("**/runs/*/attempt-*.json")
    data = json.loads(record.read_text(encoding="utf-8"))
    for name in ("actual_seconds", "stages_json", "expected_seconds"):
        data["run"].pop(name)
    record.write_text(json.dumps(data), encoding="utf-8")
    _lose_index(home)
    rebuilt = run_kb(papers, home, "index", "--rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "1 restored run(s) have no measured time" in rebuilt.stdout, rebuilt.stdout
    assert _timing(papers, home) == [(before[0][0], None, None, {})]


def test_a_record_with_bad_stage_times_is_skipped(tmp_path: Path) -> None:
    """Stage times are data from the store, checked like the rest of a record: not an object of seconds, the
    record is skipped and named."""
    papers, home = tmp_path / "papers", tmp_path / "home"
    papers.mkdir()
    (papers / "rec.md").write_text(NOTE, encoding="utf-8")
    assert run_kb(papers, home, "verify", "rec").returncode == 0
    (record,) = home.glob("**/runs/*/attempt-*.json")
    data = json.loads(record.read_text(encoding="utf-8"))
    data["run"]["stages_json"] = json.dumps({"run": -3})
    record.write_text(json.dumps(data), encoding="utf-8")
    _lose_index(home)
    rebuilt = run_kb(papers, home, "index", "--rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "re-attached the evidence of 0 run(s), skipped 1" in rebuilt.stdout, rebuilt.stdout
    assert "run.stages_json is not a JSON object of stage name -> seconds" in rebuilt.stderr, rebuilt.stderr
