"""Where evidence files live: a content-addressed store named by a URL, local by default.

A run's files (plots, metrics.json, log.txt, checkpoints) are stored under keys
``evidence/<sha256[:2]>/<sha256>/<path in the run's output>``: identical files are stored once, names stay
readable, and a key never changes meaning, so a read cache never goes stale. The store's root is an
fsspec URL chosen by the person running kb (``KB_ARTIFACT_STORE``, ``--store``), never by a note:

- unset: the KB home itself (``<KB home>/evidence/...``, the single-machine layout);
- ``file:///shared/kb-store`` or a plain path: a folder, e.g. on NFS;
- ``s3://bucket/prefix`` (needs ``s3fs``) or any other fsspec URL: a team store that workers on other
  machines upload to and the app reads from.

Writes are atomic and idempotent: a key that exists is never written again; a folder store writes a
temporary name and renames it, and object stores (S3) make an object visible only once it is complete, so
a half-written upload is never seen. Reads of a remote store go through a local cache under the KB home.

A remote store's outages are ridden out as the database's are: every upload and download is tried again
with a bounded backoff (``retrying``: 0.5 s doubling, 31.5 s in all, inside a run's lease, which its
heartbeat renews meanwhile), logged once when the outage starts and once when it ends.

Checkpoints are the one mutable part: ``checkpoints/<run id>/...`` holds a run's latest checkpoint so that
a run killed on one node resumes from it on another (``push_checkpoints`` / ``pull_checkpoints``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import os
import shutil
import time
import uuid
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

CHUNK = 1 << 20  # files are hashed and copied in 1 MiB chunks: checkpoints can be gigabytes
#: Tries of one operation on a remote store that does not answer, and the first wait between two (doubling).
STORE_TRIES, STORE_FIRST_DELAY = 7, 0.5
log = logging.getLogger("kb.worker")
T = TypeVar("T")


def store_transient(exc: BaseException) -> bool:
    """Whether an error of a remote store may be an outage worth trying again (not a missing key, a refusal,
    a wrong argument or a full local disk)."""
    from kb.disk import is_disk_full

    if isinstance(
        exc,
        FileNotFoundError
        | PermissionError
        | IsADirectoryError
        | NotADirectoryError
        | ValueError
        | KeyError
        | TypeError,
    ):
        return False
    return not is_disk_full(exc)


def sha256_of(path: Path) -> str:
    """The SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def check_key(key: object) -> str:
    """``key`` when it names a file inside a store: relative, '/'-separated, no part empty, '.' or '..', no
    backslash or NUL; ``ValueError`` otherwise. Keys are read back from run records, which are data, and a
    remote store's read cache joins a key to a local folder (an absolute key joined is that key)."""
    if not isinstance(key, str) or key.startswith("/") or "\\" in key or "\x00" in key \
            or any(part in ("", ".", "..") for part in key.split("/")):
        raise ValueError(f"artifact key {key!r} must be a relative path inside the store")
    return key


def evidence_key(sha: str, relative: str | PurePosixPath) -> str:
    """The store key of a file with content hash ``sha`` found at ``relative`` in a run's output."""
    return str(PurePosixPath("evidence", sha[:2], sha, relative))


