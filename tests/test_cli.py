"""Every CLI command, run through typer's runner against real files and a real SQLite index."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli import run_kb

WIDE = {"COLUMNS": "200"}


def _run(kb_dirs: tuple[Path, Path], *args: str) -> tuple[int, str, str]:
    done = run_kb(*kb_dirs, *args, env=WIDE)
    return done.returncode, done.stdout, done.stderr


def test_validate_bundled_notes_pass(kb_dirs: tuple[Path, Path]) -> None:
    code, out, _ = _run(kb_dirs, "validate", "--json")
    assert code == 0
    rows = json.loads(out)
    expected = {"siji-2026-curse-of-depth-in-plms", "sampling-intermediate-temperatures-langevin"}
    assert {r["id"] for r in rows} >= expected
    assert all(r["valid"] for r in rows)


def test_validate_seed_note_passes(seeds: Path, kb_dirs: tuple[Path, Path]) -> None:
    code, out, err = _run(kb_dirs, "validate", str(seeds / "000_ce90e91fe3e899e8.txt"))
    assert code == 0, err
    assert "1 valid" in out


def test_validate_bad_note_names_field_and_exits_nonzero(kb_dirs: tuple[Path, Path]) -> None:
    papers, _ = kb_dirs
    bad = papers / "bad.md"
    bad.write_text('---\npaper_id: "x:1"\ntitle: "T"\nquality_score: "high"\n---\nbody\n', encoding="utf-8")
    code, _, err = _run(kb_dirs, "validate")
    assert code == 1
    assert "bad.md" in err and "quality_score" in err


def test_index_then_list_json_has_ids_and_filters(kb_dirs: tuple[Path, Path]) -> None:
    code, _, err = _run(kb_dirs, "index")
    assert code == 0, err
    code, out, _ = _run(kb_dirs, "list", "--json")
    assert code == 0
    rows = json.loads(out)
    papers, _ = kb_dirs
    assert len(rows) == len(list(papers.glob("*.md"))) == 6 and all("id" in r for r in rows)
    code, out, _ = _run(kb_dirs, "list", "--json", "--tag", "langevin")
    assert [r["id"] for r in json.loads(out)] == ["sampling-intermediate-temperatures-langevin"]
    code, out, _ = _run(kb_dirs, "list", "--json", "--min-quality", "4", "--sort", "year", "--desc")
    ids = [r["id"] for r in json.loads(out)]
    # Both Siji notes are 2026 with quality 4: ties are broken by id.
    assert ids == ["siji-2026-analysis-note-arxiv-2502-00001", "siji-2026-curse-of-depth-in-plms",
                   "sampling-intermediate-temperatures-langevin"]
    code, out, _ = _run(kb_dirs, "list", "--json", "--decision", "MAYBE")
    assert [r["id"] for r in json.loads(out)] == ["plm-architecture-discussion", "plm-bert-vs-gpt-comments",
                                                  "reading-group-depth-shallow-plms"]


def test_list_rejects_unknown_sort(kb_dirs: tuple[Path, Path]) -> None:
    code, _, err = _run(kb_dirs, "list", "--sort", "colour")
    assert code == 2 and "--sort" in err


def test_show_prints_claims_and_json(kb_dirs: tuple[Path, Path]) -> None:
    code, out, _ = _run(kb_dirs, "show", "siji-2026-curse-of-depth-in-plms", "--json")
    assert code == 0
    (row,) = json.loads(out)
    assert row["id"] == "siji-2026-curse-of-depth-in-plms"
    assert [c["id"] for c in row["claims"]][0] == "late-layers-refine"
    assert "一句话总结" in row["body"]
    code, out, _ = _run(kb_dirs, "show", "siji-2026-curse-of-depth-in-plms")
    assert code == 0 and "late-layers-refine" in out


@pytest.mark.parametrize("bad_id", ["no-such-note", "../etc/passwd"])
def test_show_unknown_or_path_id_fails_clearly(kb_dirs: tuple[Path, Path], bad_id: str) -> None:
    code, _, err = _run(kb_dirs, "show", bad_id)
    assert code == 1 and "kb list" in err


def test_search_finds_claim_statement(kb_dirs: tuple[Path, Path]) -> None:
    code, out, _ = _run(kb_dirs, "search", "first-order-like jump", "--json")
    assert code == 0
    assert json.loads(out)[0]["id"] == "sampling-intermediate-temperatures-langevin"
    code, out, _ = _run(kb_dirs, "search", "curse depth", "--json")
    assert json.loads(out)[0]["id"] == "siji-2026-curse-of-depth-in-plms"


def test_set_changes_only_that_line(kb_dirs: tuple[Path, Path]) -> None:
    papers, _ = kb_dirs
    path = papers / "plm-architecture-discussion.md"
    before = path.read_bytes().splitlines()
    code, _, err = _run(kb_dirs, "set", "plm-architecture-discussion", "quality_score=3", "status=analyzed")
    assert code == 0, err
    after = path.read_bytes().splitlines()
    changed = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
    assert changed == [(b"quality_score: 2", b"quality_score: 3"), (b'status: "reading"', b'status: "analyzed"')]
    _, out, _ = _run(kb_dirs, "list", "--json", "--status", "analyzed")
    assert "plm-architecture-discussion" in {r["id"] for r in json.loads(out)}


def test_set_invalid_value_writes_nothing(kb_dirs: tuple[Path, Path]) -> None:
    papers, _ = kb_dirs
    path = papers / "plm-architecture-discussion.md"
    before = path.read_bytes()
    code, _, err = _run(kb_dirs, "set", "plm-architecture-discussion", "decision=PERHAPS")
    assert code == 1 and "decision" in err
    assert path.read_bytes() == before
    code, _, err = _run(kb_dirs, "set", "plm-architecture-discussion", "no-equals-sign")
    assert code == 2 and "FIELD=VALUE" in err


def test_new_creates_valid_note_and_never_overwrites(kb_dirs: tuple[Path, Path]) -> None:
    args = ["new", "--title", "ESM-2 scaling: a note", "--paper-id", "arxiv:2207.00001", "--tag", "esm2",
            "--year", "2022", "--quality", "4", "--json"]
    code, out, err = _run(kb_dirs, *args)
    assert code == 0, err
    (row,) = json.loads(out)
    assert Path(row["path"]).exists()
    code, _, err = _run(kb_dirs, *args)  # same paper id again
    assert code == 1 and "paper_id" in err
    code, _, err = _run(kb_dirs, "new", "--title", "Bad", "--paper-id", "x:2", "--quality", "9")
    assert code == 1 and "quality_score" in err


def test_import_copies_bytes_and_refuses_invalid(kb_dirs: tuple[Path, Path], tmp_path: Path) -> None:
    src = tmp_path / "elsewhere.md"
    src.write_bytes('\ufeff---\r\npaper_id: "doi:10.1/x"\r\ntitle: "Imported"\r\n---\r\nBody\r\n'.encode())
    code, _, err = _run(kb_dirs, "import", str(src))
    assert code == 0, err
    papers, _ = kb_dirs
    assert (papers / "elsewhere.md").read_bytes() == src.read_bytes()
    bad = tmp_path / "bad.md"
    bad.write_text("---\ntitle: [unclosed\n---\n", encoding="utf-8")
    code, _, err = _run(kb_dirs, "import", str(bad))
    assert code == 1 and "bad.md" in err
    assert not (papers / "bad.md").exists()


def test_schema_writes_json_schemas(tmp_path: Path) -> None:
    result = run_kb(None, None, "schema", "--out", str(tmp_path / "json"), "--json", env=WIDE)
    assert result.returncode == 0
    rows = json.loads(result.stdout)
    assert {r["id"] for r in rows} >= {"paper_note", "claim", "run", "evidence"}
    note_schema = json.loads((tmp_path / "json" / "paper_note.schema.json").read_text())
    assert note_schema["properties"]["quality_score"]["anyOf"][0]["maximum"] == 5


def test_demo_prints_library(kb_dirs: tuple[Path, Path]) -> None:
    code, out, _ = _run(kb_dirs, "demo", "--no-verify")
    assert code == 0
    assert "Library: 6 note(s)" in out and "late-layers-refine" in out and "optimal-depth-24-36" in out


def test_check_reports_grounding_and_exits_one_when_unbacked(kb_dirs: tuple[Path, Path], tmp_path: Path) -> None:
    code, out, _ = _run(kb_dirs, "check", "siji-2026-curse-of-depth-in-plms", "--json")
    assert code == 0
    assert {r["grounding"] for r in json.loads(out)} == {"grounded"}
    other = tmp_path / "other.txt"
    other.write_text("An unrelated abstract about enzymes.", encoding="utf-8")
    code, out, _ = _run(kb_dirs, "check", "siji-2026-curse-of-depth-in-plms", "--source", str(other), "--json")
    assert code == 1
    rows = json.loads(out)
    assert {r["grounding"] for r in rows if r["claim"]} == {"not_found"}
    assert [r["id"] for r in rows if r["grounding"] == "warning"] == ["siji-2026-curse-of-depth-in-plms:title"]


def test_check_exits_one_when_a_claim_states_numbers_its_source_does_not(kb_dirs: tuple[Path, Path]) -> None:
    papers, _ = kb_dirs
    (papers / "n.txt").write_text("Deeper models were studied.\n", encoding="utf-8")
    (papers / "n.md").write_text('---\npaper_id: "t:1"\ntitle: "Deeper models"\nsource_file: "n.txt"\nclaims:\n'
                                 '  - id: depth\n    statement: "Deeper models were studied, up to 48 layers."\n'
                                 '    source: {quote: "Deeper models were studied"}\n---\n', encoding="utf-8")
    code, out, _ = _run(kb_dirs, "check", "n", "--json")
    (row,) = json.loads(out)
    assert code == 1 and row["grounding"] == "grounded" and "48" in row["disagreement"]


def test_runs_watch_follows_active_runs_until_they_end(kb_dirs: tuple[Path, Path]) -> None:
    import threading

    from kb.core import KnowledgeBase
    from kb.queue import store as queue_store
    from kb.settings import Settings

    papers, home = kb_dirs
    kb = KnowledgeBase(Settings(papers=papers, home=home))
    run = queue_store.enqueue(kb.engine, "noop", {"value": 1.0, "steps": 5, "step_seconds": 0.2})
    worker = threading.Thread(target=kb.work)
    worker.start()
    code, _, err = _run(kb_dirs, "runs", "--watch", "--json")
    worker.join()
    assert code == 0
    assert kb.runs(ids=[run.id])[0].status.value == "succeeded"
    code, out, _ = _run(kb_dirs, "runs", "--json")
    assert json.loads(out)[0]["id"] == run.id and json.loads(out)[0]["status"] == "succeeded"


def test_verify_shows_progress_per_run(kb_dirs: tuple[Path, Path]) -> None:
    papers, _ = kb_dirs
    (papers / "noop.md").write_text('---\npaper_id: "t:noop"\ntitle: "Noop"\nclaims:\n  - id: v\n'
                                    '    statement: "v"\n    analyzer: {name: noop, params: {steps: 3}}\n'
                                    '    expect: {metric: value, op: ">", value: 0}\n---\n', encoding="utf-8")
    code, out, err = _run(kb_dirs, "verify", "noop")
    assert code == 0, err
    assert "noop#v" in err and "succeeded" in err and "100%" in err
    assert "supported" in out


def test_worker_logs_each_run(kb_dirs: tuple[Path, Path]) -> None:
    from kb.core import KnowledgeBase
    from kb.queue import store as queue_store
    from kb.settings import Settings

    papers, home = kb_dirs
    run = queue_store.enqueue(KnowledgeBase(Settings(papers=papers, home=home)).engine, "noop", {"value": 1.0})
    code, out, err = _run(kb_dirs, "worker")
    assert code == 0 and "1 succeeded" in out
    assert f"run {run.id[:12]}: noop on cpu" in err and f"run {run.id[:12]}: succeeded in" in err


def test_evidence_shows_the_claim_beside_its_evidence_and_rejects_unknown_keys(kb_dirs: tuple[Path, Path]) -> None:
    papers, _ = kb_dirs
    (papers / "e.md").write_text('---\npaper_id: "t:e"\ntitle: "E"\nclaims:\n  - id: v\n'
                                 '    statement: "The value exceeds one."\n'
                                 '    analyzer: {name: noop, params: {value: 3}}\n'
                                 '    expect: {metric: value, op: ">", value: 1}\n---\n', encoding="utf-8")
    code, out, _ = _run(kb_dirs, "evidence", "e#v")
    assert code == 0 and "The value exceeds one." in out and "no evidence for e#v yet" in out
    _run(kb_dirs, "verify", "e#v")
    code, out, _ = _run(kb_dirs, "evidence", "e#v")
    assert code == 0 and "expects: value > 1" in out and "verdict: supported" in out and "files (3" in out
    code, out, _ = _run(kb_dirs, "evidence", "e#v", "--json")
    (row,) = json.loads(out)
    assert row["id"] == "e#v" and row["verdict"]["kind"] == "supported" and row["metrics"]["value"] == 3
    code, _, err = _run(kb_dirs, "evidence", "e#nope")
    assert code == 1 and "no such claim" in err
