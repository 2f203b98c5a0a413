"""Incremental indexing of the notes folder into the database, and queries over the index.

:func:`index_notes` compares each file's (mtime_ns, size) with its stored row, then its content hash
when those differ; only changed files are parsed. Notes deleted from disk leave the index with their
tags, claims and search rows. Each note is handled alone (:func:`prepare_note`, the one check `kb validate`
shares): whatever goes wrong with one note, even an exception kb did not foresee, is one error on that note,
and every other note is still indexed. When two notes share a ``paper_id`` or an id (file name), one is
reported invalid: the one not yet indexed, else the later by path. The whole run is one transaction with
bulk inserts.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, bindparam, delete, insert, text, update
from sqlalchemy import select as sa_select
from sqlmodel import Session, col, select

from kb.hashing import binding_hash
from kb.index import listing
from kb.index.database import ClaimRow, Paper, Tag, writer_lock
from kb.index.listing import STORED_COLUMNS, SortKey, StoredNote, encode_tags, paper_filter
from kb.index.opening import init_db, search_backend_for
from kb.index.search import SearchDoc, SearchHit
from kb.notes.files import Note, NoteError, field_line, find_notes, read_note
from kb.notes.grounding import check_note
from kb.notes.sources import DEFAULT_MAX_SOURCE_BYTES, SourceStatus, SourceText, read_source, vault_of
from kb.settings import NoteLimits
from schemas import Claim


@dataclass
class IndexReport:
    """What one indexing run did. ``removed`` also lists notes that were indexed but are now invalid."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    errors: list[NoteError] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)


@dataclass(frozen=True)
class NoteRows:
    """What the index stores for one note: its paper row, tag rows, claim rows and searchable text."""

    paper: dict[str, Any]
    tags: list[dict[str, Any]]
    claims: list[dict[str, Any]]
    doc: SearchDoc


def prepare_note(path: Path, papers_dir: Path | None = None, *, max_bytes: int = 5_000_000,
                 max_source_bytes: int = DEFAULT_MAX_SOURCE_BYTES, now: dt.datetime | None = None,
                 limits: NoteLimits | None = None) -> tuple[Note, NoteRows]:
    """The one check of one note that `kb validate` and `kb index` share, so that what one accepts the other
    indexes: read and validate the file, read its ``source_file`` inside the vault, build the rows the index
    stores. Any failure, one kb did not foresee included, is a ``NoteError`` on this note (file, and line and
    field where there is one), never an exception that stops the other notes.
    """
    path = Path(path)
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        raise NoteError(
            path,
            "the file name is not valid UTF-8, so kb can neither store nor show it: rename the "
            "file (letters, digits and dashes are safe)",
        ) from None
    try:
        st = path.stat()
        note = read_note(path, max_bytes=max_bytes, limits=limits)
        source = read_source(note, vault_of(path, papers_dir), max_bytes=max_source_bytes)
        if source.status is SourceStatus.refused:
            raise source.error(note)
        rows = NoteRows(*_rows_for(note, st.st_mtime_ns, st.st_size, now or dt.datetime.now(dt.UTC), source))
        column = _unstorable_column(rows)
        if column is not None:
            raise NoteError(path, f"the index cannot store the note's {column} (text that is not valid "
                            "Unicode); fix that text in the note")
        return note, rows
    except NoteError:
        raise
    except Exception as exc:  # noqa: BLE001 - isolation: one note's failure must not stop the others
        raise note_failure(path, exc) from None


def note_failure(path: Path, exc: Exception) -> NoteError:
    """An exception met while handling one note, as that note's one-line error (the other notes go on)."""
    if isinstance(exc, NoteError):
        return exc
    if isinstance(exc, OSError):
        return NoteError(path, f"cannot read the note: {exc.strerror or exc}")
    reason = (str(exc).splitlines() or [""])[0]
    return NoteError(
        path,
        f"cannot handle this note ({type(exc).__name__}: {reason}); the other notes are not "
        "affected: fix the note, or report it as a kb bug if it looks valid",
    )


def _unstorable_column(rows: NoteRows) -> str | None:
    """The first column whose text the database cannot store (not encodable as UTF-8), if any."""
    tables = [("paper", rows.paper), *(("tag", r) for r in rows.tags), *(("claim", r) for r in rows.claims)]
    for table, row in tables:
        for column, value in row.items():
            if isinstance(value, str):
                try:
                    value.encode("utf-8")
                except UnicodeEncodeError:
                    return f"{table}.{column}"
    return None


