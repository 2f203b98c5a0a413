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
import time
from collections.abc import Iterator
from pathlib import Path

from analyzers.files import write_new
from kb.notes.files import NoteError

LOCK_DIR = ".kb-locks"
_POLL_SECONDS = 0.02  # how often a waiting writer tries again: short next to an edit (tens of milliseconds)


def lock_path(note_path: Path) -> Path:
    """The lock file of the note at ``note_path`` (which need not exist yet): the same for every path to it."""
    real = Path(os.path.realpath(note_path))
    digest = hashlib.sha256(os.fsencode(real.name)).hexdigest()[:32]
    return real.parent / LOCK_DIR / f"{digest}.lock"


def _open_lock_file(note_path: Path, lock: Path) -> int:
    try:
        lock.parent.mkdir(exist_ok=True)
        ignore = lock.parent / ".gitignore"
        if not ignore.exists():  # created once, atomically: a racing writer's copy is the same
            write_new(ignore, b"# kb's note locks (kb/notes/locks.py): never commit them\n*\n")
        return os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    except OSError as exc:
        raise NoteError(note_path, f"cannot take the note's lock {lock}: {exc.strerror or exc}; the note's folder "
                        "must be writable to edit the note; nothing was written") from None


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
                raise NoteError(note_path, f"another kb process has been writing this note for over {timeout:g} s "
                                f"(it holds {lock}); try again when it has finished (KB_NOTE_LOCK_TIMEOUT "
                                "sets the wait); nothing was written")
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
