"""Evidence that travels: chosen runs written as a bundle of plain files; a bundle added to another KB home.

A lab regenerates evidence on its GPU and shares it. ``export_bundle`` writes each run's outcome record (the
store's own format, ``kb.queue.records``) with its verdict left out and the scale its analyzer reported
kept as data, its figures and JSON files, its text files (log, FASTA) inside one JSON object, and a manifest
with the SHA-256 of every file (``schemas.bundle``); checkpoints and other binaries only when asked.

``import_bundle`` reads a bundle as data from elsewhere, like a note: bounded (files, bytes), every path
inside it (no absolute path, ``..``, link or device; a tar is decompressed within the byte bound, its extended
headers bounded, then extracted with tarfile's ``data`` filter after the same checks), every file listed with
its checksum, every record checked by the store's record checker (``kb.queue.record_checks``), every figure a
PNG by its magic bytes and every JSON strict, each stored under a name of the kind it was checked as (a text
file under a text file's name, never a plot's or a checkpoint's); the claims and analyzers it names must be
this library's. Any failure refuses the whole bundle with one reason before anything is written. Then its
files go into the artifact store, its records beside the runs' own (so that ``kb index --rebuild`` restores
them), and its runs into the index in one transaction, each verdict judged from the bundled metrics by this
kb's own rule (``kb.queue.records.attach_outcomes``): a bundle carries no verdict. Nothing in a bundle is
executed or unpickled, and checkpoints in one are never read.
"""

from __future__ import annotations

import bz2
import contextlib
import datetime as dt
import gzip
import hashlib
import io
import json
import lzma
import os
import re
import shutil
import stat
import tarfile
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import ValidationError
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from analyzers import registry
from kb import __version__
from kb.evidence.artifact_store import ArtifactStore, evidence_key
from kb.index.database import Evidence, Run
from kb.index.indexing import claim_for_key
from kb.queue import records
from kb.queue.execution import git_commit
from kb.queue.record_checks import RecordRefused, check_record, strict_json
from kb.settings import BundleSettings
from schemas import Provenance, RunStatus, Verdict
from schemas.bundle import BUNDLE_SCHEMA_VERSION, BundledRun, BundleFile, BundleManifest

MANIFEST = "manifest.json"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
#: Run files carried as text inside ``texts.json`` (UTF-8): logs and sequences, small and readable.
PLAIN_ONLY = "a bundle holds plain files only"
TEXT_SUFFIXES = frozenset({".txt", ".log", ".fasta", ".fa", ".csv", ".tsv", ".md"})
#: Room for one tar entry's headers beyond its data: its header block, its padding and a pax header for a
#: long name (a bundle's names are at most 500 characters).
_HEADER_ROOM = 3 * 512 + 1024
#: Largest extended tar header (pax, GNU long name) a bundle may hold: its names are at most 500 characters.
MAX_TAR_HEADER = 64 * 1024
_EXTENDED_HEADERS = frozenset({b"x", b"g", b"L", b"K"})
# Evidence fields a bundle never carries: the verdict is the importer's to draw, staleness its to see.
_NOT_CARRIED = {"id", "verdict_json", "verdict_kind", "stale", "stale_reason"}


class BundleRefused(ValueError):
    """A bundle ``import_bundle`` does not take (nothing of it was imported), or runs ``export_bundle`` cannot
    write; the message says why in one line."""


# -- export ------------------------------------------------------------------------------------------------


@dataclass
class ExportReport:
    """What a bundle got: its path, the runs in it, and the files of theirs left out (with why)."""

    path: Path
    runs: list[str]
    left_out: list[str] = field(default_factory=list)


