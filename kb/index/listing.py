"""The notes listing's rules, with no SQLAlchemy: when the index is current, how its papers are filtered and
sorted, and what a listing row holds; and ``current_listing``, which answers ``kb list`` from a SQLite index
with the standard library alone when the index is current.

One home for each rule, shared by both ways of reading the index:

- *current* (``StoredNote.unchanged_on_disk``, ``is_current``): every note file has its row, at the same path
  with the same modification time and size, its source text unchanged, and no row lacks its file. The indexer
  (``kb.index.indexing``) parses again exactly the notes this rule does not pass;
- *filtered and sorted* (``paper_filter``): the Library's filters and sort order as one SQL ``WHERE`` and
  ``ORDER BY`` with named parameters, which SQLAlchemy (``indexing.filter_papers``, on SQLite and PostgreSQL)
  and ``sqlite3`` run alike;
- *a row* (``summary``): what a listing prints of a paper, ``kb.core.paper_summary`` included.

``current_listing`` reads in one read-only transaction and says None whenever it cannot vouch for the answer
(no index, another schema revision, a note new, edited, moved or gone, a source text changed, any error
reading): then ``kb list`` takes the full path, which indexes first and names the notes it could not read.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from kb.index.migrate import head_revision
from kb.notes.folder import find_notes

SortKey = Literal["id", "title", "year", "quality"]
SORT_COLUMNS: dict[str, str] = {"id": "paper.id", "title": "paper.title", "year": "paper.year",
                                "quality": "paper.quality_score"}
# The paper columns a listing row is made of, in the order ``summary`` takes them.
SUMMARY_COLUMNS = ("id", "paper_id", "title", "year", "status", "decision", "quality_score", "journal_tier",
                   "tags_text", "path")
# What the index keeps of a note to tell whether it changed on disk, in the order ``StoredNote`` takes them.
STORED_COLUMNS = ("id", "path", "paper_id", "content_hash", "mtime_ns", "size", "source_path",
                  "source_mtime_ns")


def encode_tags(tags: Sequence[str]) -> str:
    """A note's tags as the ``tags_text`` column holds them: a JSON array, so a tag with a space ("protein
    design") stays one tag (the search index gets the words; ``Tag`` rows serve the tag filter)."""
    return json.dumps(list(tags), ensure_ascii=False)


def decode_tags(tags_text: str | None) -> list[str]:
    """The tags of an indexed paper, in the note's order, from its ``tags_text`` column."""
    return [str(tag) for tag in json.loads(tags_text)] if tags_text else []


def mtime_ns(path: Path | None) -> int | None:
    """A file's modification time in nanoseconds; None for no path or a file that cannot be read."""
    try:
        return path.stat().st_mtime_ns if path is not None else None
    except OSError:
        return None


@dataclass(frozen=True)
class StoredNote:
    """What the index holds of one note to tell whether the file changed (``STORED_COLUMNS`` after the id)."""

    path: str
    paper_id: str
    content_hash: str
    mtime_ns: int
    size: int
    source_path: str | None
    source_mtime_ns: int | None

    def source_changed(self) -> bool:
        """Whether the source text the claims were checked against changed (or appeared, or went)."""
        if self.source_path is None:
            return False
        return mtime_ns(Path(self.source_path)) != self.source_mtime_ns

    def unchanged_on_disk(self, path: Path, st: os.stat_result) -> bool:
        """Whether ``path`` (stat ``st``) is the file this row was indexed from, untouched since: same path,
        modification time and size. (Another stat with the same content is unchanged too, but only reading
        the file tells: the indexer does, and records the new stat.)"""
        return self.path == str(path) and self.mtime_ns == st.st_mtime_ns and self.size == st.st_size


