"""Writing files atomically and naming new things uniquely: the one home of both rules for the whole tree.

It lives beside the analyzers because they import nothing from ``kb``; ``kb`` (notes, sources, the worker's
pidfile) uses the same functions.

- ``atomic_write_bytes`` / ``atomic_write_text`` / ``atomic_write_json``: a reader sees the old file or the
  new one, never half of one (a temporary file in the same folder, fsynced, then ``os.replace``); an existing
  file keeps its mode and, where we may set it, its owner; a symlink is written at its target.
- ``replace_unmoved``: the same, but only if the path still holds the very file (inode) an edit was read from.
- ``write_new``: create a file only if its name is free, atomically (a crash never leaves a half file).
- ``unique_names`` / ``unique_name``: ``base``, ``base-2``, ``base-3``, ... (claim ids, file names, run
  slugs).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import math
import os
import shutil
import stat
import tempfile
from collections.abc import Container, Iterator
from pathlib import Path
from typing import Any


def _write_temp_beside(path: Path, data: bytes) -> str:
    """Write ``data`` fully (fsynced) to a temp file in ``path``'s folder, ready to be renamed or linked."""
    # ".part-" in the name: the artifact store never uploads a checkpoint file that is still being written
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.part-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


def new_file_mode() -> int:
    """The mode a new file gets under the current umask (mkstemp's 0600 would hide it from the group)."""
    return 0o666 & ~_umask()


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: temp file in the same folder, fsync, ``os.replace``.

    A symlinked file is written at its target (the link stays a link); the file keeps its mode and, where
    we may set it, its owner: a note in a shared or synced vault stays readable by the others.
    """
    path = Path(os.path.realpath(path))
    tmp = _write_temp_beside(path, data)
    try:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            os.chmod(tmp, new_file_mode())
        else:
            os.chmod(tmp, stat.S_IMODE(st.st_mode))
            if os.geteuid() == 0:
                os.chown(tmp, st.st_uid, st.st_gid)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


_LIBC = ctypes.CDLL(None, use_errno=True)
_RENAMEAT2 = getattr(_LIBC, "renameat2", None)
_AT_FDCWD, _RENAME_EXCHANGE = -100, 2


def _exchange(first: str, second: str) -> bool:
    """Swap two names atomically (``renameat2(RENAME_EXCHANGE)``); False where the system or the file system
    cannot; ``FileNotFoundError`` when either name is gone."""
    if _RENAMEAT2 is None:
        return False
    if _RENAMEAT2(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), second)


def replace_unmoved(path: Path, data: bytes, inode: tuple[int, int]) -> bool:
    """Write ``data`` at ``path`` atomically if ``path`` still is the file ``inode`` (``(st_dev, st_ino)``),
    else write nothing and return False: the file was renamed, moved, removed or replaced since it was read.

    The new file is swapped in with the old in one step (``RENAME_EXCHANGE``), and the file swapped out is
    checked to be the one read; if it is not, the swap is undone. A rename racing the write therefore either
    carries the new bytes along or makes the write refuse: it never leaves them under the old name beside
    the moved original. Where the swap is not supported, the inode is checked just before ``os.replace``.
    """
    path = Path(os.path.realpath(path))
    tmp = _write_temp_beside(path, data)
    try:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return False
        if (st.st_dev, st.st_ino) != tuple(inode):
            return False
        os.chmod(tmp, stat.S_IMODE(st.st_mode))
        if os.geteuid() == 0:
            os.chown(tmp, st.st_uid, st.st_gid)
        try:
            swapped = _exchange(tmp, str(path))
        except FileNotFoundError:
            return False
        if not swapped:
            os.replace(tmp, path)
            return True
        out = os.stat(tmp)  # the file swapped out of the note's name
        if (out.st_dev, out.st_ino) != tuple(inode):
            with contextlib.suppress(OSError):
                _exchange(tmp, str(path))  # put back what another program wrote meanwhile
            return False
        return True
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def atomic_write_text(path: Path, text: str) -> None:
    """``atomic_write_bytes`` of UTF-8 text."""
    atomic_write_bytes(path, text.encode("utf-8"))


def json_safe(value: Any) -> Any:
    """NaN and infinities -> None, recursively: strict JSON (``allow_nan=False``) has neither."""
    if isinstance(value, dict):
        return {key: json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def atomic_write_json(path: Path, payload: Any) -> None:
    """``payload`` as indented JSON (values JSON cannot hold are written as text), atomically."""
    atomic_write_text(path, json.dumps(payload, indent=2, default=str, ensure_ascii=False) + "\n")


def write_new(path: Path, data: bytes) -> bool:
    """Create ``path`` with ``data`` unless it exists; False when the name is taken.

    A hard link of a fully written temp file is atomic and fails on an existing name, so a reader never
    sees a half-written file; where links are not supported the name is reserved with O_EXCL instead.
    """
    tmp = _write_temp_beside(path, data)
    os.chmod(tmp, new_file_mode())
    try:
        try:
            os.link(tmp, path)
            return True
        except FileExistsError:
            return False
        except OSError:
            try:
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
            except FileExistsError:
                return False
            os.replace(tmp, path)
            return True
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def unique_names(base: str, suffix: str = "", *, max_length: int | None = None) -> Iterator[str]:
    """``base + suffix``, then ``base-2 + suffix``, ``base-3 + suffix``, ... (``base`` cut to ``max_length``
    with its number, so the number is never the part that is cut)."""
    n = 1
    while True:
        number = "" if n == 1 else f"-{n}"
        stem = base if max_length is None else base[: max(1, max_length - len(number))]
        yield f"{stem}{number}{suffix}"
        n += 1


def unique_name(base: str, taken: Container[str], *, max_length: int | None = None) -> str:
    """The first of ``unique_names(base)`` not in ``taken``."""
    return next(name for name in unique_names(base, max_length=max_length) if name not in taken)


def write_unique(folder: Path, stem: str, suffix: str, data: bytes) -> Path:
    """Write ``data`` under the first free name of ``unique_names(stem, suffix)`` in ``folder``; never
    overwrites."""
    folder.mkdir(parents=True, exist_ok=True)
    return next(folder / name for name in unique_names(stem, suffix) if write_new(folder / name, data))


def staging_folder(target: Path, label: str = "partial") -> Path:
    """A new empty folder beside ``target`` (on its file system, so one rename can put it in ``target``'s
    place), with the mode a new folder gets under the umask (mkdtemp's 0700 would hide it from the group)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.{label}-"))
    os.chmod(staging, 0o777 & ~_umask())
    return staging


def swap_in_folder(staging: Path, target: Path) -> None:
    """Put the finished folder ``staging`` in ``target``'s place: a reader sees the old folder or the new one,
    never half of either (the old one is renamed aside first, then removed). The one folder swap of kb."""
    backup = None
    if target.exists():
        backup = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.old-"))
        os.replace(target, backup / "old")
    os.replace(staging, target)
    if backup is not None:
        shutil.rmtree(backup, ignore_errors=True)


@contextlib.contextmanager
def atomic_folder(target: Path, label: str = "partial") -> Iterator[Path]:
    """A staging folder beside ``target`` that replaces it only if the block succeeds (removed if it
    fails)."""
    staging = staging_folder(target, label)
    try:
        yield staging
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    swap_in_folder(staging, target)
