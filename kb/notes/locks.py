"""One lock per note file, whoever writes it: every writer of a note (``kb set``, accepting drafted claims
from the CLI, the app or the agents, the app's edit form) holds it while it re-reads the note and writes
its change, so concurrent edits apply one after another and none is lost.

Where the lock lives, and why there:

- Not under the KB home. Two KB homes (a CLI started in one folder, the app in another: the default home
  is ``./.kb`` of the current directory) would each lock a file of their own and overwrite each other.
- Not on the note file itself. Every write replaces the note by an atomic rename, so a lock on the note's
  inode would protect the old inode only, and a waiting writer would then hold a lock nobody else sees.
- In a hidden folder ``.kb-locks/`` in the note's real folder (the folder holding the file once symlinks
  are followed), one lock file per note, named by a hash of the note's file name. Every process that can
  write the note can create it there (an atomic write puts its temporary file in that same folder), and
  every path to the note, from any KB home, a symlinked vault or another mount of a shared folder, finds
  the same folder and the same name. The hash keeps lock names short and free of odd characters.
- Never picked up as a note: the folder is hidden (``find_notes`` skips hidden folders) and holds no
  ``.md``. It carries its own ``.gitignore`` (``*``), so git ignores it without a change to the user's
  files; a synced vault syncs a few empty files.
- Lock files are never deleted: deleting one while another process waits on it would let two writers in.

The lock is ``fcntl.flock`` on that file: per open file, so it also excludes two threads of one process
(the app's sessions), and the kernel drops it when a writer dies. A writer waits up to a timeout (the
``note_lock_timeout`` setting) and then gives up with one line saying so; nothing is written then.

Creating a note needs no note lock (``analyzers.files.write_new`` creates it only if its name is free),
but checking that its ``paper_id`` is free and creating it is one step for the whole folder:
``creation_lock`` is that folder's lock, so two KB homes adding one paper at once make one note.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path

from kb.notes.files import NoteError

LOCK_DIR = ".kb-locks"
_POLL_SECONDS = 0.02  # how often a waiting writer tries again: short next to an edit (tens of milliseconds)


def lock_path(note_path: Path) -> Path:
    """The lock file of the note at ``note_path`` (which need not exist yet): the same for every path to
    it."""
    real = Path(os.path.realpath(note_path))
    digest = hashlib.sha256(os.fsencode(real.name)).hexdigest()[:32]
    return real.parent / LOCK_DIR / f"{digest}.lock"


def _refuse(note_path: Path, what: Path, reason: str) -> NoteError:
    return NoteError(note_path, f"refusing the note's lock {what}: {reason}; kb creates its lock folder and "
                     "lock files itself, inside the note's folder: remove it (a shared vault may have "
                     "carried it) and try again; nothing was written")


def _open_no_follow(name: str, flags: int, dir_fd: int, mode: int = 0o666) -> int:
    """``os.open`` of ``name`` in the folder ``dir_fd`` that never follows a link (a dangling one included:
    ``O_NOFOLLOW`` refuses it rather than creating its target) and never blocks on a FIFO."""
    return os.open(name, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, mode, dir_fd=dir_fd)


def _lock_folder(note_path: Path, lock: Path) -> int:
    """The lock folder opened as a directory (created if absent), never through a link: a ``.kb-locks``
    that is a symlink, a device or a FIFO (a cloned or synced vault can carry any of them) is refused, so
    kb never creates a file outside the note's folder."""
    parent = os.open(lock.parent.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        with contextlib.suppress(FileExistsError):
            os.mkdir(LOCK_DIR, 0o777, dir_fd=parent)
        try:
            folder = _open_no_follow(LOCK_DIR, os.O_RDONLY | os.O_DIRECTORY, parent)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                kind = _kind(os.lstat(LOCK_DIR, dir_fd=parent).st_mode)
                raise _refuse(note_path, lock.parent, f"it is {kind}, not a folder") from None
            raise
    finally:
        os.close(parent)
    if not stat.S_ISDIR(os.fstat(folder).st_mode):  # pragma: no cover - O_DIRECTORY already refuses
        os.close(folder)
        raise _refuse(note_path, lock.parent, "it is not a folder")
    return folder


def _kind(mode: int) -> str:
    """What a file that should have been a plain file or folder is, in words."""
    kinds = [(stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a device"),
             (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder")]
    return next((name for test, name in kinds if test(mode)), "not a plain file")


def _open_in_folder(note_path: Path, folder: int, name: str, *, exclusive: bool = False) -> int:
    """A plain file in the lock folder, created if absent, opened without following links; anything else
    lying under its name (a link, dangling or not, a device, a FIFO, a folder) is refused in one line."""
    flags = os.O_RDWR | os.O_CREAT | (os.O_EXCL if exclusive else 0)
    try:
        fd = _open_no_follow(name, flags, folder)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO):
            kind = _kind(os.lstat(name, dir_fd=folder).st_mode)
            raise _refuse(note_path, Path(LOCK_DIR) / name, f"it is {kind}, not a plain file") from None
        raise
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):  # a device or FIFO opened before it could be refused: let it go unused
        os.close(fd)
        raise _refuse(note_path, Path(LOCK_DIR) / name, f"it is {_kind(mode)}, not a plain file")
    return fd


def _open_lock_file(note_path: Path, lock: Path) -> int:
    try:
        folder = _lock_folder(note_path, lock)
        try:
            try:  # the folder's .gitignore, created once; a racing writer's copy is the same
                ignore = _open_in_folder(note_path, folder, ".gitignore", exclusive=True)
            except FileExistsError:
                pass
            else:
                try:
                    os.write(ignore, b"# kb's note locks (kb/notes/locks.py): never commit them\n*\n")
                finally:
                    os.close(ignore)
            return _open_in_folder(note_path, folder, lock.name)
        finally:
            os.close(folder)
    except NoteError:
        raise
    except OSError as exc:
        raise NoteError(
            note_path,
            f"cannot take the note's lock {lock}: {exc.strerror or exc}; the note's folder "
            "must be writable to edit the note; nothing was written",
        ) from None


@contextlib.contextmanager
def note_lock(note_path: Path, *, timeout: float) -> Iterator[Path]:
    """Hold the note's lock (waiting up to ``timeout`` seconds for another writer); yields the lock file.

    ``NoteError`` naming the note when the lock cannot be taken in time; the caller has written nothing.
    """
    lock = lock_path(note_path)
    fd = _open_lock_file(note_path, lock)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise NoteError(note_path, f"cannot lock {lock}: {exc.strerror or exc}; nothing was "
                                    "written") from None
            if time.monotonic() >= deadline:
                raise NoteError(
                    note_path,
                    f"another kb process has been writing this note for over {timeout:g} s "
                    f"(it holds {lock}); try again when it has finished (KB_NOTE_LOCK_TIMEOUT "
                    "sets the wait); nothing was written",
                )
            time.sleep(_POLL_SECONDS)
        try:
            yield lock
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def creation_lock(papers_dir: Path, *, timeout: float) -> contextlib.AbstractContextManager[Path]:
    """The notes folder's lock for creating notes (a ``paper_id`` checked free, then its note written).

    The same mechanism as a note's lock, keyed by a name no note can have (``.new-note`` is hidden, and
    hidden files are never notes), so every KB home writing into the folder takes the same one.
    """
    return note_lock(papers_dir / ".new-note", timeout=timeout)
