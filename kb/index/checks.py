"""Whether a SQLite index is one kb can use as it is, checked beyond SQLite's own integrity check.

``kb index --rebuild`` keeps an index only when it passes every check here, and otherwise moves it aside
and builds a new one from the notes and the store, so a damaged or foreign file is never a dead end:

- SQLite's ``PRAGMA integrity_check`` (pages and b-trees);
- the schema revision: present (a dropped ``alembic_version`` is no revision at all) and one this kb knows;
- every table kb reads, with every column its model has (a dropped or renamed column fails);
- every row kb reads back as data parses as kb wrote it (a claim's JSON against the claim schema, a
  paper's frontmatter JSON, a tag list, a run's parameters, the evidence's metrics, provenance and verdict);
- the full-text tables (``kb.index.search.fts_damage``; FTS5's own check, which the first does not look into).

Each check returns a short reason or None; ``KnowledgeBase.index_health`` runs them in that order.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from pydantic import ValidationError
from sqlalchemy import Connection
from sqlmodel import SQLModel

from kb.index.database import ClaimRow, Evidence, Paper, Run, Tag
from kb.index.migrate import unknown_revision
from schemas import Claim, Provenance, Verdict

# The JSON columns kb parses when it reads a row, with what each must parse to.
_JSON_COLUMNS: list[tuple[type[SQLModel], str, Callable[[str], Any]]] = [
    (ClaimRow, "claim_json", Claim.model_validate_json),
    (Paper, "meta_json", lambda text: _object(json.loads(text))),
    (Paper, "tags_text", lambda text: _list(json.loads(text)) if text else []),
    (Run, "params_json", lambda text: _object(json.loads(text))),
    (Evidence, "metrics_json", lambda text: _object(json.loads(text))),
    (Evidence, "artifacts_json", lambda text: _list(json.loads(text))),
    (Evidence, "provenance_json", Provenance.model_validate_json),
    (Evidence, "verdict_json", lambda text: Verdict.model_validate_json(text) if text is not None else None),
]


def _object(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")
    return value


def _list(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise ValueError("not a JSON list")
    return value


def _table(model: type[SQLModel]) -> str:
    return str(model.__tablename__)


def schema_problem(conn: Connection) -> str | None:
    """The first thing that keeps this index from being used as it is: integrity, schema revision, tables
    and columns; None when all is as this kb's models say."""
    verdict = [row[0] for row in conn.exec_driver_sql("PRAGMA integrity_check").all()]
    if verdict != ["ok"]:
        return "; ".join(map(str, verdict[:3]))
    tables = {row[0] for row in conn.exec_driver_sql("SELECT name FROM sqlite_master WHERE type='table'")}
    if (
        "alembic_version" not in tables
        or conn.exec_driver_sql("SELECT count(*) FROM alembic_version").scalar() != 1
    ):
        return (
            "it has no schema revision (no alembic_version row): it is not an index kb wrote, or it "
            "was damaged"
        )
    if (newer := unknown_revision(conn)) is not None:
        return newer
    for model in (Paper, Tag, ClaimRow, Run, Evidence):
        if _table(model) not in tables:
            return f"the table {_table(model)} is missing"
        have = {row[1] for row in conn.exec_driver_sql(f"PRAGMA table_info({_table(model)})")}
        missing = [name for name in model.model_fields if name not in have]
        if missing:
            return f"the table {_table(model)} lacks the column(s) {', '.join(missing)}"
    return None


def _rows(conn: Connection, table: str, column: str, key: str) -> Iterator[tuple[Any, Any]]:
    result = conn.exec_driver_sql(f"SELECT {key}, {column} FROM {table}")  # names from kb's own models
    while batch := result.fetchmany(2000):
        yield from batch


def row_problem(conn: Connection) -> str | None:
    """The first row kb would fail to read back (its JSON not what kb wrote), named by table, key and
    column."""
    for model, column, parse in _JSON_COLUMNS:
        key = "key" if model is ClaimRow else "id"
        for row_key, text in _rows(conn, _table(model), column, key):
            try:
                if not isinstance(text, str | None):
                    raise ValueError(f"a {type(text).__name__}, not text")
                parse(text)  # type: ignore[arg-type]
            except (ValueError, ValidationError, TypeError, RecursionError) as exc:
                reason = str(exc).splitlines()[0][:120]
                return f"{_table(model)} {row_key}: {column} cannot be read ({reason})"
    return None