class ArtifactStore:
    """Evidence files under ``url`` (default: the KB home), read through a local cache."""

    def __init__(self, home: Path, url: str | None = None, **storage_options: Any) -> None:
        import fsspec

        self.home = Path(home)
        self.url = url or str(self.home.resolve())
        self.fs, root = fsspec.core.url_to_fs(self.url, **storage_options)
        self.root = root.rstrip("/")
        self.is_local = "file" in _protocols(self.fs)
        self.cache_dir = self.home / "cache" / "artifacts"
        self._pushed: dict[str, str] = {}  # checkpoint target -> sha256 this process last pushed or pulled

    def __repr__(self) -> str:
        return f"ArtifactStore({self.url!r})"

    def retrying(self, what: str, operation: Callable[[], T]) -> T:
        """``operation()`` on a remote store, tried ``STORE_TRIES`` times with a doubling wait while it fails
        on what may be an outage; the last error is raised. A folder store is tried once (its errors are a
        disk's)."""
        if self.is_local:
            return operation()
        delay = STORE_FIRST_DELAY
        for attempt in range(1, STORE_TRIES + 1):
            try:
                result = operation()
            except Exception as exc:
                if attempt == STORE_TRIES or not store_transient(exc):
                    raise
                if attempt == 1:
                    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                    log.warning(
                        "artifact store %s unavailable while %s (%s); retrying (%.1f s doubling, %d tries)",
                        self.url, what, reason, STORE_FIRST_DELAY, STORE_TRIES,
                    )
                time.sleep(delay)
                delay *= 2
                self.fs.invalidate_cache()
                continue
            if attempt > 1:
                log.warning("artifact store %s answers again (try %d)", self.url, attempt)
            return result
        raise AssertionError("unreachable")

    def _path(self, key: str) -> str:
        return f"{self.root}/{check_key(key)}"

    def _unlinked(self, key: str) -> bool:
        """Whether no symbolic link lies under a folder store's root on the way to ``key`` (kb never makes
        one: a link planted in a shared store folder would read or write a file outside it)."""
        return not self.is_local or os.path.realpath(self._path(key)) == os.path.join(
            os.path.realpath(self.root), key)

    def _writable(self, key: str) -> str:
        """The path to write ``key`` at; ``ValueError`` when a symbolic link lies on the way to it."""
        if not self._unlinked(key):
            raise ValueError(f"the artifact store {self.url} holds a symbolic link on the way to {key}: a "
                             "store holds plain files and folders only; remove the link")
        return self._path(key)

    # -- writing ---------------------------------------------------------------------------------------
    def put_tree(self, folder: Path, *, move: bool = True) -> list[str]:
        """Store every file under ``folder``; returns their keys, in path order.

        Files are hashed in chunks; a key already present is not written again. With ``move`` (the worker's
        staging folder) a local store renames the file into place instead of copying it.
        """
        keys = []
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            key = evidence_key(sha256_of(path), path.relative_to(folder).as_posix())
            self.put_file(path, key, move=move)
            keys.append(key)
        return keys

    def put_file(self, local: Path, key: str, *, move: bool = False) -> None:
        """Write ``local`` at ``key`` atomically, unless ``key`` exists (content-addressed keys never
        change)."""
        target = self._writable(key)
        if self.retrying(f"checking {key}", lambda: self.fs.exists(target)):
            return
        if self.is_local:
            Path(target).parent.mkdir(parents=True, exist_ok=True)
            temporary = f"{target}.part-{uuid.uuid4().hex}"
            if move:
                try:
                    os.replace(local, temporary)
                except OSError:  # another filesystem: copy instead of rename
                    shutil.copyfile(local, temporary)
            else:
                shutil.copyfile(local, temporary)
            os.replace(temporary, target)  # a reader sees the whole file or none
        else:  # an object store shows an object only once it is complete
            self.retrying(f"uploading {key}", lambda: self.fs.put_file(str(local), target))

    def remove(self, key: str) -> None:
        """Delete ``key`` if it is there (a run's outcome record written by an attempt that lost its
        lease)."""
        target = self._writable(key)

        def remove() -> None:
            if self.fs.exists(target):
                self.fs.rm(target)

        self.retrying(f"removing {key}", remove)
        (self.cache_dir / key).unlink(missing_ok=True)

    # -- reading ---------------------------------------------------------------------------------------
    def exists(self, key: str) -> bool:
        """Whether ``key`` is in the store (or already in the local read cache)."""
        if not self.is_local and (self.cache_dir / check_key(key)).is_file():
            return True
        return bool(self.fs.exists(self._path(key))) and self._unlinked(key)

    def local_path(self, key: str) -> Path | None:
        """A local file with the contents of ``key`` (downloaded once into the read cache), or None if
        absent."""
        if self.is_local:
            path = Path(self._path(key))
            return path if path.is_file() and self._unlinked(key) else None
        cached = self.cache_dir / check_key(key)
        if cached.is_file():
            return cached
        def download() -> Path | None:
            if not self.fs.exists(self._path(key)):
                return None
            cached.parent.mkdir(parents=True, exist_ok=True)
            temporary = cached.with_name(f"{cached.name}.part-{uuid.uuid4().hex}")
            self.fs.get_file(self._path(key), str(temporary))
            os.replace(temporary, cached)
            return cached

        try:
            return self.retrying(f"downloading {key}", download)
        except FileNotFoundError:
            return None

    def read_bytes(self, key: str) -> bytes | None:
        """The contents of ``key``, or None if the store does not have it."""
        path = self.local_path(key)
        return path.read_bytes() if path is not None else None

    def size(self, key: str) -> int | None:
        """Size in bytes of ``key`` (from the cache when there), or None if absent."""
        path = self.local_path(key)
        return path.stat().st_size if path is not None else None

    # -- checkpoints: the latest state of a run, so that a killed run resumes elsewhere ------------------
    def push_checkpoints(self, run_id: str, folder: Path) -> int:
        """Upload every file under ``folder`` to ``checkpoints/<run_id>/``; returns the number of files.

        Each file is written to a temporary name and renamed (folder store) or uploaded whole (object store),
        so a reader never sees half a checkpoint file. A file unchanged since the last push is skipped.
        """
        pushed = 0
        for path in sorted(p for p in folder.rglob("*") if p.is_file() and ".part-" not in p.name):
            target = self._writable(f"checkpoints/{run_id}/{path.relative_to(folder).as_posix()}")
            sha = sha256_of(path)
            if self._pushed.get(target) == sha:
                continue
            if self.is_local:
                Path(target).parent.mkdir(parents=True, exist_ok=True)
                temporary = f"{target}.part-{uuid.uuid4().hex}"
                shutil.copyfile(path, temporary)
                os.replace(temporary, target)
            else:
                self.retrying(f"uploading a checkpoint of run {run_id[:12]}",
                              lambda p=path, t=target: self.fs.put_file(str(p), t))  # type: ignore[misc]
            self._pushed[target] = sha
            pushed += 1
        return pushed

    def pull_checkpoints(self, run_id: str, folder: Path) -> int:
        """Download ``checkpoints/<run_id>/`` into ``folder``; returns the number of files (0: start
        fresh)."""
        return self.retrying(f"restoring the checkpoints of run {run_id[:12]}",
                             lambda: self._pull_checkpoints(run_id, folder))

    def _pull_checkpoints(self, run_id: str, folder: Path) -> int:
        prefix = self._path(f"checkpoints/{run_id}")
        if not self.fs.exists(prefix):
            return 0
        pulled = 0
        for remote in self.fs.find(prefix):
            relative = PurePosixPath(remote).relative_to(PurePosixPath(prefix))
            if ".part-" in relative.name:
                continue
            local = folder / relative
            local.parent.mkdir(parents=True, exist_ok=True)
            self.fs.get_file(remote, str(local))
            self._pushed[f"{prefix}/{relative}"] = sha256_of(local)
            pulled += 1
        return pulled

    def drop_checkpoints(self, run_id: str) -> None:
        """Remove a finished run's checkpoints (its evidence keeps what it needs)."""
        prefix = self._path(f"checkpoints/{run_id}")

        def drop() -> None:
            if self.fs.exists(prefix):
                self.fs.rm(prefix, recursive=True)

        self.retrying(f"dropping the checkpoints of run {run_id[:12]}", drop)


    # -- uploads a killed worker left half-done (S3 multipart uploads), swept by its peers --------------
    def pending_uploads(self) -> list[tuple[str, str, dt.datetime]]:
        """The multipart uploads under this store's root not completed nor aborted: (key, upload id, started);
        none on a store without them (a folder writes a temporary name, which its writer removes)."""
        if "s3" not in _protocols(self.fs):
            return []
        bucket, _, prefix = self.root.partition("/")
        found = self.retrying("listing unfinished uploads", lambda: self.fs.call_s3(
            "list_multipart_uploads", Bucket=bucket, Prefix=f"{prefix}/" if prefix else ""))
        return [(upload["Key"].removeprefix(f"{prefix}/") if prefix else upload["Key"], upload["UploadId"],
                 upload["Initiated"]) for upload in found.get("Uploads", [])]

    def abort_upload(self, key: str, upload_id: str) -> None:
        """Abort an unfinished multipart upload of ``key`` (its parts are freed; no object appears)."""
        bucket, _, _ = self.root.partition("/")
        self.retrying(
            f"aborting the upload of {key}",
            lambda: self.fs.call_s3(
                "abort_multipart_upload",
                Bucket=bucket,
                Key=self._path(key).partition("/")[2],
                UploadId=upload_id,
            ),
        )


def _protocols(fs: Any) -> tuple[str, ...]:
    protocol = fs.protocol
    return (protocol,) if isinstance(protocol, str) else tuple(protocol)

