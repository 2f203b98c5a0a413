"""A full disk is not damage: tell ENOSPC (and SQLite's "database or disk is full") apart from everything
else, and say it in one line, naming where and how much room is left.

Every surface that can hit a full disk (the index, the artifact store, a run's staging folder) asks
``is_disk_full`` and words it with ``disk_full_message``, so a full disk never reads as a damaged index.
"""

from __future__ import annotations

import errno
import shutil
from pathlib import Path

_CODES = frozenset({errno.ENOSPC, errno.EDQUOT})
_SQLITE_FULL = "database or disk is full"


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc``, the driver error it wraps (``orig``) and its causes, each once."""
    seen: list[BaseException] = []
    todo: list[BaseException | None] = [exc]
    while todo:
        current = todo.pop()
        if current is None or any(current is s for s in seen):
            continue
        seen.append(current)
        todo += [getattr(current, "orig", None), current.__cause__, current.__context__]
    return seen


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` (or what it wraps) says the disk or the quota is full."""
    return any(
        (isinstance(e, OSError) and e.errno in _CODES) or _SQLITE_FULL in str(e) or isinstance(e, DiskFull)
        for e in _chain(exc)
    )


def full_path(exc: BaseException, default: Path) -> Path:
    """The file the failed write named (an ``OSError``'s filename), else ``default``."""
    for e in _chain(exc):
        if isinstance(e, DiskFull):
            return e.path
        if isinstance(e, OSError) and e.errno in _CODES and e.filename:
            return Path(e.filename)
    return default


def free_mb(path: Path) -> float:
    """Megabytes free on the file system holding ``path`` (or its nearest existing parent)."""
    probe = Path(path).resolve()
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        return shutil.disk_usage(probe).free / 1e6
    except OSError:
        return 0.0


def disk_full_message(path: Path) -> str:
    """'disk full at PATH (N MB free)': what every surface says about a full disk."""
    return f"disk full at {path} ({free_mb(path):.1f} MB free)"


class DiskFull(Exception):
    """A write failed because the disk (or the quota) holding ``path`` is full; nothing is damaged."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        super().__init__(
            f"{disk_full_message(self.path)}: free some space (or move the KB home with --home) and "
            "run the command again; nothing already written was lost or damaged"
        )