class _CrossNoteRules:
    """The rules across notes, applied in sorted path order by `kb validate` and `kb index` alike: one note
    per id (its file name) and one note per ``paper_id``; the later file is refused, naming the earlier
    one."""

    def __init__(self) -> None:
        self.ids: dict[str, Path] = {}
        self.paper_ids: dict[str, Path] = {}

    def take_id(self, path: Path) -> NoteError | None:
        earlier = self.ids.setdefault(path.stem, path)
        if earlier == path:
            return None
        return NoteError(
            path,
            f"note id {path.stem!r} is already used by {earlier}, which keeps it; rename or "
            "remove one of the two files",
        )

    def take_paper_id(self, path: Path, paper_id: str, note: Note | None = None) -> NoteError | None:
        earlier = self.paper_ids.setdefault(paper_id, path)
        if earlier == path:
            return None
        return NoteError(
            path,
            f"paper_id {paper_id!r} is already used by {earlier}; expected one note per paper: "
            "change this note's paper_id or remove one of the notes",
            line=field_line(note, "paper_id") if note is not None else None,
            field="paper_id",
        )


def validate_notes(paths: Sequence[Path], papers_dir: Path | None = None, *, max_bytes: int = 5_000_000,
                   max_source_bytes: int = DEFAULT_MAX_SOURCE_BYTES, limits: NoteLimits | None = None,
                   ) -> tuple[list[Note], list[NoteError]]:
    """`kb validate`: notes (files, or folders searched like the notes folder) through :func:`prepare_note`
    and the rules across notes, exactly as `kb index` applies them; returns the valid notes and the errors."""
    files: list[Path] = []
    seen: set[str] = set()
    for given in paths:
        for path in find_notes(Path(given)) if Path(given).is_dir() else [Path(given)]:
            key = os.path.realpath(path)  # a file named twice (a folder and the file in it) is checked once
            if key not in seen:
                seen.add(key)
                files.append(path)
    rules = _CrossNoteRules()
    notes: list[Note] = []
    errors: list[NoteError] = []
    for path in files:
        try:
            if (error := rules.take_id(path)) is not None:
                raise error
            note, _ = prepare_note(path, papers_dir, max_bytes=max_bytes, max_source_bytes=max_source_bytes,
                                   limits=limits)
            if (error := rules.take_paper_id(path, note.meta.paper_id, note)) is not None:
                raise error
        except NoteError as exc:
            errors.append(exc)
            continue
        notes.append(note)
    return notes, errors


def _rows_for(
    note: Note, mtime_ns: int, size: int, now: dt.datetime, source_text: SourceText
) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]], SearchDoc]:
    meta = note.meta
    tags = list(dict.fromkeys(meta.tags))
    source = source_text.path  # inside the vault (a missing file too: the index notices when it appears)
    grounding = {result.claim_id: result.status.value for result in check_note(note, source_text)}
    paper = {
        "id": note.id,
        "path": str(note.path),
        "paper_id": meta.paper_id,
        "title": meta.title,
        "year": meta.year,
        "status": meta.status.value if meta.status is not None else None,
        "decision": meta.decision.value if meta.decision is not None else None,
        "quality_score": meta.quality_score,
        "journal_tier": meta.journal_tier,
        "tags_text": encode_tags(tags),
        "body": note.body,
        "meta_json": json.dumps(meta.model_dump(mode="json"), ensure_ascii=False),
        "content_hash": note.content_hash,
        "mtime_ns": mtime_ns,
        "size": size,
        "source_path": str(source) if source is not None else None,
        "source_mtime_ns": listing.mtime_ns(source),
        "indexed_at": now,
    }
    tag_rows = [{"paper_id": note.id, "tag": t} for t in tags]
    claim_rows = []
    claim_texts = []
    for claim in meta.claims:
        claim_rows.append(
            {
                "key": f"{note.id}#{claim.id}",
                "paper_id": note.id,
                "claim_id": claim.id,
                "statement": claim.statement,
                "kind": claim.kind.value,
                "analyzer": claim.analyzer.name if claim.analyzer is not None else None,
                "claim_json": json.dumps(claim.model_dump(mode="json"), ensure_ascii=False),
                "grounding": grounding.get(claim.id),
                "binding_hash": binding_hash(claim),
            }
        )
        claim_texts.append(claim.statement)
        if claim.source is not None:
            claim_texts.append(claim.source.quote)
    doc = SearchDoc(
        note.id, meta.title, " ".join(tags), note.body, "\n".join(claim_texts), source_text.text or ""
    )
    return paper, tag_rows, claim_rows, doc


def _delete_ids(conn: Connection, ids: Sequence[str]) -> None:
    if not ids:
        return
    params = [{"pid": i} for i in ids]
    conn.execute(delete(Tag).where(col(Tag.paper_id) == bindparam("pid")), params)
    conn.execute(delete(ClaimRow).where(col(ClaimRow.paper_id) == bindparam("pid")), params)
    conn.execute(delete(Paper).where(col(Paper.id) == bindparam("pid")), params)


