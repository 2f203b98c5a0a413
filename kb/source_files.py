"""A note's source text file (``source_file:``): is it there and readable, and bringing it along on import.

A note names its source text relative to itself. ``kb validate`` warns and ``kb check`` fails when it is
missing or unreadable (grounding cannot run without it); ``kb import`` copies it beside the imported note,
never overwriting a different file and never reaching outside the folder the note lives in.
"""

from __future__ import annotations

import os
from pathlib import Path

from analyzers.files import atomic_write_bytes
from kb.notes import Note, NoteError


def source_problem(note: Note) -> str | None:
    """Why the note's ``source_file`` cannot be read (missing, a folder, unreadable, not text), or None."""
    name = note.meta.source_file
    if not name:
        return None
    path = note.path.parent / name
    try:
        path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return f"source_file {name!r} does not exist (looked for {path}): put the paper's text there or fix the field"
    except IsADirectoryError:
        return f"source_file {name!r} is a folder, expected a text file"
    except UnicodeDecodeError:
        return f"source_file {name!r} is not UTF-8 text: re-save it as UTF-8"
    except OSError as exc:
        return f"source_file {name!r} cannot be read: {exc.strerror or exc}"
    return None


def _inside(base: Path, rel: str, note_path: Path) -> Path:
    """``base / rel``, refusing a relative path that leaves ``base`` (a note may not widen what kb writes)."""
    target = (base / rel).resolve()
    if Path(rel).is_absolute() or not target.is_relative_to(base.resolve()):
        raise NoteError(note_path, f"source_file {rel!r} points outside the note's folder; keep the source text "
                        "beside the note (e.g. 'sources/<name>.txt')", field="source_file")
    return target


def plan_source_copy(src_note: Note, papers_dir: Path) -> tuple[Path, Path] | None:
    """(from, to) for copying an imported note's source text, or None when it has none or it is already there.

    ``NoteError`` when the source is missing, leaves the note's folder, or a different file already
    has its name in the notes folder (nothing may be overwritten).
    """
    name = src_note.meta.source_file
    if not name:
        return None
    origin = _inside(src_note.path.parent, name, src_note.path)
    problem = source_problem(src_note)
    if problem is not None:
        raise NoteError(src_note.path, problem + "; import the note once its source text is readable",
                        field="source_file")
    target = _inside(papers_dir, name, src_note.path)
    if target.exists():
        if target.read_bytes() == origin.read_bytes():
            return None
        raise NoteError(target, f"a different file already has the name of the note's source_file {name!r}; "
                        "rename one of them (and the note's source_file) and import again", field="source_file")
    return origin, target


def copy_source(origin: Path, target: Path) -> None:
    """Copy the source text to ``target`` atomically, refusing to replace a file that appeared meanwhile."""
    target.parent.mkdir(parents=True, exist_ok=True)
    data = origin.read_bytes()
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)  # reserve the name: never overwrite
    os.close(fd)
    atomic_write_bytes(target, data)
