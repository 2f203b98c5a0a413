"""The ``kb`` command line: a thin typer + rich shell over ``kb.core.KnowledgeBase``.

Every listing command takes ``--json`` and then prints a JSON array of objects, each with an ``id``
(the note id: its file name without extension). Errors go to stderr with the file, line or field and
a hint, and the exit code is non-zero. The commands live by topic in ``notes``, ``runs``, ``analyze``
(``kb run``, any analyzer once), ``agents`` and ``serve``; analyzer packages add their own
(``kb probe``, ``kb langevin``) through the registry (``plugins``). A command's module is imported when the
command runs, not before (``catalog``: ``kb --help`` imports none of them).
"""

import os
import sys
from pathlib import Path
from typing import Any

# Libraries' own progress bars (transformers' "Writing model shards", huggingface_hub downloads) would
# interleave with kb's bars, one line per shard: kb shows progress itself. Set before they are imported (here:
# every kb.cli module is imported after its package).
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

from kb.cli.catalog import app  # after the environment above

__all__ = ["app", "main"]


def main() -> None:
    """The ``kb`` command: the typer app, with the failures of the machine around it as one line each.

    A damaged index, a full disk or a read-only KB home is not a bug in kb: say what happened and what
    to do, exit non-zero, no traceback.
    """
    try:
        app(standalone_mode=True)
    except Exception as exc:  # told apart in _machine_failure, whose modules load only when one happens
        _machine_failure(exc)
        raise


def _machine_failure(exc: Exception) -> None:
    """Exit with one line for a failure of the machine (see ``main``); return for anything else (a bug)."""
    import errno
    import json
    import sqlite3

    from pydantic import ValidationError
    from sqlalchemy.exc import OperationalError

    from kb.cli.common import err_console, esc
    from kb.core import IndexDamaged, IndexUnavailable
    from kb.disk import DiskFull, full_path, is_disk_full
    from kb.index.migrate import IndexTooNew
    from kb.index.search import SearchIndexDamaged

    if isinstance(exc, IndexDamaged | IndexTooNew | SearchIndexDamaged | IndexUnavailable):
        err_console.print(f"[bold red]error[/]: {esc(exc)}", soft_wrap=True)
        raise SystemExit(3) from None
    if isinstance(exc, DiskFull | OSError | OperationalError | sqlite3.OperationalError):
        text = str(getattr(exc, "orig", exc))
        if is_disk_full(exc):  # one line: where, and how much room is left
            full = exc if isinstance(exc, DiskFull) else DiskFull(full_path(exc, _home_in_use()))
            err_console.print(f"[bold red]error[/]: {esc(full)}", soft_wrap=True)
            raise SystemExit(4) from None
        if (
            isinstance(exc, OSError)
            and exc.errno in (errno.EROFS, errno.EACCES)
            or "readonly database" in text
        ):
            err_console.print(
                f"[bold red]error[/]: cannot write ({esc(text.splitlines()[0])}): this command writes "
                "to the KB home, which is read-only here; read-only commands (list, show, search) "
                "still work",
                soft_wrap=True,
            )
            raise SystemExit(5) from None
        if "no such column" in text or "no such table" in text:  # a table or column of the index was dropped
            _index_unreadable(err_console, esc, text)
        return
    # a row of the index no longer holds what kb wrote
    if isinstance(exc, ValidationError | json.JSONDecodeError):
        _index_unreadable(err_console, esc, str(exc))


def _index_unreadable(console: Any, esc: Any, reason: str) -> None:
    """One line for an index whose tables or rows kb cannot read back, and the way out; exit 3."""
    first = (reason.strip().splitlines() or ["unreadable"])[0]
    console.print(
        f"[bold red]error[/]: the index cannot be read ({esc(first)}): run `kb index --rebuild` to "
        "rebuild it from the notes and re-attach the evidence stored under the KB home (nothing is lost)",
        soft_wrap=True,
    )
    raise SystemExit(3) from None


def _home_in_use() -> Path:
    """The KB home this command works on (``--home``, else the settings'), for a message that must name it."""
    from kb.settings import Settings

    arguments = sys.argv[1:]
    for n, argument in enumerate(arguments):
        if argument.startswith("--home="):
            return Path(argument.split("=", 1)[1]).resolve()
        if argument == "--home" and n + 1 < len(arguments):
            return Path(arguments[n + 1]).resolve()
    return Settings().home.resolve()