def index_notes(
    engine: Engine,
    papers_dir: Path,
    *,
    progress: Callable[[int, int], None] | None = None,
    max_bytes: int = 5_000_000,
    max_source_bytes: int = DEFAULT_MAX_SOURCE_BYTES,
    limits: NoteLimits | None = None,
) -> IndexReport:
    """Bring the index up to date with ``papers_dir``; return what changed.

    One indexer at a time (``writer_lock``): a second one waits, then finds the index current. Readers
    (list, search) never wait: they read the last committed index.
    """
    init_db(engine)
    with writer_lock(engine):
        return _index_notes(engine, papers_dir, progress=progress, max_bytes=max_bytes,
                            max_source_bytes=max_source_bytes, limits=limits)


def _stored_notes(engine: Engine) -> dict[str, StoredNote]:
    """Every indexed note's row, by note id: what it was indexed from (path, stat, hash, source)."""
    with engine.connect() as conn:
        return {r[0]: StoredNote(*r[1:])
                for r in conn.execute(sa_select(*(col(getattr(Paper, name)) for name in STORED_COLUMNS)))}


class _NoteIndexer:
    """One indexing run over the notes folder: which notes are unchanged, touched (same content, new stat or
    path), parsed anew, invalid or gone, and the rows to write for them in one transaction at the end."""

    def __init__(self, stored: dict[str, StoredNote], papers_dir: Path, *, max_bytes: int,
                 max_source_bytes: int, limits: NoteLimits | None) -> None:
        self.stored, self.papers_dir, self.limits = stored, papers_dir, limits
        self.max_bytes, self.max_source_bytes = max_bytes, max_source_bytes
        self.now = dt.datetime.now(dt.UTC)
        self.report = IndexReport()
        self.rules = _CrossNoteRules()
        self.to_delete: list[str] = []  # ids whose rows go (changed, invalid)
        self.touch: list[dict[str, Any]] = []  # same content, new stat/path
        self.papers: list[dict[str, Any]] = []
        self.tags: list[dict[str, Any]] = []
        self.claims: list[dict[str, Any]] = []
        self.docs: list[SearchDoc] = []

    def add(self, path: Path) -> None:
        """Index one note; its error, and its stored rows gone, when it is invalid."""
        if (error := self.rules.take_id(path)) is not None:
            self.report.errors.append(error)
            return
        try:
            self.visit(path, path.stem)
        except Exception as exc:  # noqa: BLE001 - isolation: one note's failure must not stop the others
            self.report.errors.append(note_failure(path, exc))
            self.drop_stored(path.stem)

    def drop_stored(self, note_id: str) -> None:
        if note_id in self.stored:
            self.to_delete.append(note_id)
            self.report.removed.append(note_id)

    def unchanged(self, path: Path, old: StoredNote, st: os.stat_result) -> bool:
        """Whether the note is as indexed: the same stat and path, or the same content (then its new stat and
        path are kept). Raises when its paper_id is taken."""
        if old.unchanged_on_disk(path, st):
            if (error := self.rules.take_paper_id(path, old.paper_id)) is not None:
                raise error
            return True
        if st.st_size > self.max_bytes:
            return False
        try:
            raw = path.read_bytes()
        except OSError:
            return False
        if hashlib.sha256(raw).hexdigest() != old.content_hash:
            return False
        if (error := self.rules.take_paper_id(path, old.paper_id)) is not None:
            raise error
        self.touch.append(
            {"pid": path.stem, "path": str(path), "mtime_ns": st.st_mtime_ns, "size": st.st_size}
        )
        return True

    def visit(self, path: Path, note_id: str) -> None:
        """Index one note, or raise its error; the lists grow only once nothing can fail."""
        old = self.stored.get(note_id)
        st = path.stat()
        if old is not None and old.source_changed():
            old = StoredNote(old.path, old.paper_id, "", -1, -1, None, None)  # force a re-parse
        if old is not None and self.unchanged(path, old, st):
            self.report.unchanged.append(note_id)
            return
        note, rows = prepare_note(path, self.papers_dir, max_bytes=self.max_bytes,
                                  max_source_bytes=self.max_source_bytes, now=self.now, limits=self.limits)
        if (error := self.rules.take_paper_id(path, note.meta.paper_id, note)) is not None:
            raise error
        self.papers.append(rows.paper)
        self.tags.extend(rows.tags)
        self.claims.extend(rows.claims)
        self.docs.append(rows.doc)
        if old is None:
            self.report.added.append(note_id)
        else:
            self.to_delete.append(note_id)
            self.report.updated.append(note_id)

    def remove_missing(self) -> None:
        """Indexed notes no file holds any more leave the index."""
        seen_ids = set(self.rules.ids)
        for note_id in self.stored:
            if note_id not in seen_ids:
                self.to_delete.append(note_id)
                self.report.removed.append(note_id)

    def write(self, engine: Engine) -> None:
        """All the run's deletes, updates and inserts, search rows included, in one transaction."""
        if not (self.to_delete or self.touch or self.papers):
            return
        backend = search_backend_for(engine)
        with engine.begin() as conn:
            _delete_ids(conn, self.to_delete)
            backend.remove_many(conn, self.to_delete)
            if self.touch:
                conn.execute(
                    update(Paper)
                    .where(col(Paper.id) == bindparam("pid"))
                    .values(path=bindparam("path"), mtime_ns=bindparam("mtime_ns"), size=bindparam("size")),
                    self.touch,
                )
            if self.papers:
                conn.execute(insert(Paper), self.papers)
            if self.tags:
                conn.execute(insert(Tag), self.tags)
            if self.claims:
                conn.execute(insert(ClaimRow), self.claims)
            backend.index_many(conn, self.docs)


