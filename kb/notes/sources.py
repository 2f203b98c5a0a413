"""Every path a note names, read safely: the vault (the notes folder) is the boundary.

A note names its source text (``source_file:``) relative to itself. A note is shared data (git, a synced
folder, a team server), so whoever writes one must not be able to make kb read, show or grade anything
else on the machine. :func:`read_source` is the one way kb reads such a path, for ``kb validate``,
``kb index``, ``kb check``, ``kb import``, the drafter and the app alike:

* the path is resolved relative to the note with symlinks followed, and must land inside the vault: the
  notes folder the KB works on, or, for a note outside it (``kb validate FILE``, ``kb import FILE``), the
  note's own folder;
* only a regular file is read (a FIFO, device, socket or folder is refused before it is opened, and the
  open never blocks), and at most ``max_source_bytes`` of it (a setting);
* a NUL byte, a name too long for the file system, a symlink loop or a file kb may not read is a
  message, never a traceback.

A missing file inside the vault is a warning (``kb validate``) or a failure (``kb check``); anything
refused makes the note invalid, with its ``source_file`` field and line. ``kb import`` also copies the
source text beside the imported note, never overwriting a different file.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from analyzers.files import atomic_write_bytes
from kb.notes.files import Note, NoteError, field_line
from kb.settings import Settings

DEFAULT_MAX_SOURCE_BYTES: int = Settings.model_fields["max_source_bytes"].default  # one home: the settings
_NOT_UTF8 = "is not UTF-8 text: re-save it as UTF-8"
_WHERE = ("keep the paper's text inside the notes folder (e.g. 'sources/<name>.txt') and point source_file "
          "there")


class SourceError(Exception):
    """A path a note names cannot be read; ``missing`` when it is merely absent (inside the vault)."""

    def __init__(self, reason: str, *, missing: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.missing = missing


class SourceStatus(StrEnum):
    """What reading a note's ``source_file`` gave."""

    none = "none"  # the note names no source file
    ok = "ok"
    missing = "missing"  # inside the vault, not there (yet): a warning, the note stays valid
    not_text = "not_text"  # read, but not UTF-8: read with replacement characters, a warning
    refused = "refused"  # outside the vault, not a regular file, too large, unreadable: the note is invalid


@dataclass(frozen=True)
class SourceText:
    """A note's source text, or why there is none; ``path`` is the resolved file inside the vault, if any."""

    status: SourceStatus
    name: str | None = None
    text: str | None = None
    path: Path | None = None
    reason: str | None = None

    @property
    def problem(self) -> str | None:
        """One line naming the field and what to do; None when the text was read cleanly or none is named."""
        return None if self.reason is None else f"source_file {self.name!r} {self.reason}"

    def error(self, note: Note) -> NoteError:
        """The refusal as the note's error, with the ``source_file`` field and its line."""
        return NoteError(note.path, f"{self.name!r} {self.reason}", line=field_line(note, "source_file"),
                         field="source_file")


def vault_of(note_path: Path, papers_dir: Path | None) -> Path:
    """The folder a note's paths must stay in: the notes folder when the note is in it, else its own."""
    if papers_dir is None:
        return Path(note_path).parent
    inside = Path(os.path.abspath(note_path)).is_relative_to(os.path.abspath(papers_dir))
    return Path(papers_dir) if inside else Path(note_path).parent


def resolve_in_vault(base: Path, name: str, vault: Path) -> Path:
    """``base / name`` with symlinks followed; ``SourceError`` unless it lands inside ``vault``.

    The file need not exist (a missing one is reported when it is read); a symlink loop resolves to the
    looping link, which reading then refuses.
    """
    if "\x00" in name:
        raise SourceError("contains a NUL byte, which no file name can: fix the field")
    try:
        target = Path(os.path.realpath(Path(base) / name))
        root = Path(os.path.realpath(vault))
    except (OSError, ValueError) as exc:
        raise SourceError(f"cannot be resolved ({_why(exc)}): fix the field") from None
    if not target.is_relative_to(root):
        raise SourceError(f"resolves outside the notes folder {root} (symlinks followed), and a note may "
                          f"name only files inside it: {_WHERE}")
    return target