def is_current(stored: dict[str, StoredNote], papers_dir: Path) -> bool:
    """Whether the index rows ``stored`` (by note id) are exactly the notes of ``papers_dir`` as they are on
    disk: the rule under which indexing would change nothing (nor name an unreadable note: it has no row)."""
    paths = find_notes(papers_dir) if papers_dir.is_dir() else []
    if len(paths) != len(stored):  # a note new or gone (two files of one id: the second's path differs)
        return False
    for path in paths:
        old = stored.get(path.stem)
        try:
            if old is None or old.source_changed() or not old.unchanged_on_disk(path, path.stat()):
                return False
        except OSError:
            return False
    return True


@dataclass(frozen=True)
class PaperFilter:
    """The Library's filters as SQL over the ``paper`` table: ``where`` (empty for none) and ``order_by``,
    with ``params`` for their named parameters (``:tag``)."""

    where: str
    order_by: str
    params: dict[str, Any]


def paper_filter(*, tag: str | None = None, decision: str | None = None, status: str | None = None,
                 min_quality: int | None = None, year: int | None = None, sort: SortKey = "id",
                 descending: bool = False) -> PaperFilter:
    """Notes with this tag (whatever its case: 'ESM2' finds esm2), decision (any case), workflow status,
    quality at least ``min_quality`` and year; sorted by ``sort`` with empty values last, ties by id."""
    conditions: list[str] = []
    params: dict[str, Any] = {}
    if tag is not None:
        conditions.append("paper.id IN (SELECT tag.paper_id FROM tag WHERE lower(tag.tag) = :tag)")
        params["tag"] = tag.lower()
    if decision is not None:
        conditions.append("paper.decision = :decision")
        params["decision"] = str(decision).upper()
    if status is not None:
        conditions.append("paper.status = :status")
        params["status"] = str(status)
    if min_quality is not None:
        conditions.append("paper.quality_score >= :min_quality")
        params["min_quality"] = min_quality
    if year is not None:
        conditions.append("paper.year = :year")
        params["year"] = year
    if sort not in SORT_COLUMNS:
        raise ValueError(f"sort must be one of {sorted(SORT_COLUMNS)}, got {sort!r}")
    order = f"{SORT_COLUMNS[sort]} {'DESC' if descending else 'ASC'} NULLS LAST, paper.id"
    return PaperFilter(" AND ".join(conditions), order, params)


def summary(values: Sequence[Any]) -> dict[str, Any]:
    """A listing row (JSON-ready) from a paper's ``SUMMARY_COLUMNS`` values, its tags decoded."""
    row = dict(zip(SUMMARY_COLUMNS, values, strict=True))
    tags, path = decode_tags(row.pop("tags_text")), row.pop("path")
    return {**row, "tags": tags, "path": path}


def current_listing(database: Path, papers_dir: Path, **filters: Any) -> list[dict[str, Any]] | None:
    """``kb list``'s rows (``summary``) from the SQLite index ``database`` when it is current for
    ``papers_dir`` (``is_current``) at this kb's schema revision, read in one read-only transaction; None
    otherwise, or on any error reading it: the caller then indexes first. ``filters``: those of
    ``paper_filter``."""
    rule = paper_filter(**filters)  # a bad sort is the caller's error, not a reason to take the full path
    head = head_revision()
    if head is None or not database.is_file():
        return None
    try:
        connection = sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True)
    except sqlite3.Error:
        return None
    try:
        connection.execute("BEGIN")  # one snapshot for the check and the rows
        if connection.execute("SELECT version_num FROM alembic_version").fetchall() != [(head,)]:
            return None
        stored = {row[0]: StoredNote(*row[1:])
                  for row in connection.execute(f"SELECT {', '.join(STORED_COLUMNS)} FROM paper")}
        if not is_current(stored, papers_dir):
            return None
        where = f" WHERE {rule.where}" if rule.where else ""
        columns = ", ".join(f"paper.{column}" for column in SUMMARY_COLUMNS)
        query = f"SELECT {columns} FROM paper{where} ORDER BY {rule.order_by}"
        return [summary(row) for row in connection.execute(query, rule.params)]
    except (sqlite3.Error, ValueError, TypeError):  # ValueError, TypeError: a row kb did not write
        return None
    finally:
        connection.close()