def _index_notes(engine: Engine, papers_dir: Path, *, progress: Callable[[int, int], None] | None,
                 max_bytes: int, max_source_bytes: int, limits: NoteLimits | None = None) -> IndexReport:
    stored = _stored_notes(engine)
    indexer = _NoteIndexer(stored, papers_dir, max_bytes=max_bytes, max_source_bytes=max_source_bytes,
                           limits=limits)
    paths = find_notes(Path(papers_dir)) if Path(papers_dir).is_dir() else []
    # Notes already indexed claim their id and paper_id first: a newcomer (``papers/0/<id>.md``, which sorts
    # before ``papers/<id>.md``, or any file copying a paper_id) is the one refused, whatever its name.
    paths.sort(key=lambda p: (p.stem not in stored or stored[p.stem].path != str(p), p))
    for done, path in enumerate(paths, start=1):
        if progress is not None:
            progress(done, len(paths))
        indexer.add(path)
    indexer.remove_missing()
    indexer.write(engine)
    return indexer.report



# --- queries -------------------------------------------------------------------------------------


def filter_papers(
    stmt: Any,
    *,
    tag: str | None = None,
    decision: str | None = None,
    status: str | None = None,
    min_quality: int | None = None,
    year: int | None = None,
    sort: SortKey = "id",
    descending: bool = False,
) -> Any:
    """Add the Library's filters and sort order (ties broken by id) to a select over ``Paper``: the SQL of
    ``kb.index.listing.paper_filter``, the one rule ``kb list`` also runs without SQLAlchemy."""
    rule = paper_filter(tag=tag, decision=decision, status=status, min_quality=min_quality, year=year,
                        sort=sort, descending=descending)
    if rule.where:
        stmt = stmt.where(text(rule.where).bindparams(**rule.params))
    return stmt.order_by(text(rule.order_by))


def list_papers(engine: Engine, *, limit: int | None = None, **filters: Any) -> list[Paper]:
    """Papers matching all filters of :func:`filter_papers`, sorted."""
    stmt = filter_papers(select(Paper), **filters)
    if limit is not None:
        stmt = stmt.limit(limit)
    with Session(engine) as session:
        return list(session.exec(stmt).all())


def get_paper(engine: Engine, note_id: str) -> Paper | None:
    """One paper by note id."""
    with Session(engine) as session:
        return session.get(Paper, note_id)


def paper_with_id(engine: Engine, paper_id: str) -> Paper | None:
    """The indexed note whose frontmatter ``paper_id`` is ``paper_id``, if any."""
    with Session(engine) as session:
        return session.exec(select(Paper).where(Paper.paper_id == paper_id)).first()


def get_claim(engine: Engine, claim_key: str) -> ClaimRow | None:
    """One indexed claim by key ('<note id>#<claim id>')."""
    with Session(engine) as session:
        return session.get(ClaimRow, claim_key)


def bound_claims(engine: Engine) -> list[ClaimRow]:
    """Every indexed claim bound to an analyzer."""
    with Session(engine) as session:
        return list(session.exec(select(ClaimRow).where(col(ClaimRow.analyzer).is_not(None))).all())


def claims_for(engine: Engine, note_id: str) -> list[ClaimRow]:
    """The claims of one paper, in key order."""
    with Session(engine) as session:
        stmt = select(ClaimRow).where(ClaimRow.paper_id == note_id).order_by(col(ClaimRow.key))
        return list(session.exec(stmt).all())


def search(engine: Engine, query: str, limit: int = 20, *, snippets: bool = True) -> list[SearchHit]:
    """Full-text search over titles, tags, bodies and claims; best first (``snippets=False``: ids and
    scores)."""
    return search_backend_for(engine).search(query, limit, snippets=snippets)


def claim_for_key(engine: Engine, claim_key: str) -> Claim | None:
    """The indexed claim behind '<note id>#<claim id>'."""
    with Session(engine) as session:
        row = session.get(ClaimRow, claim_key)
        return Claim.model_validate_json(row.claim_json) if row else None