def export_bundle(engine: Engine, store: ArtifactStore, run_ids: list[str], out: Path, *,
                  with_checkpoints: bool = False) -> ExportReport:
    """Write the evidence of ``run_ids`` as a bundle at ``out`` (a folder, or a ``.tar.gz`` when it ends so).

    Each run must have succeeded with metrics. The bundle is written beside ``out`` and moved into place
    whole; an existing ``out`` is refused, never overwritten."""
    if not run_ids:
        raise BundleRefused("no runs to export: name run ids, a claim (--claim) or --all")
    if out.exists() or out.is_symlink():
        raise BundleRefused(f"{out} exists: choose a new path (a bundle is never written over anything)")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.part-", dir=out.parent))
    try:
        report = ExportReport(out, [])
        bundled = [_export_run(engine, store, run_id, staging, with_checkpoints, report.left_out)
                   for run_id in dict.fromkeys(run_ids)]
        manifest = BundleManifest(schema_version=BUNDLE_SCHEMA_VERSION, kb_version=__version__,
                                  git_commit=git_commit(), created_at=dt.datetime.now(dt.UTC), runs=bundled)
        (staging / MANIFEST).write_text(manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")
        report.runs = [run.run_id for run in bundled]
        if out.name.endswith((".tar.gz", ".tgz")):
            tarred = out.with_name(f".{out.name}.part-{uuid.uuid4().hex}")
            with tarfile.open(tarred, "w:gz") as tar:
                for path in sorted(p for p in staging.rglob("*") if p.is_file()):
                    tar.add(path, arcname=path.relative_to(staging).as_posix(), recursive=False)
            os.replace(tarred, out)
        else:
            staging.rename(out)
        return report
    finally:
        shutil.rmtree(staging, ignore_errors=True)


#: Where a notes folder ships evidence made elsewhere (a lab's GPU runs): bundles `kb demo` imports.
SHIPPED_FOLDER = "evidence"


def shipped_bundles(papers: Path) -> list[Path]:
    """The bundles a notes folder ships in ``evidence/``, in name order: each ``.tar.gz`` file and each
    folder holding a manifest. Links are listed too, for the importer to refuse (the notes folder is the
    boundary)."""
    folder = papers / SHIPPED_FOLDER
    if folder.is_symlink() or not folder.is_dir():
        return []
    return [entry for entry in sorted(folder.iterdir())
            if entry.is_symlink() or (entry.is_file() and entry.name.endswith(".tar.gz"))
            or (entry.is_dir() and (entry / MANIFEST).is_file())]  # fmt: skip


def exportable_runs(engine: Engine, claim_key: str | None = None) -> list[str]:
    """Ids of the runs whose evidence has metrics (of one claim, or all), oldest first."""
    query = select(Evidence.run_id, Evidence.metrics_json).order_by(col(Evidence.created_at))
    if claim_key is not None:
        query = query.where(Evidence.claim_key == claim_key)
    with Session(engine) as session:
        return [run_id for run_id, metrics in session.exec(query).all() if metrics not in ("{}", "")]


@dataclass
class _RunPacker:
    """Writes one run's files into the bundle being staged: figures and JSON as files, text in one JSON."""

    store: ArtifactStore
    staging: Path
    run_id: str
    with_checkpoints: bool
    left_out: list[str]
    files: list[BundleFile] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)

    @property
    def folder(self) -> PurePosixPath:
        return PurePosixPath("runs", self.run_id)

    def carry(self, key: str) -> bool:
        """Carry one stored file of the run (as a file, or inside ``texts.json``); whether it was."""
        parts = PurePosixPath(key).parts
        name = "/".join(parts[3:]) if key.startswith("evidence/") and len(parts) > 3 else None
        data = self.store.read_bytes(key) if name else None
        if name is None or data is None:
            self.left_out.append(f"{self.run_id[:12]}: {key} (not in the artifact store)")
            return False
        suffix = PurePosixPath(name).suffix.lower()
        if suffix == ".png" and data.startswith(PNG_MAGIC) or suffix == ".json":
            self.write(self.folder / "files" / name, data, "artifact", name)
            return True
        if suffix in TEXT_SUFFIXES:
            try:
                self.texts[name] = data.decode("utf-8")
                return True
            except UnicodeDecodeError:
                pass
        if self.with_checkpoints:
            self.write(self.folder / "checkpoints" / name, data, "checkpoint", name)
        else:
            self.left_out.append(f"{self.run_id[:12]}: {name} (a binary file: --with-checkpoints carries it)")
        return False

    def write(self, path: PurePosixPath, data: bytes, role: str, artifact: str | None = None) -> None:
        target = self.staging / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        self.files.append(BundleFile.model_validate({
            "path": str(path), "role": role, "artifact": artifact, "sha256": hashlib.sha256(data).hexdigest(),
            "size": len(data)}))


