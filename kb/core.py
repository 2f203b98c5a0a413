"""The one object the CLI, the app and the tests drive: a knowledge base on disk plus its index.

``KnowledgeBase`` ties the settings (notes folder, KB home, database URL) to the notes on disk
(``kb.notes``) and the index (``kb.index``). Front ends stay thin: they call these methods and render
what comes back.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import time
import uuid
from collections.abc import Callable, Iterator
from functools import cached_property
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine
from sqlalchemy.exc import DatabaseError

from analyzers import registry
from analyzers.base import Analyzer
from analyzers.files import atomic_write_bytes
from kb import evidence as evidence_mod
from kb import index as index_mod
from kb import library as library_mod
from kb import note_edits
from kb import notes as notes_mod
from kb.artifact_store import ArtifactStore
from kb.db import ClaimRow, Paper, init_db, make_engine
from kb.hashing import binding_hash
from kb.notes import Note, NoteError
from kb.queue import execution, executors, slurm
from kb.queue import store as queue_store
from kb.settings import Settings
from schemas import EXPORTED_MODELS, Claim, EvidenceRecord, RunRecord, Verdict


class IndexDamaged(Exception):
    """The index database cannot be read; it is a cache of the notes, so it can be rebuilt."""

    def __init__(self, url: str, error: Exception) -> None:
        self.url = url
        reason = str(getattr(error, "orig", error)).splitlines()[0]
        super().__init__(f"the index {url} cannot be read ({reason}): run `kb index --rebuild` to rebuild it from "
                         "the notes and re-attach the evidence stored under the KB home (nothing is lost)")


def _check_index(engine: Engine, database: Path) -> None:
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql("SELECT count(*) FROM paper")
    except DatabaseError as exc:
        raise IndexDamaged(str(database), exc) from None


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
            engine = make_engine(f"sqlite:///file:{database}?mode=ro&immutable=1&uri=true")
            _check_index(engine, database)
            return engine
        engine = make_engine(url)
        try:
            init_db(engine)
        except DatabaseError as exc:
            engine.dispose()
            raise IndexDamaged(url, exc) from None
        return engine

    # -- notes on disk -------------------------------------------------------------------------

    def note_path(self, note_id: str) -> Path:
        """Path of the note with this id; the id must name a note inside the notes folder."""
        if not note_id or "/" in note_id or "\\" in note_id or note_id.startswith("."):
            raise NoteError(note_id, "a note id is a file name without '.md' inside the notes folder, "
                            "not a path; run 'kb list' to see the ids")
        candidates = [p for p in notes_mod.find_notes(self.papers_dir) if p.stem == note_id]
        if not candidates:
            raise NoteError(self.papers_dir / f"{note_id}.md",
                            f"no note with id {note_id!r} in {self.papers_dir}; run 'kb list' to see the ids")
        return candidates[0]

    def read(self, note_id: str) -> Note:
        """Load and validate one note by id."""
        return notes_mod.read_note(self.note_path(note_id), max_bytes=self.settings.max_note_bytes)

    def validate(self, paths: list[Path] | None = None) -> tuple[list[Note], list[NoteError]]:
        """Validate notes (default: the whole notes folder)."""
        return notes_mod.validate_paths(paths or [self.papers_dir], max_bytes=self.settings.max_note_bytes)

    def new_note(self, meta: dict[str, Any], body: str) -> Note:
        """Create a note from frontmatter fields and a body; validated before anything is written."""
        self._check_paper_id_free(meta.get("paper_id"))
        note = notes_mod.create_note(self.papers_dir, meta, body)
        self.index()
        return note

    def import_note(self, src: Path) -> Note:
        """Validate a note written elsewhere and copy it, byte for byte, into the notes folder.

        Its ``source_file`` comes along to the same relative path (never overwriting a different file).
        """
        from kb import source_files

        note = notes_mod.read_note(src, max_bytes=self.settings.max_note_bytes)
        self._check_paper_id_free(note.meta.paper_id)
        copy = source_files.plan_source_copy(note, self.papers_dir)
        imported = notes_mod.import_note(src, self.papers_dir)
        if copy is not None:
            source_files.copy_source(*copy)
        self.index()
        return imported

    def set_fields(self, note_id: str, changes: dict[str, Any], body: str | None = None,
                   new_claims: list[Claim] | None = None, *, expected_hash: str | None = None) -> Note:
        """Change frontmatter fields of one note in place, touching only the bytes of the changed values.

        ``body``, when given, replaces the Markdown after the frontmatter (in the file's own line
        endings); ``new_claims`` are appended to the claims block with the existing claims' bytes kept.
        One validated, atomic write for all of it, under the note's lock, so concurrent edits never lose
        one another. ``expected_hash`` (an editor's copy) refuses the edit if the file changed since.
        A ``paper_id`` another note uses is refused.
        """
        with self._note_lock(note_id):
            # Read under the lock: a concurrent edit that landed first is the base this one applies to.
            note = self.read(note_id)
            if expected_hash is not None and note.content_hash != expected_hash:
                raise NoteError(note.path, "changed on disk since it was opened (another edit landed first): "
                                "reload the note and apply your change again; nothing was written")
            if "paper_id" in changes and changes["paper_id"] != note.meta.paper_id:
                self._check_paper_id_free(changes["paper_id"])
            if changes:
                note = note_edits.set_fields(note, changes)
            if new_claims:
                note = note_edits.append_claims(note, new_claims)
            if body is not None and body != note.body:
                note = _with_body(note, body)
            notes_mod.save_note(note)
        self.index()
        return note

    @contextlib.contextmanager
    def _note_lock(self, note_id: str) -> Iterator[None]:
        """One edit of a note at a time, across processes (a lock file under the KB home, not the vault)."""
        locks = self.settings.home / "locks"
        locks.mkdir(parents=True, exist_ok=True)
        real = os.path.realpath(self.note_path(note_id))
        with (locks / f"{hashlib.sha256(real.encode()).hexdigest()[:32]}.lock").open("a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def add_claims(self, note_id: str, claims: list[Claim]) -> list[Claim]:
        """Append claims to a note's ``claims:`` block (ids made unique in the note), write atomically, re-index.

        Only the claims block changes; existing claims keep their bytes. Returns the claims as written.
        """
        note = self.read(note_id)
        written = note_edits.unique_ids(claims, [c.id for c in note.meta.claims])
        notes_mod.save_note(note_edits.append_claims(note, written))
        self.index()
        return written

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
                                       max_bytes=self.settings.max_note_bytes)
        for note_id in report.updated:
            for claim in self.claims(note_id):
                evidence_mod.rejudge(self.engine, claim.key)
        return report

    def rebuild_index(self, progress: Callable[[int, int], None] | None = None) -> tuple[index_mod.IndexReport, int]:
        """Re-create the index from the notes and re-attach every run's evidence kept in the artifact store.

        The old SQLite file is moved aside (``index.sqlite.damaged-<time>``), never deleted. Returns the
        indexing report and the number of runs re-attached.
        """
        url = self.settings.resolved_database_url
        if not url.startswith("sqlite:///"):
            raise NoteError(url, "--rebuild re-creates a SQLite index; for a server database, drop and create the "
                            "database, then run `kb index --rebuild` against the empty one")
        database = Path(url.removeprefix("sqlite:///"))
        self.__dict__.pop("engine", None)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        for suffix in ("", "-wal", "-shm"):
            old = database.with_name(database.name + suffix)
            if old.exists():
                old.rename(old.with_name(f"{database.name}.damaged-{stamp}{suffix}"))
        report = self.index(progress=progress)
        return report, execution.reattach_evidence(self.engine, self.store)

    def list_papers(self, **filters: Any) -> list[Paper]:
        """Indexed papers matching the filters of ``kb.index.list_papers``."""
        return index_mod.list_papers(self.engine, **filters)

    def library(self, *, query: str | None = None, **filters: Any) -> list[library_mod.LibraryRow]:
        """Library rows (claim states, grounding counts) matching ``kb.library.library_rows`` filters.

        A non-empty ``query`` keeps the full-text search hits, best first.
        """
        hits = index_mod.search(self.engine, query, limit=100_000, snippets=False) if query and query.strip() else None
        ids = None if hits is None else [hit.paper_id for hit in hits]
        return library_mod.library_rows(self.engine, ids=ids, **filters)

    def get(self, note_id: str) -> Paper | None:
        """One indexed paper by note id."""
        return index_mod.get_paper(self.engine, note_id)

    def claims(self, note_id: str) -> list[ClaimRow]:
        """Indexed claims of one note."""
        return index_mod.claims_for(self.engine, note_id)

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
                raise NoteError(unknown[0], "no claim bound to an analyzer has this key ('<note id>#<claim id>'), "
                                "and no note with such claims has this id; run 'kb show NOTE' to see its claims")
        if stale_only:
            keys = [k for k in keys if self.staleness(k) is not None]
        return sorted(keys)

    def verify(self, targets: list[str] | None = None, *, stale_only: bool = False, device: str = "cpu",
               executor: str = "local", operator_params: dict[str, Any] | None = None,
               ) -> tuple[list[RunRecord], list[tuple[str, str]]]:
        """Queue runs for each targeted claim (one per seed when the binding lists seeds).

        ``operator_params`` are parameters of the person running kb (``kb verify --set``): they may set what
        a note may not (remote code, folders), and apply to every queued run whose analyzer takes them; the
        run's parameters record them. Returns the queued runs and the claims skipped, with why.
        """
        granted = operator_params or {}
        queued, skipped = [], []
        for key in self.claim_keys(targets, stale_only=stale_only):
            claim = queue_store.claim_for_key(self.engine, key)
            if claim is None or claim.analyzer is None:
                continue
            binding = claim.analyzer
            seeds: list[int | None] = list(binding.seeds) if binding.seeds else [None]
            try:
                analyzer = registry.get(binding.name)
                refused = analyzer.Params.note_errors(binding.params)
                if refused:  # notes like this are invalid at index time; an older index may still hold one
                    name, why = next(iter(refused.items()))
                    raise ValueError(f"analyzer.params.{name}: {why}")
                mine = {k: v for k, v in granted.items() if k in analyzer.Params.model_fields}
                overrides = [{**binding.params, **mine, "device": device, **({} if s is None else {"seed": s})}
                             for s in seeds]
                params = [analyzer.params_for(o, scale=binding.scale) for o in overrides]
            except (KeyError, ValueError) as exc:
                skipped.append((key, str(exc).strip('"')))
                continue
            group = uuid.uuid4().hex if len(seeds) > 1 else None
            for validated in params:
                run = queue_store.enqueue(self.engine, analyzer.name, validated.model_dump(mode="json"), claim_key=key,
                                   device=device, executor=executor, group_id=group, binding=binding_hash(claim))
                queued.append(queue_store.to_record(run))
        return queued, skipped

    def work_on_ray(self, run_ids: list[str], address: str | None = None, **init_kwargs: Any) -> dict[str, str]:
        """Execute these queued runs as Ray tasks (a local Ray instance unless ``address`` is given)."""
        devices = {r.id: r.device for r in self.runs(limit=100_000) if r.id in set(run_ids)}
        return executors.run_on_ray(self.settings.resolved_database_url, self.settings.home.resolve(), run_ids,
                                    address=address, devices=devices, **init_kwargs)

    @cached_property
    def store(self) -> ArtifactStore:
        """Where evidence files are written and read (``settings.artifact_store``; default the KB home)."""
        return ArtifactStore(self.settings.home, self.settings.artifact_store)

    def _job_store_url(self) -> str:
        # A job on another machine must write where this KB reads: the configured store, else this KB home
        # (which then has to be on a filesystem the nodes share).
        return self.settings.artifact_store or str(self.settings.home.resolve())

    def submit_to_slurm(self, run_ids: list[str]) -> dict[str, str]:
        """Submit each run as a Slurm job; returns the job id per run."""
        return slurm.submit(self.engine, self.settings.slurm, self.settings.home.resolve(),
                            self.settings.resolved_database_url, self._job_store_url(), run_ids)

    def reconcile_slurm(self) -> dict[str, str]:
        """Resubmit (or fail, past the attempt limit) runs whose Slurm job disappeared."""
        return slurm.reconcile(self.engine, self.settings.slurm, self.settings.home.resolve(),
                               self.settings.resolved_database_url, self._job_store_url())

    def work_on_slurm(self, run_ids: list[str], poll: float = 3.0) -> dict[str, str]:
        """Submit these runs as Slurm jobs and wait for them to end, resubmitting runs whose job vanished."""
        self.submit_to_slurm(run_ids)
        while True:
            records = self.runs(ids=run_ids, limit=len(run_ids) or 1)
            if all(r.status.value in ("succeeded", "failed", "cancelled") for r in records):
                return {r.id: r.status.value for r in records}
            self.reconcile_slurm()
            time.sleep(poll)

    def work(self, *, once: bool = True, idle_timeout: float | None = None,
             device: str | None = None) -> dict[str, int]:
        """Run queued runs in this process until the queue is empty (or forever, as a worker)."""
        return execution.work(self.engine, self.settings.home, once=once, idle_timeout=idle_timeout, store=self.store,
                              device=device, offline=self.settings.offline)

    def runs(self, status: str | None = None, claim_key: str | None = None, limit: int = 100,
             ids: list[str] | None = None) -> list[RunRecord]:
        """Runs, newest first (optionally only those with the given ids)."""
        return queue_store.list_runs(self.engine, status=status, claim_key=claim_key, limit=limit, ids=ids)

    def recover(self) -> list[str]:
        """Re-queue runs whose worker stopped (at once for a dead process on this host); returns their ids."""
        return queue_store.recover_stale(self.engine)

    def cancel(self, run_id: str) -> bool:
        """Cancel a queued or running run (and the Slurm job executing it, if any)."""
        record = queue_store.get_run(self.engine, run_id)
        cancelled = queue_store.cancel(self.engine, run_id)
        if cancelled and record is not None and record.job_id:
            slurm.cancel_job(record.job_id)
        return cancelled

    def get_run(self, run_id: str) -> RunRecord | None:
        """One run by id."""
        return queue_store.get_run(self.engine, run_id)

    def retry(self, run_id: str) -> RunRecord:
        """Queue a new run like ``run_id`` (same analyzer, parameters, claim, device); it must have ended."""
        return queue_store.to_record(queue_store.retry(self.engine, run_id))

    def analyzer_evidence(self, analyzer: str, limit: int = 200) -> list[tuple[EvidenceRecord, RunRecord | None]]:
        """Evidence an analyzer produced (any claim, or none), newest first, each with the run behind it."""
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

    def claim_states(self, note_id: str | None = None) -> dict[str, evidence_mod.ClaimStatus]:
        """The state of every indexed claim (or of one note's claims) by claim key: ``kb.evidence``'s rule."""
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


def _with_body(note: Note, body: str) -> Note:
    """The note with its Markdown body replaced; the frontmatter bytes are kept exactly."""
    old_tail = note.body.encode("utf-8")
    head = note.raw[: len(note.raw) - len(old_tail)]
    newline = "\r\n" if head.split(b"\n", 1)[0].endswith(b"\r") else "\n"
    text = body.replace("\r\n", "\n")
    if newline != "\n":
        text = text.replace("\n", newline)
    return notes_mod.parse_note(head + text.encode("utf-8"), note.path)


def list_metric_paths(metrics: dict[str, Any], prefix: str = "") -> dict[str, int]:
    """Dotted paths of the numeric lists in a result (e.g. ``layers.logit_lens_kl``), with their lengths.

    A list counts when every item is a number or null (NaN is stored as null); lists of lists do not.
    """
    found: dict[str, int] = {}
    for key, value in metrics.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            found.update(list_metric_paths(value, prefix=f"{path}."))
        elif (isinstance(value, list) and value
              and all(v is None or (isinstance(v, int | float) and not isinstance(v, bool)) for v in value)
              and any(v is not None for v in value)):
            found[path] = len(value)
    return found


def paper_summary(paper: Paper) -> dict[str, Any]:
    """A JSON-ready summary of an indexed paper, as listing commands print it."""
    return {
        "id": paper.id,
        "paper_id": paper.paper_id,
        "title": paper.title,
        "year": paper.year,
        "status": paper.status,
        "decision": paper.decision,
        "quality_score": paper.quality_score,
        "journal_tier": paper.journal_tier,
        "tags": [t for t in (paper.tags_text or "").split() if t],
        "path": paper.path,
    }
