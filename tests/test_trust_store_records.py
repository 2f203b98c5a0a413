"""The artifact store is data: ``kb index --rebuild`` restores a run record only from its own place, checked
like a note, and judges every verdict again from the metrics; planted, malformed and oversized records are
each one line naming the record, the rest are restored (the real CLI, real files in the store)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from kb.queue.record_checks import MAX_RECORD_BYTES, RecordRefused, check_record
from tests.helpers.cli import run_kb
from tests.helpers.store_records import noop_note, verified_once

NOTE = noop_note("store", 5)


def _forge(real: dict[str, Any], run_id: str, **evidence: Any) -> dict[str, Any]:
    """A copy of a genuine record under another run id, with evidence fields replaced."""
    record = json.loads(json.dumps(real))
    record["run"]["id"] = run_id
    record["evidence"]["run_id"] = run_id
    record["evidence"]["created_at"] = "2099-01-01T00:00:00Z"
    record["evidence"].update(evidence)
    return record


def _plant(home: Path, folder: str, attempt: int, content: bytes | dict[str, Any] | list[Any]) -> str:
    path = home / "runs" / folder / f"attempt-{attempt}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else json.dumps(content).encode())
    return f"runs/{folder}/attempt-{attempt}.json"


@pytest.fixture
def verified(tmp_path: Path) -> tuple[Path, Path, dict[str, Any]]:
    """A note whose one claim ran once (refuted: 3 is not > 5); returns papers, home and the run's record."""
    return verified_once(tmp_path, "store", NOTE)


def _lose_index(home: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        (home / f"index.sqlite{suffix}").unlink(missing_ok=True)


def test_planted_and_malformed_records_are_skipped_by_name_and_verdicts_judged_again(
        verified: tuple[Path, Path, dict[str, Any]]) -> None:
    papers, home, real = verified
    forged_id = uuid.uuid4().hex
    forged_verdict = json.dumps({"kind": "supported", "reason": "FORGED: trust me", "expected": "value > 5.0"})
    # A record of the right shape in its own place: restored, but its verdict is kb's, not the forger's.
    _plant(home, forged_id, 1, _forge(real, forged_id, verdict_json=forged_verdict, verdict_kind="supported"))
    wrong_folder = uuid.uuid4().hex
    bad = {
        _plant(home, wrong_folder, 1, _forge(real, uuid.uuid4().hex)): "lies in the folder of run",
        _plant(home, forged_id + "x", 2, _forge(real, forged_id + "x")): "names attempt 1",
        _plant(home, "empty-list", 1, []): "not a run record",
        _plant(home, "not-json", 1, b"{\"run\": "): "not valid JSON",
        _plant(home, "nan", 1, _forge(real, "nan", metrics_json='{"value": NaN}')): "not strict JSON",
        _plant(home, "no-prov", 1, _forge(real, "no-prov", provenance_json="{}")): "provenance",
        _plant(home, "other-claim", 1, {**_forge(real, "other-claim"),
                                        "run": {**_forge(real, "other-claim")["run"], "claim_key": "store#d"}}):
            "claim_key",
    }
    huge = home / "runs" / "huge" / "attempt-1.json"
    huge.parent.mkdir()
    with huge.open("wb") as handle:  # sparse: 3 GB on paper, nothing on disk; never read
        handle.truncate(3_000_000_000)
    bad["runs/huge/attempt-1.json"] = "byte limit"
    _lose_index(home)

    rebuilt = run_kb(papers, home, "index", "--rebuild")
    assert rebuilt.returncode == 0 and "Traceback" not in rebuilt.stderr, rebuilt.stderr
    skipped = [line for line in rebuilt.stderr.splitlines() if line.startswith("skipped store record")]
    assert len(skipped) == len(bad), rebuilt.stderr
    for key, reason in bad.items():
        line = next(line for line in skipped if key in line)
        assert reason in line, line
    assert f"re-attached the evidence of 2 run(s), skipped {len(bad)} store record(s)" in rebuilt.stdout

    evidence = run_kb(papers, home, "evidence", "store#c", "--json")
    assert evidence.returncode == 0, evidence.stderr
    rows = json.loads(evidence.stdout)
    assert {row["run_id"] for row in rows} == {real["run"]["id"], forged_id}
    assert all(row["verdict"]["kind"] == "refuted" for row in rows), rows
    assert "FORGED" not in evidence.stdout
    shown = run_kb(papers, home, "show", "store", "--json")
    assert shown.returncode == 0 and "FORGED" not in shown.stdout, shown.stderr


def test_a_record_of_another_claim_cannot_lend_its_verdict(verified: tuple[Path, Path, dict[str, Any]]) -> None:
    """Metrics that meet the expectation give "supported" by kb's rule, whatever the record said."""
    papers, home, real = verified
    forged_id = uuid.uuid4().hex
    metrics = json.loads(real["evidence"]["metrics_json"])
    metrics["value"] = 9.0
    _plant(home, forged_id, 1, _forge(real, forged_id, metrics_json=json.dumps(metrics),
                                      verdict_json=json.dumps({"kind": "refuted", "reason": "FORGED"})))
    _lose_index(home)
    assert run_kb(papers, home, "index", "--rebuild").returncode == 0
    rows = json.loads(run_kb(papers, home, "evidence", "store#c", "--json").stdout)
    newest = next(row for row in rows if row["run_id"] == forged_id)
    assert newest["verdict"]["kind"] == "supported" and "FORGED" not in newest["verdict"]["reason"]


@pytest.mark.parametrize(("raw", "reason"), [
    (b"[]", "not a run record"),
    (b"{", "not valid JSON"),
    (b'{"run": {"id": "r", "analyzer": "noop", "status": "running", "progress": Infinity}}', "not strict JSON"),
    (b'{"run": {"id": "r", "analyzer": "noop", "status": "weird"}}', "run field 'status'"),
    (b'{"run": {"id": "../r", "analyzer": "noop", "status": "failed"}}', "run field 'id'"),
    (b" " * (MAX_RECORD_BYTES + 1), "byte limit"),
])
def test_check_record_refuses_with_one_reason(raw: bytes, reason: str) -> None:
    with pytest.raises(RecordRefused, match=reason):
        check_record(raw, "runs/r/attempt-1.json")


@pytest.mark.parametrize("run_id", ["..", ".", ".hidden", "-rf"])
def test_a_run_id_is_never_a_folder_step_nor_an_option(run_id: str) -> None:
    """A record an object store lists at ``runs/../attempt-1.json`` (a legal S3 key, which ``runs/*/`` matches)
    names run ``..``: a run id is joined into store keys and local paths and typed on command lines, so it
    starts with a letter or digit."""
    raw = json.dumps({"run": {"id": run_id, "analyzer": "noop", "status": "failed"}, "attempt": 1}).encode()
    with pytest.raises(RecordRefused, match="run field 'id'"):
        check_record(raw, f"runs/{run_id}/attempt-1.json")
    check_record(raw.replace(f'"{run_id}"'.encode(), b'"r.1-x"'), "runs/r.1-x/attempt-1.json")  # a fine id