def _export_run(engine: Engine, store: ArtifactStore, run_id: str, staging: Path, with_checkpoints: bool,
                left_out: list[str]) -> BundledRun:
    with Session(engine) as session:
        run = session.get(Run, run_id)
        evidence = session.exec(select(Evidence).where(Evidence.run_id == run_id)).first()
    if run is None:
        raise BundleRefused(f"no run {run_id!r} here; run 'kb runs' to see run ids")
    if run.status != RunStatus.succeeded.value or evidence is None or json.loads(evidence.metrics_json) == {}:
        raise BundleRefused(f"run {run_id} has no metrics to export (it is {run.status}): "
                            "export succeeded runs")
    packer = _RunPacker(store, staging, run.id, with_checkpoints, left_out)
    carried = [key for key in json.loads(evidence.artifacts_json) if packer.carry(key)]
    if packer.texts:
        packer.write(packer.folder / "texts.json", json.dumps(packer.texts, indent=1).encode(), "texts")
    verdict = Verdict.model_validate_json(evidence.verdict_json) if evidence.verdict_json else None
    fields = evidence.model_dump(mode="json", exclude=_NOT_CARRIED)
    fields["artifacts_json"] = json.dumps(carried)
    # The scale the analyzer reported is a measurement, like the metrics: carried apart, as data.
    fields["evidence_scale"] = (verdict.evidence_scale.model_dump(mode="json")
                                if verdict and verdict.evidence_scale else None)
    record = {"format": records.FORMAT, "attempt": run.attempts, "run": records.run_fields(run),
              "evidence": fields}
    raw = json.dumps(record, sort_keys=True, indent=1, default=str).encode()
    packer.write(PurePosixPath(records.record_key(run.id, run.attempts)), raw, "record")
    files = [packer.files[-1], *packer.files[:-1]]  # the record first
    return BundledRun(run_id=run.id, claim_key=run.claim_key, analyzer=run.analyzer, files=files)


# -- import: read and check everything first ---------------------------------------------------------------


@dataclass
class CheckedRun:
    """One run of a bundle that passed every check: its outcome and the files to put in the store."""

    outcome: records.StoredOutcome
    record: dict[str, Any]
    files: dict[str, bytes]  # store key -> contents (figures, JSON and text files)
    checkpoints: int = 0  # checkpoint files it carries, never read


@dataclass
class ImportReport:
    """What an import added: the runs, the runs this index had already, and checkpoint files not taken."""

    added: list[str] = field(default_factory=list)
    already_here: list[str] = field(default_factory=list)
    checkpoints_skipped: int = 0


def import_bundle(engine: Engine, store: ArtifactStore, bundle: Path, *, limits: BundleSettings,
                  scratch: Path) -> ImportReport:
    """Add the runs of ``bundle`` to this index and store (see the module docstring); ``BundleRefused`` with
    one reason, nothing imported, when any check fails. ``scratch`` is a folder a tar is extracted under."""
    scratch.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="bundle-", dir=scratch))
    try:
        folder = _open_bundle(bundle, workdir, limits)
        manifest = _read_manifest(folder)
        _check_listing(folder, manifest)
        checked = [_check_run(engine, folder, run) for run in manifest.runs]
        return _land(engine, store, checked, bundle.name)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _open_bundle(bundle: Path, workdir: Path, limits: BundleSettings) -> Path:
    """The bundle as a checked folder: a folder walked without following links, or a tar checked, then
    extracted."""
    if bundle.is_symlink():
        raise BundleRefused(f"{bundle} is a symbolic link: name the bundle itself")
    if bundle.is_dir():
        _check_folder(bundle, limits)
        return bundle
    if not bundle.is_file():
        raise BundleRefused(f"{bundle} does not exist")
    try:
        raw_tar = _bounded_tar(bundle, workdir / "bundle.tar", limits)
        _check_headers(raw_tar)
        with tarfile.open(raw_tar, "r:") as tar:
            _check_members(tar, limits)
            tar.extractall(workdir / "bundle", filter="data")
    except (tarfile.TarError, EOFError, OSError, lzma.LZMAError) as exc:  # a BundleRefused passes through
        raise BundleRefused(f"{bundle} is neither a bundle folder nor a readable .tar.gz ({exc})") from None
    return workdir / "bundle"


