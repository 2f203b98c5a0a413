"""The one object the CLI, the app and the tests drive: a knowledge base on disk plus its index.

``KnowledgeBase`` ties the settings (notes folder, KB home, database URL) to the notes on disk
(``kb.notes.files``) and the index (``kb.index.indexing``). Front ends stay thin: they call these methods and
render what comes back.
"""

from __future__ import annotations

import atexit
import contextlib
import difflib
import json
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Collection, Iterator
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from pydantic import ValidationError
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DatabaseError

from analyzers import registry
from analyzers.files import atomic_write_bytes
from analyzers.overrides import OverrideError, model_error_line, typed_overrides
from kb.disk import DiskFull, full_path, is_disk_full
from kb.evidence import claim_states as evidence_mod
from kb.hashing import binding_hash
from kb.index import indexing as index_mod
from kb.index import links as links_mod
from kb.index import listing as listing_mod
from kb.index.checks import row_problem, schema_problem
from kb.index.database import ClaimRow, Paper, make_engine
from kb.index.generation import read_generation
from kb.index.indexing import claim_for_key
from kb.index.opening import init_db
from kb.index.search import fts_damage
from kb.notes import edits as note_edits
from kb.notes import field_names
from kb.notes import files as notes_mod
from kb.notes import locks as note_lock_mod
from kb.notes.bindings import binding_problems
from kb.notes.files import Note, NoteChanged, NoteError
from kb.notes.links import Link
from kb.notes.sources import SourceStatus, SourceText, read_source, vault_of
from kb.queue import retry
from kb.settings import Settings
from schemas import EXPORTED_MODELS, Claim, EvidenceRecord, RunRecord, Verdict
from schemas.note import PaperNote

# types only: the queue, executors, bundles, tensions and estimates load in the methods that
if TYPE_CHECKING:
    # use them, so that `kb list` does not pay for them at start-up (benchmarks/bench_startup.py)
    from analyzers.base import Analyzer
    from kb.evidence import estimates
    from kb.evidence import library as library_mod
    from kb.evidence import tensions as tensions_mod
    from kb.evidence.artifact_store import ArtifactStore
    from kb.queue import bundles, execution, executors
    from kb.queue import records as queue_records
    from kb.queue.executors import JobConfig


class IndexDamaged(Exception):
    """The index database cannot be read; it is a cache of the notes, so it can be rebuilt."""

    def __init__(self, url: str, error: Exception) -> None:
        self.url = url
        reason = str(getattr(error, "orig", error)).splitlines()[0]
        super().__init__(
            f"the index {url} cannot be read ({reason}): run `kb index --rebuild` to rebuild it from "
            "the notes and re-attach the evidence stored under the KB home (nothing is lost)"
        )


class IndexUnavailable(Exception):
    """The index cannot be reached just now (a lock held past the busy timeout, a server restarting or
    unreachable): nothing is damaged, so the answer is to try again, never to rebuild."""

    def __init__(self, url: str, error: BaseException) -> None:
        self.url = url
        reason = str(getattr(error, "orig", error)).strip().splitlines()[0]
        super().__init__(
            f"the index {url} is not answering just now ({reason}): another process holds it or the "
            "server is down; try again in a moment (nothing is damaged, do not rebuild it)"
        )


def _readable_copy(database: Path, wal: Path) -> Path:
    """A copy of a read-only home's index and its write-ahead log in a private temporary folder (removed when
    the process ends), so that SQLite applies the log when it reads: what the index holds, as its writer left
    it."""
    folder = Path(tempfile.mkdtemp(prefix="kb-read-only-index-"))
    atexit.register(shutil.rmtree, folder, True)
    copy = folder / database.name
    shutil.copyfile(database, copy)
    shutil.copyfile(wal, folder / wal.name)
    return copy


def _writable_in(papers_dir: Path, path: Path) -> Path:
    """``path`` if writing it writes inside the notes folder. A note that is a link to a file outside (a
    shared vault can carry such a link) is read like any note, but kb does not write through it: an edit would
    land outside the folder the person running kb chose."""
    target, root = Path(os.path.realpath(path)), Path(os.path.realpath(papers_dir))
    if not target.is_relative_to(root):
        raise NoteError(
            path,
            f"is a link to {target}, outside the notes folder {root}; kb reads it but does not "
            "write through it: replace the link with the file itself to edit it",
        )
    return path


def _writes_fail_for_room(folder: Path) -> bool:
    """Whether a small write in ``folder`` fails for lack of room (SQLite reports a full disk where it cannot
    create its WAL index as a mere 'disk I/O error')."""
    probe = folder / f".kb-space-probe-{os.getpid()}"
    try:
        with probe.open("wb") as handle:
            handle.write(b"\0" * 65536)
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as exc:
        return is_disk_full(exc)
    finally:
        with contextlib.suppress(OSError):
            probe.unlink()
    return False


def index_error(url: str, exc: BaseException) -> Exception:
    """What an error opening or reading the index means: a full disk (``DiskFull``), a transient lock or
    outage (``IndexUnavailable``), or damage (``IndexDamaged``, the only one that asks for a rebuild)."""
    database = Path(url.removeprefix("sqlite:///")) if url.startswith("sqlite:///") else None
    if is_disk_full(exc):
        return DiskFull(full_path(exc, database.parent if database else Path(".")))
    if database is not None and database.parent.is_dir() and _writes_fail_for_room(database.parent):
        return DiskFull(database.parent)
    if retry.is_transient(exc):
        return IndexUnavailable(url, exc)
    return IndexDamaged(url, exc if isinstance(exc, Exception) else Exception(str(exc)))


def _check_index(engine: Engine, database: Path) -> None:
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql("SELECT count(*) FROM paper")
    except DatabaseError as exc:
        raise index_error(str(database), exc) from None


