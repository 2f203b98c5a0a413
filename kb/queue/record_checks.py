"""What a run record read back from the artifact store must be before ``kb index --rebuild`` restores it.

The store is shared (a bucket, a synced folder), so a record in it is data, checked like a note: it lies at
``runs/<run id>/attempt-<n>.json`` and says that very run id and attempt; it is at most
``MAX_RECORD_BYTES``; it is strict JSON (no NaN); its run and evidence have the fields and types kb writes,
its evidence belongs to its run (same run id, claim and analyzer), names only files inside the store and
carries a complete provenance. A record that fails any of these is refused with one reason, and the rebuild
skips it. What a record may never decide, its verdict, is not read at all: ``kb.queue.records`` judges the
metrics again.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kb.evidence.artifact_store import check_key
from schemas import Provenance, RunStatus
from schemas.run import RUN_ID_PATTERN

#: A record holds one run row and its metrics (kilobytes); the bound keeps a planted file from filling memory.
MAX_RECORD_BYTES = 8_000_000
RECORD_PATH = re.compile(rf"(?:^|/)runs/(?P<run>{RUN_ID_PATTERN})/attempt-(?P<attempt>[0-9]{{1,6}})\.json$")


class RecordRefused(ValueError):
    """A store record the rebuild does not restore; the message says why in a few words."""


class StoredRun(BaseModel):
    """The run fields a record must carry, with the types the ``run`` table holds."""

    model_config = ConfigDict(extra="ignore")

    id: str = Field(pattern=f"^{RUN_ID_PATTERN}$")
    analyzer: str = Field(min_length=1, max_length=200)
    claim_key: str | None = Field(default=None, max_length=2000)
    params_json: str = "{}"
    group_id: str | None = Field(default=None, max_length=200)
    binding_hash: str | None = Field(default=None, max_length=200)
    device: str | None = Field(default=None, max_length=200)
    executor: str | None = Field(default=None, max_length=200)
    attempts: int = Field(default=0, ge=0)
    status: RunStatus
    progress: float = Field(default=0.0, ge=0, le=1)
    message: str | None = None
    error: str | None = None
    created_at: dt.datetime | None = None
    started_at: dt.datetime | None = None
    finished_at: dt.datetime | None = None
    # Its estimate and measured time (migration 0009): records written before kb kept them have neither.
    expected_seconds: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    actual_seconds: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    stages_json: str | None = Field(default=None, max_length=100_000)


class StoredEvidence(BaseModel):
    """The evidence fields a record must carry; ``verdict_json`` is deliberately absent (never trusted)."""

    model_config = ConfigDict(extra="ignore")

    run_id: str
    claim_key: str | None = None
    analyzer: str
    metrics_json: str
    artifacts_json: str = "[]"
    provenance_json: str
    group_id: str | None = None
    binding_hash: str | None = None
    analyzer_version: str | None = None
    kb_version: str | None = None
    created_at: dt.datetime | None = None


def _no_constant(name: str) -> Any:
    raise RecordRefused(f"not strict JSON ({name} is not a JSON number)")


def strict_json(text: str | bytes, what: str) -> Any:
    """``text`` parsed as strict JSON; ``RecordRefused`` naming ``what`` otherwise."""
    try:
        return json.loads(text, parse_constant=_no_constant)
    except RecordRefused:
        raise
    except (ValueError, RecursionError) as exc:
        raise RecordRefused(f"{what} is not valid JSON ({str(exc).splitlines()[0][:120]})") from None


def _first_error(exc: ValidationError, what: str) -> RecordRefused:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"])
    return RecordRefused(f"{what} field '{where}': {err['msg']}")


def _check_stages(stages: Any) -> None:
    """A run's stage times: a JSON object of stage name -> seconds (finite, not negative)."""
    if not isinstance(stages, dict) or not all(
            isinstance(seconds, int | float) and not isinstance(seconds, bool) and 0 <= seconds < float("inf")
            for seconds in stages.values()):
        raise RecordRefused("run.stages_json is not a JSON object of stage name -> seconds")


def check_record(raw: bytes, key: str | None) -> tuple[StoredRun, StoredEvidence | None, dict[str, Any]]:
    """The run, evidence and parsed record of ``raw``, read from store key ``key`` (None: a legacy record,
    whose path names no run); ``RecordRefused`` with the first thing wrong."""
    if len(raw) > MAX_RECORD_BYTES:
        raise RecordRefused(f"over the {MAX_RECORD_BYTES:,}-byte limit of a run record")
    record = strict_json(raw, "the record")
    if not isinstance(record, dict) or not isinstance(record.get("run"), dict):
        raise RecordRefused("not a run record (expected a JSON object with a 'run' object)")
    try:
        run = StoredRun.model_validate(record["run"])
    except ValidationError as exc:
        raise _first_error(exc, "run") from None
    if key is not None:
        _check_place(record, run, key)
    strict_json(run.params_json, "run.params_json")
    if run.stages_json is not None:
        _check_stages(strict_json(run.stages_json, "run.stages_json"))
    if record.get("evidence") is None:
        return run, None, record
    return run, _check_evidence(record["evidence"], run), record


def _check_place(record: dict[str, Any], run: StoredRun, key: str) -> None:
    """A record lies at runs/<its run's id>/attempt-<its attempt>.json: a copy moved elsewhere is refused."""
    match = RECORD_PATH.search(key)
    if match is None:
        raise RecordRefused("not at runs/<run id>/attempt-<n>.json")
    if match["run"] != run.id:
        raise RecordRefused(f"it names run {run.id!r} but lies in the folder of run {match['run']!r}")
    attempt = record.get("attempt")
    if not isinstance(attempt, int) or isinstance(attempt, bool) or attempt != int(match["attempt"]):
        raise RecordRefused(f"it names attempt {attempt!r} but is the file of attempt {match['attempt']}")


def _check_evidence(raw: Any, run: StoredRun) -> StoredEvidence:
    """A record's evidence: valid, of its own run (id, claim, analyzer), its JSON fields in their shapes."""
    try:
        evidence = StoredEvidence.model_validate(raw)
    except ValidationError as exc:
        raise _first_error(exc, "evidence") from None
    for name in ("run_id", "claim_key", "analyzer"):
        mine, its_run = getattr(evidence, name), getattr(run, "id" if name == "run_id" else name)
        if mine != its_run:
            raise RecordRefused(f"its evidence's {name} {mine!r} is not its run's {its_run!r}")
    if not isinstance(strict_json(evidence.metrics_json, "evidence.metrics_json"), dict):
        raise RecordRefused("evidence.metrics_json is not a JSON object of metrics")
    artifacts = strict_json(evidence.artifacts_json, "evidence.artifacts_json")
    if not isinstance(artifacts, list):
        raise RecordRefused("evidence.artifacts_json is not a JSON list")
    for key in artifacts:  # each is read from the store later: a key leaving it would read any file
        try:
            check_key(key)
        except ValueError as exc:
            raise RecordRefused(f"evidence.artifacts_json: {exc}") from None
    try:
        Provenance.model_validate(strict_json(evidence.provenance_json, "evidence.provenance_json"))
    except ValidationError as exc:
        raise _first_error(exc, "evidence provenance") from None
    return evidence
