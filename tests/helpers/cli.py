"""The one way the tests run the ``kb`` command line, in this process or in its own.

``run_kb`` runs it here, through typer's ``CliRunner`` around ``kb.cli.main`` (the app with the one-line
errors and exit codes the ``kb`` command gives for a damaged index, a full disk or a read-only home): a
command takes milliseconds instead of a Python start-up (~1 s idle, ~10 s on a loaded 2-core machine).
Nothing carries over from one call to the next that a new process would not rebuild: each command builds
its settings (``kb.cli.common.make_kb``) from its options and the environment at the call; the consoles
write to whatever ``sys.stdout``/``sys.stderr`` are then; the analyzer registry is the one every process
the tests start loads (``KB_ANALYZER_MODULES`` names ``tests.noop_analyzer``, set in ``conftest.py``).
One thing is decided once, at import: rich's consoles pick their colours from the stdout of that moment,
pytest's capture (no colours, as in a pipe); ``pytest -s`` in a terminal would colour what ``run_kb`` returns.

``run_kb_process`` (and ``kb_command`` for ``Popen``) starts ``python -m kb.cli``, for tests where the
process boundary is the point: concurrency, signals, locks held by another process, kills, the app server,
a full disk, raw argv bytes, environment variables read at import (``KB_ANALYZER_MODULES``), a command run
under another program (``setpriv``).
"""

from __future__ import annotations

import functools
import gc
import subprocess
import sys
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from unittest import mock

import typer.main
from typer.testing import CliRunner

KB = (sys.executable, "-m", "kb.cli")  # the ``kb`` command, as the background worker is started too


def where(papers: Path | None, home: Path | None) -> list[str]:
    """The ``--papers``/``--home`` options for these folders (None: left to the environment)."""
    return [*(["--papers", str(papers)] if papers is not None else []),
            *(["--home", str(home)] if home is not None else [])]


def kb_command(papers: Path | None, home: Path | None, *args: str) -> list[str]:
    """The argv of ``kb ARGS --papers PAPERS --home HOME`` in its own process (for ``subprocess.Popen``)."""
    return [*KB, *args, *where(papers, home)]


def run_kb(papers: Path | None, home: Path | None, *args: str, env: Mapping[str, str | None] | None = None,
           stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """``kb ARGS --papers PAPERS --home HOME`` in this process, as the ``kb`` command runs it.

    Returns what ``subprocess.run(..., capture_output=True, text=True)`` would: the exit code, stdout and
    stderr apart. ``env`` changes the environment for this call only (None unsets a variable); ``stdin`` is
    stdin. An exception that escapes ``main`` ends the call as it ends the process: its traceback on stderr,
    exit code 1.
    """
    import kb.cli

    # kb's rich consoles are built when kb.cli.common is first imported, and rich fixes the COLUMNS it sees
    # then for good: build them here, outside this call's environment, or one call's width would stay.
    import kb.cli.common

    argv = [*args, *where(papers, home)]
    with CliRunner().isolation(input=stdin, env=env) as (out, err, _), \
            mock.patch.object(kb.cli, "app", _click_app()), mock.patch.object(sys, "argv", ["kb", *argv]):
        try:
            kb.cli.main()
            code = 0
        except SystemExit as exc:
            code = _exit_code(exc.code)
        except Exception:  # noqa: BLE001 - what Python does with an uncaught exception, so tests see the same
            traceback.print_exc()
            code = 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            # What the command's exit would close: its database engines sit in reference cycles, and an idle
            # connection left open would outlive the command (a test then damages or moves the file under it).
            gc.collect()
        stdout, stderr = out.getvalue().decode(), err.getvalue().decode(errors="backslashreplace")
    return subprocess.CompletedProcess(["kb", *argv], code, stdout, stderr)


@functools.cache
def _click_app_for(commands: int, groups: int) -> Callable[..., Any]:
    from kb.cli import app

    # Everything alive now (the imported modules: kb, torch, typer) is left out of later collections, so the
    # collection after each command (above) costs milliseconds instead of a second. The price: a cycle alive
    # now that dies later (the running test's own objects) is never collected in this pytest process.
    gc.collect()
    gc.freeze()
    return typer.main.get_command(app)


def _click_app() -> Callable[..., Any]:
    """The click command typer builds from ``kb.cli.app`` (what ``app(...)`` calls), built once, not once per
    command (~1 s: typer reads every command's signature): rebuilt only when a test adds a command."""
    from kb.cli import app

    return _click_app_for(len(app.registered_commands), len(app.registered_groups))


def warm_cli() -> None:
    """Import the CLI and build its command now, so that a command timed next is measured alone."""
    _click_app()


def _exit_code(code: object) -> int:
    """The process exit status ``sys.exit(code)`` gives (a message: printed to stderr, status 1)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def run_kb_process(papers: Path | None, home: Path | None, *args: str,
                   env: Mapping[str, str] | None = None, timeout: float = 120,
                   prefix: tuple[str, ...] = (), cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``kb ARGS --papers PAPERS --home HOME`` in its own process (a timeout here is a hang: the test fails).

    ``env``: the whole environment of the process (default: this one's); ``prefix``: a program to run it
    under (``setpriv ... --``); ``cwd``: the folder it starts in (default: this one's).
    """
    return subprocess.run([*prefix, *kb_command(papers, home, *args)], capture_output=True, text=True,
                          timeout=timeout, env=None if env is None else dict(env), cwd=cwd)