def _bounded_tar(bundle: Path, out: Path, limits: BundleSettings) -> Path:
    """``bundle`` (a tar, gzip-, bzip2- or xz-compressed or not) decompressed to ``out``, refused once it is
    over the bundle's byte bound plus its headers' room: a tar's own headers (a pax header, a long name) are
    read whole into memory before any member's size can be checked, and a few MB of gzip make gigabytes."""
    bound = limits.max_total_bytes + _HEADER_ROOM * (limits.max_files + 2)
    with bundle.open("rb") as raw, contextlib.ExitStack() as stack, out.open("wb") as sink:
        magic = raw.read(6)
        raw.seek(0)
        stream: io.BufferedIOBase = raw
        if magic.startswith(b"\x1f\x8b"):
            stream = stack.enter_context(gzip.GzipFile(fileobj=raw))
        elif magic.startswith(b"BZh"):
            stream = stack.enter_context(bz2.BZ2File(raw))
        elif magic.startswith(b"\xfd7zXZ"):
            stream = stack.enter_context(lzma.LZMAFile(raw))
        written = 0
        while chunk := stream.read(min(1 << 20, bound + 1 - written)):
            written += len(chunk)
            if written > bound:
                raise BundleRefused(f"it is over the {limits.max_total_bytes:,}-byte limit of a bundle "
                                    "(KB_BUNDLES__MAX_TOTAL_BYTES) once decompressed")
            sink.write(chunk)
    return out


def _check_headers(path: Path) -> None:
    """Refuse a tar whose extended headers (pax, GNU long names) are over ``MAX_TAR_HEADER`` bytes, before
    tarfile reads each whole into memory: walked block by block, each entry's data skipped by its size (the
    size a pax header gives, when it gives one). A header tarfile cannot read is left to it to report."""
    size_of_next: int | None = None
    with path.open("rb") as tar:
        while len(block := tar.read(512)) == 512 and block.strip(b"\0"):
            if (size := _header_size(block[124:136])) is None:
                return
            kind = block[156:157]
            if kind in _EXTENDED_HEADERS:
                if size > MAX_TAR_HEADER:
                    raise BundleRefused(f"it holds a tar header of {size:,} bytes, over the "
                                        f"{MAX_TAR_HEADER:,} a bundle's headers need (a name, a size)")
                data = tar.read(size)
                given = re.search(rb"(?:^|\n)\d+ size=(\d+)\n", data) if kind in (b"x", b"g") else None
                size_of_next = int(given[1]) if given else size_of_next
                tar.seek(-size % 512, os.SEEK_CUR)
                continue
            size, size_of_next = (size if size_of_next is None else size_of_next), None
            tar.seek(-(-size // 512) * 512, os.SEEK_CUR)


def _header_size(field: bytes) -> int | None:
    """A tar header's size field: octal digits, or base-256 when its first byte is 0x80; None if neither."""
    if field[:1] == b"\x80":
        return int.from_bytes(field[1:], "big")
    digits = field.split(b"\0", 1)[0].strip()
    return int(digits or b"0", 8) if all(c in b"01234567" for c in digits) else None


def _inside(name: str, *, root_ok: bool = False) -> str:
    """``name`` as a path inside the bundle ('./a//b' is 'a/b'; ``root_ok``: '.' itself, a tar's top folder);
    ``BundleRefused`` for one that escapes it or names nothing."""
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if name.startswith("/") or "\\" in name or ".." in parts or (parts and ":" in parts[0]) \
            or not (parts or root_ok):
        raise BundleRefused(f"it holds {name!r}, a path outside the bundle")
    return "/".join(parts)


def _check_members(tar: tarfile.TarFile, limits: BundleSettings) -> None:
    total = 0
    for count, member in enumerate(tar, start=1):  # streamed: a bomb of members stops at the count
        if count > limits.max_files:
            raise _too_many(limits)
        _inside(member.name, root_ok=member.isdir())
        if not (member.isfile() or member.isdir()):
            raise BundleRefused(f"it holds {member.name!r}, a link or device: {PLAIN_ONLY}")
        total += _bounded(member.name, member.size, total, limits)


def _check_folder(folder: Path, limits: BundleSettings) -> None:
    count = total = 0
    for root, dirs, names in os.walk(folder, followlinks=False):
        for name in [*dirs, *names]:
            count += 1
            if count > limits.max_files:
                raise _too_many(limits)
            path = Path(root, name)
            relative = path.relative_to(folder).as_posix()
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode) or not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                raise BundleRefused(f"it holds {relative!r}, a link or device: {PLAIN_ONLY}")
            if stat.S_ISREG(mode):
                total += _bounded(relative, path.lstat().st_size, total, limits)


def _too_many(limits: BundleSettings) -> BundleRefused:
    return BundleRefused(f"it holds more than {limits.max_files:,} entries (KB_BUNDLES__MAX_FILES)")


def _bounded(name: str, size: int, total: int, limits: BundleSettings) -> int:
    if size > limits.max_file_bytes:
        raise BundleRefused(f"{name} is {size:,} bytes, over the {limits.max_file_bytes:,}-byte limit of a "
                            "bundle file (KB_BUNDLES__MAX_FILE_BYTES)")
    if total + size > limits.max_total_bytes:
        raise BundleRefused(f"it is over the {limits.max_total_bytes:,}-byte limit of a bundle "
                            "(KB_BUNDLES__MAX_TOTAL_BYTES)")
    return size


def _read_manifest(folder: Path) -> BundleManifest:
    path = folder / MANIFEST
    if not path.is_file():
        raise BundleRefused(f"no {MANIFEST}: not an evidence bundle (write one with `kb evidence export`)")
    data = _json(path.read_bytes(), MANIFEST)
    version = data.get("schema_version") if isinstance(data, dict) else None
    if isinstance(version, int) and not isinstance(version, bool) and version > BUNDLE_SCHEMA_VERSION:
        raise BundleRefused(f"it is of bundle schema {version}, newer than this kb reads "
                            f"({BUNDLE_SCHEMA_VERSION}): upgrade kb to import it")
    try:
        return BundleManifest.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"])
        raise BundleRefused(f"{MANIFEST} field '{where}': {error['msg']}") from None


def _json(raw: bytes, what: str) -> Any:
    try:
        return strict_json(raw, what)
    except RecordRefused as exc:
        raise BundleRefused(str(exc)) from None


def _check_listing(folder: Path, manifest: BundleManifest) -> None:
    """Every file is listed once in the manifest, under its run, with its size and checksum."""
    listed: dict[str, BundleFile] = {}
    for run in manifest.runs:
        for entry in run.files:
            if not entry.path.startswith(f"runs/{run.run_id}/"):
                raise BundleRefused(f"{MANIFEST} lists {entry.path} under run {run.run_id}, outside its "
                                    "folder")
            if entry.path in listed or entry.path == MANIFEST:
                raise BundleRefused(f"{MANIFEST} lists {entry.path} twice")
            listed[entry.path] = entry
    present = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()} - {MANIFEST}
    if unlisted := sorted(present - set(listed)):
        raise BundleRefused(f"{unlisted[0]} is not listed in {MANIFEST}")
    if missing := sorted(set(listed) - present):
        raise BundleRefused(f"{missing[0]} is listed in {MANIFEST} but not in the bundle")
    for path, entry in listed.items():
        data = (folder / path).read_bytes() if entry.role != "checkpoint" else None
        if data is not None and (len(data) != entry.size or hashlib.sha256(data).hexdigest() != entry.sha256):
            raise BundleRefused(f"{path}: checksum mismatch (the file is not the one {MANIFEST} lists)")