class _Plan(NamedTuple):
    """One claim's runs as ``verify`` plans them: its estimate, its analyzer and each seed's parameters, both
    validated (what the estimates read) and dumped to JSON (what the queue stores and compares)."""

    estimate: estimates.RunEstimate
    key: str
    claim: Claim
    analyzer: Analyzer  # type: ignore[type-arg]
    params: list[Any]
    dumped: list[dict[str, Any]]


class KnowledgeBase:
    """A folder of notes and the database that indexes them."""

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()

    @property
    def papers_dir(self) -> Path:
        """Folder holding the notes."""
        return self.settings.papers

    @cached_property
    def read_only(self) -> bool:
        """Whether the KB home cannot be written (a read-only mount, another user's home): then the index is
        read as it is, never updated, and commands that only read still work."""
        home = self.settings.home
        return home.is_dir() and not os.access(home, os.W_OK) and self.settings.database_url is None

    @cached_property
    def engine(self) -> Engine:
        """Database engine, created (with its tables) on first use.

        A damaged index raises ``IndexDamaged`` saying how to rebuild it; the notes and the stored evidence
        are not touched.
        """
        url = self.settings.resolved_database_url
        if self.read_only:
            database = self.settings.home.resolve() / "index.sqlite"
            wal = database.with_name(database.name + "-wal")
            if wal.is_file() and wal.stat().st_size > 0:
                # Writes not yet checkpointed into the file live in its write-ahead log, which SQLite reads
                # only where it may write the log's index (-shm): read a private copy of both instead.
                engine = make_engine(f"sqlite:///file:{_readable_copy(database, wal)}?mode=ro&uri=true")
            else:
                engine = make_engine(f"sqlite:///file:{database}?mode=ro&immutable=1&uri=true")
            _check_index(engine, database)
            return engine
        try:
            engine = make_engine(url, busy_timeout=self.settings.db_busy_timeout)
        except OSError as exc:  # the KB home cannot be created (a full disk, a read-only parent)
            raise (index_error(url, exc) if is_disk_full(exc) else exc) from None
        try:
            init_db(engine)
        except DatabaseError as exc:
            engine.dispose()
            raise index_error(url, exc) from None
        return engine

    def index_health(self) -> str | None:
        """None when the SQLite index is sound and usable by this kb, else what is wrong with it.

        Sound: SQLite's integrity check passes, the schema revision is present and one this kb knows, every
        table and column kb reads is there and every row's JSON reads back (``kb.index.checks``), and the
        full-text tables pass FTS5's own check (which the first does not look into; it runs as a rolled-back
        write, so it needs a writable index). A full disk (``DiskFull``) or a lock (``IndexUnavailable``) is
        raised, never reported as damage.
        """
        url = self.settings.resolved_database_url
        database = Path(url.removeprefix("sqlite:///"))
        if not url.startswith("sqlite:///") or not database.exists():
            return None if url.startswith("sqlite:///") else "not a SQLite index"
        checks: list[tuple[str, Callable[[Any], str | None]]] = [
            ("?mode=ro&uri=true", lambda conn: schema_problem(conn) or row_problem(conn)), ("", fts_damage)]
        for mode, check in checks:
            probe = make_engine(f"sqlite:///{'file:' if mode else ''}{database}{mode}",
                                busy_timeout=self.settings.db_busy_timeout)
            try:
                with probe.connect() as conn:
                    problem = check(conn)
                    conn.rollback()
            except DatabaseError as exc:
                found = index_error(url, exc)
                if isinstance(found, IndexDamaged):
                    return str(getattr(exc, "orig", exc)).splitlines()[0]
                raise found from None
            finally:
                probe.dispose()
            if problem is not None:
                return problem
        return None

    # -- notes on disk -------------------------------------------------------------------------

    def note_files(self) -> dict[str, list[Path]]:
        """Every note file of the notes folder by id, from one scan: what ``note_path(..., files=...)`` looks
        ids up in when it is asked for many notes (an export), instead of scanning the folder once per
        note."""
        files: dict[str, list[Path]] = {}
        for path in notes_mod.find_notes(self.papers_dir):
            files.setdefault(path.stem, []).append(path)
        return files

    def note_path(
        self, note_id: str, *, for_edit: bool = False, files: dict[str, list[Path]] | None = None
    ) -> Path:
        """Path of the note with this id; the id must name a note inside the notes folder.

        Two files claiming one id (``papers/<id>.md`` and ``papers/0/<id>.md``: a shared vault can carry the
        second) leave the id with the note the index holds, never with whichever sorts first; ``for_edit``
        refuses both until the user renames or removes one, so kb never writes into the wrong file. ``files``:
        the folder as ``note_files`` found it (one scan for many ids); else the folder is scanned now.
        """
        if not note_id or "/" in note_id or "\\" in note_id or note_id.startswith("."):
            raise NoteError(note_id, "a note id is a file name without '.md' inside the notes folder, "
                            "not a path; run 'kb list' to see the ids")
        candidates = (files.get(note_id, []) if files is not None
                      else [p for p in notes_mod.find_notes(self.papers_dir) if p.stem == note_id])
        if not candidates:
            raise NoteError(self.papers_dir / f"{note_id}.md",
                            f"no note with id {note_id!r} in {self.papers_dir}; run 'kb list' to see the ids")
        if len(candidates) == 1:
            return _writable_in(self.papers_dir, candidates[0]) if for_edit else candidates[0]
        indexed = self._indexed_path(note_id)
        if for_edit or indexed not in candidates:
            others = ", ".join(str(p) for p in candidates if p != indexed)
            held = f"{indexed} (the indexed note) and {others}" if indexed in candidates else others
            raise NoteError(indexed or candidates[0], f"note id {note_id!r} is claimed by {held}; kb edits "
                            "neither until one of them is renamed or removed")
        return indexed  # type: ignore[return-value]  # checked to be among the candidates

    def _indexed_path(self, note_id: str) -> Path | None:
        """Where the index last found note ``note_id`` (None when it holds no such note)."""
        paper = index_mod.get_paper(self.engine, note_id)
        return Path(paper.path) if paper is not None else None

    def read(self, note_id: str) -> Note:
        """Load and validate one note by id."""
        return self._read_path(self.note_path(note_id))

    def _read_path(self, path: Path) -> Note:
        return notes_mod.read_note(path, max_bytes=self.settings.max_note_bytes,
                                   limits=self.settings.note_limits)

    def validate(self, paths: list[Path] | None = None) -> tuple[list[Note], list[NoteError]]:
        """Validate notes (default: the whole notes folder), their ``source_file`` included.

        A source file outside the vault, not a regular file, too large or unreadable makes the note invalid;
        a missing one is left to the caller to warn about (``read_source``). The check is the index's own
        (``kb.index.indexing.prepare_note``), so what validates is what ``index`` indexes.
        """
        return index_mod.validate_notes(paths or [self.papers_dir], self.papers_dir,
                                        max_bytes=self.settings.max_note_bytes,
                                        max_source_bytes=self.settings.max_source_bytes,
                                        limits=self.settings.note_limits)

    def read_source(self, note: Note) -> SourceText:
        """The note's ``source_file`` text, read only inside the vault (``kb.notes.sources``): the notes
        folder, or the note's own folder for a note outside it; at most ``max_source_bytes``."""
        return read_source(
            note, vault_of(note.path, self.papers_dir), max_bytes=self.settings.max_source_bytes
        )

    def new_note(self, meta: dict[str, Any], body: str | Callable[[str], str], *,
                 same_paper: Callable[[PaperNote], bool] | None = None) -> Note:
        """Create a note from frontmatter fields and a body; validated before anything is written.

        A ``paper_id`` another note uses is refused, unless ``same_paper`` says that note holds a different
        paper (same id, other title or DOI): then this one gets the first free '<paper_id>-2', '-3', ...
        (the returned note's ``paper_id`` says which). ``body`` may be made from the id the note gets.
        """
        def inside_the_vault(note: Note) -> None:
            if note.meta.source_file and (source := self.read_source(note)).status is SourceStatus.refused:
                raise source.error(note)  # the vault is the boundary: a note kb would refuse is not written

        with self._creating():  # the id is chosen under the creation lock: two adds cannot pick the same one
            if same_paper is not None and meta.get("paper_id"):
                meta = {**meta, "paper_id": self._distinct_paper_id(str(meta["paper_id"]), same_paper)}
            self._check_paper_id_free(meta.get("paper_id"))
            text = body(str(meta.get("paper_id"))) if callable(body) else body
            note = notes_mod.create_note(self.papers_dir, meta, text, max_bytes=self.settings.max_note_bytes,
                                         limits=self.settings.note_limits, check=inside_the_vault)
        self.index()
        return note

    def import_note(self, src: Path) -> Note:
        """Validate a note written elsewhere and copy it, byte for byte, into the notes folder.

        Its ``source_file`` comes along to the same relative path (never overwriting a different file).
        """
        from kb.notes import sources as source_files

        note = notes_mod.read_note(src, max_bytes=self.settings.max_note_bytes,
                                   limits=self.settings.note_limits)
        with self._creating():
            self._check_paper_id_free(note.meta.paper_id)
            copy = source_files.plan_source_copy(
                note, self.papers_dir, max_bytes=self.settings.max_source_bytes
            )
            imported = notes_mod.import_note(src, self.papers_dir)
        if copy is not None:
            source_files.copy_source(*copy)
        self.index()
        return imported

    def set_fields(self, note_id: str, changes: dict[str, Any], body: str | None = None,
                   new_claims: list[Claim] | None = None, *, expected_hash: str | None = None,
                   new_fields: bool = True, reindex: bool = True,
                   files: dict[str, list[Path]] | None = None) -> Note:
        """Change frontmatter fields of one note in place, touching only the bytes of the changed values.

        ``body``, when given, replaces the Markdown after the frontmatter (in the file's own line endings);
        ``new_claims`` are appended to the claims block with the existing claims' bytes kept. One validated,
        atomic write for all of it, under the note's lock, so concurrent edits never lose one another.
        ``expected_hash`` (an editor's copy) refuses the edit if the file changed since. A ``paper_id``
        another note uses is refused. ``new_fields=False`` refuses a field the note does not have and the
        schema does not know when it is one typo from a known one (``quality_scroe``). ``reindex=False``
        leaves the index to the caller (one pass after many edits, not one per edit); ``files``
        (``note_files``) finds the note without a folder scan per edit.
        """
        path = self.note_path(note_id, for_edit=True, files=files)
        with note_lock_mod.note_lock(path, timeout=self.settings.note_lock_timeout):
            # Read under the lock: a concurrent edit that landed first is the base this one applies to. The
            # path found before the lock is read (never looked up again): a note moved meanwhile is refused.
            note = base = self._read_path(path)
            if expected_hash is not None and note.content_hash != expected_hash:
                raise NoteChanged(
                    note.path,
                    "changed on disk since you opened it (another edit landed first): "
                    "reload the note and apply your change again; nothing was written",
                )
            if "paper_id" in changes and changes["paper_id"] != note.meta.paper_id:
                self._check_paper_id_free(changes["paper_id"])
            if not new_fields:
                _check_field_names(note, changes)
            if changes:
                note = note_edits.set_fields(note, changes)
            if new_claims:
                note = note_edits.append_claims(note, new_claims)
            if body is not None and body != note.body:
                note = _with_body(note, body)
            if "source_file" in changes and (source := self.read_source(note)).status is SourceStatus.refused:
                raise source.error(note)  # the vault is the boundary: a note kb would refuse is not written
            notes_mod.save_note(note, base=base.raw, inode=base.inode)
        if reindex:
            self.index()
        return note

    def note_lock(self, note_id: str) -> contextlib.AbstractContextManager[Path]:
        """The note's own lock (``kb.notes.locks``): one writer of the note at a time, whatever its KB
        home."""
        return note_lock_mod.note_lock(self.note_path(note_id, for_edit=True),
                                       timeout=self.settings.note_lock_timeout)

    def add_claims(self, note_id: str, claims: list[Claim]) -> list[Claim]:
        """Append claims to a note's ``claims:`` block (ids made unique in the note), write atomically,
        re-index.

        Only the claims block changes; existing claims keep their bytes; under the note's lock, like every
        edit. Returns the claims as written.
        """
        path = self.note_path(note_id, for_edit=True)
        with note_lock_mod.note_lock(path, timeout=self.settings.note_lock_timeout):
            # under the lock: claims or fields another writer just added are kept
            note = self._read_path(path)
            written = note_edits.unique_ids(claims, [c.id for c in note.meta.claims])
            notes_mod.save_note(note_edits.append_claims(note, written), base=note.raw, inode=note.inode)
        self.index()
        return written

    @contextlib.contextmanager
    def _creating(self) -> Iterator[None]:
        """Hold the notes folder's creation lock with the index brought up to date under it, so the
        ``paper_id`` check sees notes another KB home has just created (its index is not this one's)."""
        with note_lock_mod.creation_lock(self.papers_dir, timeout=self.settings.note_lock_timeout):
            self.index()
            yield

    def _distinct_paper_id(self, paper_id: str, same_paper: Callable[[PaperNote], bool]) -> str:
        """``paper_id``, or the first '<paper_id>-N' not held by a different paper (see ``new_note``)."""
        candidate = paper_id
        for n in range(2, 1000):
            existing = index_mod.paper_with_id(self.engine, candidate)
            if existing is None or same_paper(self._read_path(Path(existing.path)).meta):
                return candidate
            candidate = f"{paper_id}-{n}"
        return candidate  # a thousand different papers on one id: the check that follows refuses it

    def _check_paper_id_free(self, paper_id: object) -> None:
        if paper_id is None:
            return
        existing = index_mod.paper_with_id(self.engine, str(paper_id))
        if existing is not None:
            raise NoteError(
                existing.path,
                f"paper_id {paper_id!r} is already used by note {existing.id!r}; pick another id "
                "or edit that note instead",
                field="paper_id",
            )

    # -- index ---------------------------------------------------------------------------------

    def index(self, progress: Callable[[int, int], None] | None = None) -> index_mod.IndexReport:
        """Bring the index up to date with the notes folder (only changed files are re-parsed).

        Claims of changed notes whose expectation changed get their current verdict re-judged.
        """
        if self.read_only:
            return index_mod.IndexReport(unchanged=[p.id for p in self.list_papers()])
        report = index_mod.index_notes(self.engine, self.papers_dir, progress=progress,
                                       max_bytes=self.settings.max_note_bytes,
                                       max_source_bytes=self.settings.max_source_bytes,
                                       limits=self.settings.note_limits)
        for note_id in report.updated:
            for claim in self.claims(note_id):
                evidence_mod.rejudge(self.engine, claim.key)
        return report

    def rebuild_index(self, progress: Callable[[int, int], None] | None = None,
                      ) -> tuple[index_mod.IndexReport, queue_records.RestoreReport]:
        """Re-create the index from the notes and re-attach every run's evidence kept in the artifact store.

        A SQLite index that passes its integrity check (``index_health``) is kept and brought up to date; a
        damaged one is moved aside (``index.sqlite.damaged-<time>``), never deleted. A server database is
        filled only when it is empty (a new one the operator created). Runs come back with the final status
        their store record keeps, never queued, each record checked as data and its verdict judged again
        (``kb.queue.records``). Returns the indexing report and what became of the store's records.
        """
        from kb.queue import records as queue_records
        url = self.settings.resolved_database_url
        if not url.startswith("sqlite:///"):
            held = queue_records.database_contents(self.engine)
            if held:
                raise NoteError(
                    url,
                    f"--rebuild fills an empty server database, and this one holds {held}: drop "
                    "and create the database (or point --db at an empty one), then run "
                    "`kb index --rebuild` again",
                )
            report = self.index(progress=progress)
            return report, queue_records.reattach_evidence(self.engine, self.store)
        database = Path(url.removeprefix("sqlite:///"))
        if self.index_health() is None:  # a healthy index is kept (a full disk or a lock raised above)
            report = self.index(progress=progress)
            return report, queue_records.reattach_evidence(self.engine, self.store)
        self.__dict__.pop("engine", None)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        for suffix in ("", "-wal", "-shm"):
            old = database.with_name(database.name + suffix)
            if old.exists():
                old.rename(old.with_name(f"{database.name}.damaged-{stamp}{suffix}"))
        report = self.index(progress=progress)
        return report, queue_records.reattach_evidence(self.engine, self.store)

    def list_papers(self, **filters: Any) -> list[Paper]:
        """Indexed papers matching the filters of ``kb.index.indexing.list_papers``."""
        return index_mod.list_papers(self.engine, **filters)

    def library(self, *, query: str | None = None, **filters: Any) -> list[library_mod.LibraryRow]:
        """Library rows (claim states, grounding counts) matching ``kb.evidence.library.library_rows``
        filters.

        A non-empty ``query`` keeps the full-text search hits, best first.
        """
        from kb.evidence import library as library_mod

        hits = (
            index_mod.search(self.engine, query, limit=100_000, snippets=False)
            if query and query.strip()
            else None
        )
        ids = None if hits is None else [hit.paper_id for hit in hits]
        return library_mod.library_rows(self.engine, ids=ids, **filters)

    def get(self, note_id: str) -> Paper | None:
        """One indexed paper by note id."""
        return index_mod.get_paper(self.engine, note_id)

    def claims(self, note_id: str) -> list[ClaimRow]:
        """Indexed claims of one note."""
        return index_mod.claims_for(self.engine, note_id)

    def backlinks(self, note_id: str) -> list[links_mod.Backlink]:
        """The notes whose bodies link to this note or one of its claims (``[[note-id]]``,
        ``[[note-id#claim]]``)."""
        return links_mod.backlinks(self.engine, note_id)

    def link_targets(self, links: list[Link]) -> dict[str, str | None]:
        """Each link's target -> the note's title or the claim's statement in the index; None when unknown."""
        return links_mod.link_targets(self.engine, links)

    def claim(self, claim_key: str) -> tuple[Claim, str | None] | None:
        """The indexed claim '<note id>#<claim id>' and its grounding status, or None."""
        row = index_mod.get_claim(self.engine, claim_key)
        return (Claim.model_validate_json(row.claim_json), row.grounding) if row is not None else None

    def search(self, query: str, limit: int = 20) -> list[index_mod.SearchHit]:
        """Full-text search over titles, tags, bodies and claim statements."""
        return index_mod.search(self.engine, query, limit=limit)

    # -- verification -------------------------------------------------------------------------

    @staticmethod
    def analyzers() -> dict[str, type[Analyzer]]:  # type: ignore[type-arg]
        """Every registered analyzer, by name."""
        return registry.load_all()

    def claim_keys(self, targets: list[str] | None = None, *, stale_only: bool = False) -> list[str]:
        """Claim keys ('note#claim') named by targets: claim keys, note ids, or every bound claim."""
        self.index()
        rows = index_mod.bound_claims(self.engine)
        keys = [r.key for r in rows if not targets or r.key in targets or r.paper_id in targets]
        if targets:
            known = {r.key for r in rows} | {r.paper_id for r in rows}
            unknown = [t for t in targets if t not in known]
            if unknown:
                raise self._not_bound(unknown[0])
        if stale_only:
            keys = [k for k in keys if self.staleness(k) is not None]
        return sorted(keys)

    def _not_bound(self, target: str) -> NoteError:
        """Why ``target`` names nothing ``verify`` can run: a claim (or a note's claims) without an analyzer
        binding, told how to bind one; else no such claim or note."""
        bind = (
            "bind it by adding under the claim in the note `analyzer: {name: ANALYZER, params: {...}}` and "
            "`expect: {metric: METRIC, op: '>', value: ...}` (`kb analyzers` lists them and their metrics; "
            "`kb draft-claims NOTE` proposes bindings; the app's claim editor sets them)"
        )
        if "#" in target and self.claim(target) is not None:
            return NoteError(
                target, f"this claim has no analyzer binding, so nothing can re-verify it: {bind}"
            )
        if "#" not in target and self.claims(target):
            return NoteError(target, f"none of this note's claims has an analyzer binding: {bind}")
        return NoteError(
            target,
            "no claim bound to an analyzer has this key ('<note id>#<claim id>'), and no note "
            "with such claims has this id; run 'kb show NOTE' to see its claims",
        )

    def verify(self, targets: list[str] | None = None, *, stale_only: bool = False, device: str = "cpu",
               executor: str = "local", operator_params: dict[str, Any] | None = None,
               presets: dict[str, str] | None = None,
               priority: int | None = None) -> tuple[list[RunRecord], list[tuple[str, str]]]:
        """Queue runs for each targeted claim (one per seed when the binding lists seeds), quick ones first.

        ``operator_params`` are parameters of the person running kb (``kb verify --set``, as typed or already
        typed): they may set what a note may not (remote code, folders), and apply to every queued run whose
        analyzer takes them; the run's parameters record them. Each one is checked before anything is queued:
        a key no targeted claim's analyzer takes, or a value its field cannot hold, raises ``OverrideError``
        (one line). Runs are queued in the order of their estimated duration (``kb.evidence.estimates``), so
        the first verdicts come early. ``presets`` runs a claim (by key) at another scale preset than its
        binding's (``verify_tension``: the preset that settles it). Returns the queued runs, in that order,
        and the claims skipped, with why. ``priority``: the queue's (``kb.queue.store``); default interactive
        when claims are named (a person waits on them), bulk for every claim (``--all``, the demo). A claim
        whose same runs are queued or running already joins them (``queue_store.in_flight``, listed first and
        in ``joined_runs``; a queued one takes this priority when it is more urgent) instead of queueing
        the same work twice.
        """
        from kb.evidence import estimates
        from kb.queue import store as queue_store
        if priority is None:
            priority = queue_store.INTERACTIVE if targets else queue_store.BULK
        granted = operator_params or {}
        keys = self.claim_keys(targets)
        bindings = [(key, claim) for key in keys
                    if (claim := claim_for_key(self.engine, key)) is not None and claim.analyzer]
        typed = self._operator_params(granted, {c.analyzer.name for _, c in bindings if c.analyzer})
        if stale_only:
            bindings = [(key, claim) for key, claim in bindings if self.staleness(key) is not None]
        planned: list[_Plan] = []
        skipped: list[tuple[str, str]] = []
        joined: list[RunRecord] = []
        for key, claim in bindings:
            binding = claim.analyzer
            assert binding is not None
            scale = (presets or {}).get(key, binding.scale)
            found = self._run_params(key, claim, scale, device, typed.get(binding.name, {}), granted)
            if isinstance(found, str):
                skipped.append((key, found))
                continue
            analyzer, params = found
            estimate = estimates.estimate(
                self.engine, analyzer, params[0], scale, self.settings.resolved_cache_dir
            )
            dumped = [p.model_dump(mode="json") for p in params]
            if (same := queue_store.in_flight(self.engine, key, dumped, device=device, executor=executor)):
                joined += same  # the same work is queued or running: wait on it, never do it twice
                queue_store.hasten(self.engine, [r.id for r in same], priority)
                self.joined_runs.update(r.id for r in same)
                self.run_estimates.update((r.id, estimate) for r in same)
                continue
            planned.append(_Plan(estimate, key, claim, analyzer, params, dumped))
        # Quick first (by their own time: the first run needing a first-use stage pays it, the queue keeps
        # this order by the runs' own times, and a worker stores each run's estimate at its start, first-use
        # stages in it); of equal estimates, the run building the most cached stages first, so the runs after
        # it that reuse them are marked so (``estimates.sharing``) and sort after every run that has an
        # estimate.
        planned.sort(key=lambda plan: (plan.estimate.sort_key,
                                       -len(plan.analyzer.cached_stages(plan.params[0]))))
        marked = estimates.sharing([(plan.analyzer, plan.params[0], plan.estimate) for plan in planned])
        planned = [plan._replace(estimate=estimate) for estimate, plan in zip(marked, planned, strict=True)]
        planned.sort(key=lambda plan: plan.estimate.sort_key)  # stable: equal estimates keep claim order
        return [*joined, *self._enqueue(planned, device, executor, priority)], skipped

    def _run_params(self, key: str, claim: Claim, scale: str | None, device: str, mine: dict[str, Any],
                    granted: dict[str, Any]) -> tuple[Analyzer, list[Any]] | str:  # type: ignore[type-arg]
        """The analyzer of ``claim``'s binding and the validated parameters of each of its runs (one per seed)
        at ``scale`` on ``device`` with the operator's ``mine``; or why the claim is skipped. An operator's
        value that breaks a rule together with the note's raises ``OverrideError``."""
        binding = claim.analyzer
        assert binding is not None
        # Notes like this are invalid at index time, but an older index, or a setting changed since, may
        # still hold one: the binding is checked again by the one rule before anything is queued.
        if found := binding_problems(claim, limits=self.settings.note_limits):
            field, why = found[0]
            return f"{field}: {why}"
        seeds: list[int | None] = list(binding.seeds) if binding.seeds else [None]
        overrides = [{**binding.params, **mine, "device": device, **({} if s is None else {"seed": s})}
                     for s in seeds]
        try:
            analyzer = registry.get(binding.name)
            return analyzer, [analyzer.params_for(o, scale=scale) for o in overrides]
        except ValidationError as exc:
            where = str(exc.errors()[0]["loc"][0]) if exc.errors()[0]["loc"] else ""
            # the operator's value, fine alone, breaks a rule with the note's: say so
            if where in granted:
                raise OverrideError(f"--set {where}: {key}: {model_error_line(exc, overrides[0])}") from None
            return model_error_line(exc, overrides[0])
        except (KeyError, ValueError) as exc:
            return str(exc).strip('"')

    def _enqueue(self, planned: list[_Plan], device: str, executor: str, priority: int) -> list[RunRecord]:
        """Queue each planned claim's runs in the plan's order (a claim's seeds as one group), each with its
        estimate."""
        from kb.queue import store as queue_store

        queued = []
        for plan in planned:
            group = uuid.uuid4().hex if len(plan.dumped) > 1 else None
            for dumped in plan.dumped:
                run = queue_store.enqueue(
                    self.engine, plan.analyzer.name, dumped, claim_key=plan.key,
                    device=device, executor=executor, group_id=group, binding=binding_hash(plan.claim),
                    priority=priority, expected_seconds=plan.estimate.own_seconds,
                )
                queued.append(queue_store.to_record(run))
                self.run_estimates[run.id] = plan.estimate
        return queued

    def tensions(self) -> tensions_mod.Tensions:
        """Claims of different notes that cannot both hold, each with its state (``kb.evidence.tensions``'
        rules), within the setting ``max_tension_pairs`` (the result's ``message()`` says when it was
        reached)."""
        from kb.evidence import tensions as tensions_mod
        return tensions_mod.find(self.engine, max_pairs=self.settings.max_tension_pairs)

    def verify_tension(
        self, tension_id: str, **options: Any
    ) -> tuple[list[RunRecord], list[tuple[str, str]]]:
        """Queue the runs that decide a tension (``kb.evidence.tensions.settle_plan``: the shared binding at
        the preset both claims name, or the one the bolder claim needs); ``options`` as ``verify`` takes
        them."""
        from kb.evidence import tensions as tensions_mod
        self.index()
        tension = tensions_mod.get(self.engine, tension_id)
        if tension is None:
            raise NoteError(
                tension_id,
                "no tension has this id among the indexed claims; run `kb tensions` to see the ids",
            )
        plan = tensions_mod.settle_plan(tension)
        if plan.claim_key is None:
            raise NoteError(tension_id, f"kb cannot settle this tension: {plan.why_not}")
        presets = {plan.claim_key: plan.preset} if plan.preset else None
        return self.verify([plan.claim_key], presets=presets, **options)

    @cached_property
    def run_estimates(self) -> dict[str, estimates.RunEstimate]:
        """The estimate each run this object queued was ordered by, by run id (what the demo prints)."""
        return {}

    @cached_property
    def joined_runs(self) -> set[str]:
        """The runs ``verify`` returned that were queued or running already (``queue_store.in_flight``)."""
        return set()

    def queued_message(self, queued: list[RunRecord], what: str = "") -> str:
        """What ``verify``'s caller says it did: 'queued N run(s) [for WHAT]', and how many of ``queued``
        joined the same work already in flight rather than queueing it twice (the CLI and the app)."""
        joined = sum(record.id in self.joined_runs for record in queued)
        said = f"queued {len(queued) - joined} run(s)" + (f" for {what}" if what else "")
        if joined:
            said += f"; joined {joined} already queued or running (the same work, not queued twice)"
        return said

    @staticmethod
    def _operator_params(granted: dict[str, Any], analyzer_names: set[str]) -> dict[str, dict[str, Any]]:
        """``--set`` values typed for each analyzer that takes them; ``OverrideError`` for one none takes."""
        found = {name: registry.get(name) for name in analyzer_names if name in registry.load_all()}
        typed: dict[str, dict[str, Any]] = {}
        for key in granted:
            takers = [a for a in found.values() if key in a.Params.model_fields]
            if not takers:
                allowed = sorted({f for a in found.values() for f in a.Params.model_fields})
                whose = ", ".join(sorted(found)) or "no analyzer (no claim bound to one is named)"
                near = difflib.get_close_matches(key, allowed, n=1)
                raise OverrideError(f"--set {key}: no analyzer of the claims named takes {key!r} ({whose}); "
                                    + (f"did you mean {near[0]}? " if near else "")
                                    + f"allowed: {', '.join(allowed) or 'none'}")
            for analyzer in takers:
                typed.setdefault(analyzer.name, {}).update(
                    typed_overrides({key: granted[key]}, analyzer.Params, analyzer.name))
        return typed

    @cached_property
    def job_config(self) -> JobConfig:
        """What every executor, worker and analyzer command gets from these settings (built once)."""
        from kb.queue.executors import JobConfig
        return JobConfig.from_settings(self.settings)

    def executor(self, name: str) -> executors.Executor:
        """The executor registered as ``name`` under this KB's config (``KeyError`` naming the known ones)."""
        from kb.queue import executors
        return executors.get(name)(self.job_config)

    def work_on_ray(self, run_ids: list[str], **init_kwargs: Any) -> dict[str, str]:
        """Execute these queued runs as Ray tasks (``settings.ray_address``, else a local Ray instance)."""
        from kb.queue.executors.ray import RayExecutor
        ray = self.executor("ray")
        assert isinstance(ray, RayExecutor)
        return ray.run(self.engine, run_ids, **init_kwargs)

    @cached_property
    def store(self) -> ArtifactStore:
        """Where evidence files are written and read (``settings.artifact_store``; default the KB home)."""
        return self.job_config.store()

    def submit(self, executor: str, run_ids: list[str]) -> dict[str, str]:
        """Hand queued runs to an executor without waiting; returns the job id per run where it has one."""
        return self.executor(executor).submit(self.engine, run_ids)

    def reconcile(self, names: Collection[str | None] | None = None) -> dict[str, str]:
        """Let each executor (or those named) notice runs whose job vanished: resubmitted or failed."""
        from kb.queue import executors
        outcome: dict[str, str] = {}
        for name, cls in executors.load_all().items():
            if names is None or name in names:
                outcome.update(cls(self.job_config).reconcile(self.engine))
        return outcome

    def work_on_slurm(self, run_ids: list[str], poll: float = 3.0) -> dict[str, str]:
        """Submit these runs as Slurm jobs and wait for them to end, resubmitting runs whose job vanished."""
        from kb.queue.executors.slurm import SlurmExecutor
        slurm_executor = self.executor("slurm")
        assert isinstance(slurm_executor, SlurmExecutor)
        return slurm_executor.run(self.engine, run_ids, poll=poll)

    def work(self, *, once: bool = True, idle_timeout: float | None = None,
             device: str | None = None, stop: execution.Stop | None = None) -> dict[str, int]:
        """Run queued runs in this process until the queue is empty (or forever, as a worker) or ``stop``."""
        from kb.queue import execution, executors
        return execution.work(self.engine, self.job_config, watched=executors.reconciling(), once=once,
                              idle_timeout=idle_timeout, store=self.store, device=device, stop=stop)

    def generation(self) -> int | None:
        """The index's generation (``kb.index.generation``): it changes with every write to the notes' rows
        or to the evidence, by any process; what a surface keys its cached results on. None: an older index
        opened read-only, which has none."""
        return read_generation(self.engine)

    def runs(self, status: str | None = None, claim_key: str | None = None, limit: int = 100,
             ids: list[str] | None = None) -> list[RunRecord]:
        """Runs, newest first (optionally only those with the given ids)."""
        from kb.queue import store as queue_store
        return queue_store.list_runs(self.engine, status=status, claim_key=claim_key, limit=limit, ids=ids)

    def waiting(self) -> dict[str, str]:
        """What waits and why, by run id: a queued run's place and expected start; a running one whose worker
        stopped (``kb.queue.store.waiting_words``)."""
        from kb.queue import executors
        from kb.queue import store as queue_store
        return queue_store.waiting_words(self.engine, watched=executors.reconciling())

    def worker_alive(self) -> bool:
        """Whether a worker is seen alive: this home's background worker, or one holding a run by a live lease
        (an idle worker elsewhere on a shared index leaves no trace until it takes a run)."""
        from kb.queue import daemon
        from kb.queue import store as queue_store

        return daemon.find_worker(self.settings.home) is not None or queue_store.live_holders(self.engine) > 0

    def recover(self) -> list[str]:
        """Re-queue runs whose worker stopped (at once for a dead process on this host); returns their ids."""
        from kb.queue import executors
        from kb.queue import store as queue_store
        return queue_store.recover_stale(self.engine, watched=executors.reconciling())

    def cancel(self, run_id: str) -> bool:
        """Cancel a queued or running run (and the Slurm job executing it, if any)."""
        from kb.queue import execution, executors
        from kb.queue import store as queue_store
        record = queue_store.get_run(self.engine, run_id)
        cancelled = execution.cancel(self.engine, self.store, run_id)  # a queued run's outcome is recorded
        if cancelled and record is not None and record.job_id and record.executor in executors.load_all():
            self.executor(record.executor).cancel_job(record.job_id)
        return cancelled

    def export_evidence(self, out: Path, run_ids: list[str] | None = None, *, claim_key: str | None = None,
                        with_checkpoints: bool = False) -> bundles.ExportReport:
        """Write the evidence of these runs (or of a claim's runs, or, with neither, of every run with
        metrics) as a bundle at ``out`` (``kb.queue.bundles``)."""
        from kb.queue import bundles
        chosen = run_ids or bundles.exportable_runs(self.engine, claim_key)
        if not chosen and claim_key is not None:
            raise bundles.BundleRefused(f"claim {claim_key!r} has no evidence with metrics to export")
        return bundles.export_bundle(self.engine, self.store, chosen, out, with_checkpoints=with_checkpoints)

    def import_evidence(self, bundle: Path) -> bundles.ImportReport:
        """Add a bundle's runs here, every verdict judged by this kb's rule; ``BundleRefused`` (one line,
        nothing imported) for a bundle that fails a check (``kb.queue.bundles``)."""
        self.index()  # the claims a bundle names are checked against the notes as they are now
        return self._import_indexed(bundle)

    def _import_indexed(self, bundle: Path) -> bundles.ImportReport:
        """``import_evidence`` on an index already brought up to date."""
        from kb.queue import bundles
        return bundles.import_bundle(self.engine, self.store, bundle, limits=self.settings.bundles,
                                     scratch=self.settings.home / "tmp")

    def import_shipped_evidence(self) -> list[tuple[Path, bundles.ImportReport | str]]:
        """Add the bundles the notes folder ships in ``evidence/`` (``kb.queue.bundles.shipped_bundles``),
        each verdict judged by this kb's rule: each bundle with what it added, or the line saying why it was
        refused (nothing of it imported). Importing one again adds nothing."""
        from kb.queue import bundles
        done: list[tuple[Path, bundles.ImportReport | str]] = []
        shipped = bundles.shipped_bundles(self.settings.papers)
        if shipped:
            self.index()  # once, not once per bundle
        for path in shipped:
            if path.is_symlink():  # a link could lead anywhere: kb reads only what lies in the notes folder
                done.append((path, "a link: put the bundle itself in the notes folder's evidence/"))
                continue
            try:
                done.append((path, self._import_indexed(path)))
            except bundles.BundleRefused as exc:
                done.append((path, str(exc)))
        return done

    def get_run(self, run_id: str) -> RunRecord | None:
        """One run by id."""
        from kb.queue import store as queue_store
        return queue_store.get_run(self.engine, run_id)

    def retry(self, run_id: str, *, device: str | None = None, executor: str | None = None) -> RunRecord:
        """Queue a new run like ``run_id`` (same analyzer, parameters, claim; its device and executor unless
        given); it must have ended."""
        from kb.queue import store as queue_store
        return queue_store.to_record(queue_store.retry(self.engine, run_id, device=device, executor=executor))

    def analyzer_evidence(
        self, analyzer: str, limit: int = 200
    ) -> list[tuple[EvidenceRecord, RunRecord | None]]:
        """Evidence an analyzer produced (any claim, or none), newest first, each with the run behind it."""
        from kb.queue import store as queue_store
        return [(evidence_mod.evidence_record(row, (row.stale_reason or "superseded") if row.stale else None),
                 queue_store.to_record(run) if run is not None else None)
                for row, run in evidence_mod.evidence_of_analyzer(self.engine, analyzer, limit)]

    def evidence(self, claim_key: str) -> list[EvidenceRecord]:
        """Evidence of a claim, newest first, with staleness worked out against the current code and note."""
        return evidence_mod.claim_evidence(self.engine, claim_key)

    def staleness(self, claim_key: str) -> str | None:
        """Why a claim needs re-verifying (no evidence, stale evidence, changed binding), or None."""
        return evidence_mod.staleness(self.engine, claim_key)

    def run_verdicts(self, run_ids: list[str]) -> dict[str, Verdict | None]:
        """The verdict each run's evidence carries (runs without evidence are absent)."""
        return evidence_mod.verdicts_of_runs(self.engine, run_ids)

    def run_metrics(self, run_ids: list[str]) -> dict[str, dict[str, Any]]:
        """The metrics each run's evidence holds (runs without evidence are absent)."""
        return evidence_mod.metrics_of_runs(self.engine, run_ids)

    def claim_states(self, note_id: str | None = None) -> dict[str, evidence_mod.ClaimStatus]:
        """The state of every indexed claim (or of one note's claims) by claim key:
        ``kb.evidence.claim_states``'s rule."""
        return evidence_mod.claim_states(self.engine, note_id)

    # -- schemas -------------------------------------------------------------------------------

    @staticmethod
    def export_schemas(out_dir: Path) -> list[Path]:
        """Write the JSON Schema of every exported model into ``out_dir``."""
        out_dir.mkdir(parents=True, exist_ok=True)
        written = []
        for stem, model in EXPORTED_MODELS.items():
            path = out_dir / f"{stem}.schema.json"
            atomic_write_bytes(
                path, (json.dumps(model.model_json_schema(), indent=2, ensure_ascii=False) + "\n").encode()
            )
            written.append(path)
        return written


def _check_field_names(note: Note, changes: dict[str, Any]) -> None:
    """Refuse a field new to the note and unknown to the schema, at any depth, that is a typo of a known
    one."""
    data = note_edits.frontmatter_data(note)
    for key in changes:
        if (miss := field_names.near_miss(data, key)) is not None:
            raise NoteError(note.path, miss.text(), field=miss.key)


def _with_body(note: Note, body: str) -> Note:
    """The note with its Markdown body replaced; the frontmatter bytes are kept exactly."""
    old_tail = note.body.encode("utf-8")
    head = note.raw[: len(note.raw) - len(old_tail)]
    newline = "\r\n" if head.split(b"\n", 1)[0].endswith(b"\r") else "\n"
    text = body.replace("\r\n", "\n")
    if newline != "\n":
        text = text.replace("\n", newline)
    return notes_mod.parse_note(head + text.encode("utf-8"), note.path)


def paper_summary(paper: Paper) -> dict[str, Any]:
    """A JSON-ready summary of an indexed paper, as listing commands print it (``kb.index.listing.summary``,
    which ``kb list`` on a current index builds from the same columns without the ORM)."""
    return listing_mod.summary([getattr(paper, column) for column in listing_mod.SUMMARY_COLUMNS])