def read_bounded(path: Path, max_bytes: int) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``; ``SourceError`` (one line) for anything else.

    Checked with ``stat`` before opening, opened non-blocking (a FIFO swapped in meanwhile cannot hang
    the reader) and re-checked on the open file; at most ``max_bytes + 1`` bytes are read, so a file
    that lies about its size (``/proc``, a growing file) cannot exhaust memory either.
    """
    try:
        before = os.stat(path)
        if not stat.S_ISREG(before.st_mode):
            raise SourceError(f"is {_kind(before.st_mode)}, not a regular file: kb reads only regular text "
                              "files; save the paper's text as a plain file")
        if before.st_size > max_bytes:
            raise SourceError(_too_large(max_bytes, before.st_size))
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_NOCTTY | os.O_CLOEXEC)
    except SourceError:
        raise
    except (OSError, ValueError) as exc:
        missing = isinstance(exc, OSError) and exc.errno in (errno.ENOENT, errno.ENOTDIR)
        reason = (f"does not exist (looked for {path}): put the paper's text there or fix the field"
                  if missing else f"cannot be read ({_why(exc)}): {_fix(exc)}")
        raise SourceError(reason, missing=missing) from None
    try:
        now = os.fstat(fd)
        if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino):
            raise SourceError("was replaced while kb read it: check the file and run the command again")
        chunks: list[bytes] = []
        left = max_bytes + 1  # one byte more than allowed tells a file over the cap
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        raise SourceError(f"cannot be read ({_why(exc)}): {_fix(exc)}") from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > max_bytes:
        raise SourceError(_too_large(max_bytes))
    return data


def read_source(note: Note, vault: Path | None = None, *,
                max_bytes: int = DEFAULT_MAX_SOURCE_BYTES) -> SourceText:
    """The note's ``source_file`` text, read inside ``vault`` (default: the note's folder), capped."""
    name = note.meta.source_file
    if not name:
        return SourceText(SourceStatus.none)
    path: Path | None = None
    try:
        path = resolve_in_vault(note.path.parent, name, vault if vault is not None else note.path.parent)
        data = read_bounded(path, max_bytes)
    except SourceError as exc:
        status = SourceStatus.missing if exc.missing else SourceStatus.refused
        return SourceText(status, name, path=path if exc.missing else None, reason=exc.reason)
    try:
        return SourceText(SourceStatus.ok, name, data.decode("utf-8"), path)
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors="replace")
        return SourceText(SourceStatus.not_text, name, text, path, _NOT_UTF8)


def read_text_file(path: Path, *, max_bytes: int = DEFAULT_MAX_SOURCE_BYTES) -> str:
    """A text file the person running kb names (``--source``, a file to draft from): bounded, regular only.

    No vault applies (the operator chose the path); undecodable bytes become replacement characters.
    """
    try:
        real = Path(os.path.realpath(path))  # the operator's own symlinks are fine; the read refuses links
    except (OSError, ValueError) as exc:
        raise SourceError(f"cannot be resolved ({_why(exc)})") from None
    return read_bounded(real, max_bytes).decode("utf-8", errors="replace")


def _kind(mode: int) -> str:
    kinds = [(stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a device"),
             (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket")]
    return next((what for test, what in kinds if test(mode)), "a special file")


def _too_large(max_bytes: int, size: int | None = None) -> str:
    has = f"is {size} bytes" if size is not None else "is larger than that"
    return (f"{has}, over the limit of {max_bytes} bytes (setting max_source_bytes, KB_MAX_SOURCE_BYTES): "
            "keep the paper's text only, or raise the limit")


def _why(exc: BaseException) -> str:
    if isinstance(exc, ValueError):
        return str(exc)
    assert isinstance(exc, OSError)
    names = {errno.ELOOP: "a symlink loop", errno.ENAMETOOLONG: "the name is too long for the file system",
             errno.EACCES: "permission denied", errno.EPERM: "permission denied"}
    return names.get(exc.errno or 0, exc.strerror or str(exc))


def _fix(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.errno in (errno.EACCES, errno.EPERM):
        return "make the file readable by the user kb runs as"
    if isinstance(exc, OSError) and exc.errno == errno.ELOOP:
        return "point the symlink at the text file itself"
    return "fix the field"


# -- kb import ----------------------------------------------------------------------------------------------

def plan_source_copy(src_note: Note, papers_dir: Path, *,
                     max_bytes: int = DEFAULT_MAX_SOURCE_BYTES) -> tuple[bytes, Path] | None:
    """(bytes, destination) to copy an imported note's source text, or None when it has none or it is there.

    The source is read inside the imported note's folder; its destination is the same relative path
    inside the notes folder. ``NoteError`` when the source cannot be read, or a different file (or
    anything but a regular file) already has its name in the notes folder (nothing may be overwritten).
    """
    name = src_note.meta.source_file
    if not name:
        return None
    line = field_line(src_note, "source_file")
    if Path(name).is_absolute():
        raise NoteError(src_note.path, f"{name!r} is an absolute path; name the source text relative to the "
                        "note (e.g. 'sources/<name>.txt') so it can come along", field="source_file",
                        line=line)
    try:
        data = read_bounded(resolve_in_vault(src_note.path.parent, name, src_note.path.parent), max_bytes)
        data.decode("utf-8")
    except (SourceError, UnicodeDecodeError) as exc:
        reason = exc.reason if isinstance(exc, SourceError) else _NOT_UTF8
        raise NoteError(src_note.path, f"{name!r} {reason}; import the note once its source text is "
                        "readable", field="source_file", line=line) from None
    try:
        target = resolve_in_vault(papers_dir, name, papers_dir)
        existing = read_bounded(target, max_bytes) if os.path.lexists(target) else None
    except SourceError as exc:
        raise NoteError(papers_dir / name, f"{name!r} in the notes folder {exc.reason}",
                        field="source_file") from None
    if existing is None:
        return data, target
    if existing == data:
        return None
    raise NoteError(target, f"a different file already has the name of the note's source_file {name!r}; "
                    "rename one of them (and the note's source_file) and import again", field="source_file")


def copy_source(data: bytes, target: Path) -> None:
    """Write the source text to ``target`` atomically, refusing to replace a file that appeared meanwhile."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)  # reserve the name: never overwrite
    os.close(fd)
    atomic_write_bytes(target, data)