def _check_run(engine: Engine, folder: Path, entry: BundledRun) -> CheckedRun:
    """The run's record checked by the store's record checker, its claim and analyzer this library's, its
    files PNG and JSON."""
    where = f"run {entry.run_id}"
    records_of = [f for f in entry.files if f.role == "record"]
    if len(records_of) != 1:
        raise BundleRefused(f"{where}: {MANIFEST} must list exactly one record")
    raw = (folder / records_of[0].path).read_bytes()
    try:
        run, evidence, record = check_record(raw, records_of[0].path)
    except RecordRefused as exc:
        raise BundleRefused(f"{records_of[0].path}: {exc}") from None
    if (run.id, run.claim_key, run.analyzer) != (entry.run_id, entry.claim_key, entry.analyzer):
        raise BundleRefused(f"{records_of[0].path}: its run is not the one {MANIFEST} names")
    if run.status is not RunStatus.succeeded or evidence is None or json.loads(evidence.metrics_json) == {}:
        raise BundleRefused(f"{where}: no metrics (a bundle carries succeeded runs' evidence)")
    if run.analyzer not in registry.load_all():
        raise BundleRefused(f"{where}: analyzer {run.analyzer!r} is not registered here (see `kb analyzers`)")
    if run.claim_key is not None and claim_for_key(engine, run.claim_key) is None:
        raise BundleRefused(f"{where}: claim {run.claim_key!r} is not in this library: add its note first")
    files = _run_files(folder, entry)
    evidence.artifacts_json = json.dumps(sorted(files))
    outcome = records.StoredOutcome(records_of[0].path, run, evidence, None, records.carried_scale(record))
    return CheckedRun(outcome, record, files, sum(f.role == "checkpoint" for f in entry.files))


def _run_files(folder: Path, entry: BundledRun) -> dict[str, bytes]:
    """The run's figures, JSON and text files by the store key each gets (its content hash and name)."""
    files: dict[str, bytes] = {}
    for item in entry.files:
        if item.role == "artifact":
            key, data = _artifact_file(folder, item)
            files[key] = data
        elif item.role == "texts":
            files.update(_text_files(folder, item))
    return files


def _artifact_file(folder: Path, item: BundleFile) -> tuple[str, bytes]:
    """A figure or JSON file's store key and bytes, refused unless it is what its name says (PNG or JSON)
    and the run's output names it as a file of the same kind."""
    data = (folder / item.path).read_bytes()
    suffix = PurePosixPath(item.path).suffix.lower()
    if suffix == ".png" and not data.startswith(PNG_MAGIC):
        raise BundleRefused(f"{item.path}: not a PNG (its first bytes are not PNG's)")
    if suffix == ".json":
        _json(data, item.path)
    elif suffix != ".png":
        raise BundleRefused(f"{item.path}: a bundle's files are JSON and PNG only")
    if item.artifact is None:
        raise BundleRefused(f"{item.path}: {MANIFEST} does not name it in the run's output "
                            "(artifact)")
    if PurePosixPath(item.artifact).suffix.lower() != suffix:  # checked as one kind, used by name
        raise BundleRefused(f"{item.path}: stored as {item.artifact!r}, another kind of file than "
                            "the one checked")
    return evidence_key(item.sha256, _inside(item.artifact)), data


def _text_files(folder: Path, item: BundleFile) -> dict[str, bytes]:
    """The run's text files, from the bundle's one JSON object of file name to text, by store key; a name
    that is not a text file's is refused."""
    texts = _json((folder / item.path).read_bytes(), item.path)
    if not isinstance(texts, dict) or not all(isinstance(v, str) for v in texts.values()):
        raise BundleRefused(f"{item.path}: not a JSON object of file name to text")
    files: dict[str, bytes] = {}
    for name, text in texts.items():
        if PurePosixPath(name).suffix.lower() not in TEXT_SUFFIXES:  # a plot or checkpoint by name
            raise BundleRefused(f"{item.path}: {name!r} is not a text file's name (one of "
                                f"{', '.join(sorted(TEXT_SUFFIXES))})")
        data = text.encode("utf-8")
        files[evidence_key(hashlib.sha256(data).hexdigest(), _inside(name))] = data
    return files


# -- import: land what was checked -------------------------------------------------------------------------


def _land(engine: Engine, store: ArtifactStore, checked: list[CheckedRun], bundle_name: str) -> ImportReport:
    """Files into the store (content-addressed: harmless if the rest fails), then the records beside the runs'
    own, then the runs into the index in one transaction; the records are taken back if that fails."""
    with Session(engine) as session:
        known = set(session.exec(select(Run.id)).all())
    report = ImportReport(already_here=[c.outcome.run.id for c in checked if c.outcome.run.id in known])
    fresh = [c for c in checked if c.outcome.run.id not in known]
    now = dt.datetime.now(dt.UTC)
    kept: list[str] = []
    try:
        for item in fresh:
            _stamp(item, bundle_name, now)
            for key, data in item.files.items():
                records.put_bytes(store, key, data)
            run = item.outcome.run
            key = records.record_key(run.id, run.attempts)
            records.keep_record(store, key, item.record)
            kept.append(key)
            report.checkpoints_skipped += item.checkpoints
        report.added = records.attach_outcomes(engine, [item.outcome for item in fresh])
    except Exception:
        for key in kept:
            store.remove(key)
        raise
    return report


def _stamp(item: CheckedRun, bundle_name: str, now: dt.datetime) -> None:
    """Say where the evidence came from, in its provenance and in the record the store keeps."""
    evidence = item.outcome.evidence
    assert evidence is not None  # checked: a bundled run has evidence
    provenance = Provenance.model_validate_json(evidence.provenance_json)
    provenance = provenance.model_copy(update={"imported_from": bundle_name[:200], "imported_at": now})
    evidence.provenance_json = provenance.model_dump_json()
    fields = {k: v for k, v in item.record["evidence"].items() if k not in _NOT_CARRIED}
    fields.update(provenance_json=evidence.provenance_json, artifacts_json=evidence.artifacts_json)
    item.record = {**item.record, "evidence": fields}

