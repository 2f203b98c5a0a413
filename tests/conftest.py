"""Shared fixtures: a temporary knowledge base with a few real notes, the app's, the servers', and the seed folder.

Helpers the test modules share live in ``tests/helpers/`` (the CLI runner: ``tests/helpers/cli.py``); a test
module never imports from another test module."""

from __future__ import annotations

import compileall
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from kb.core import KnowledgeBase
from kb.settings import Settings
from tests.helpers.grobid import grobid  # noqa: F401 - a shared fixture
from tests.helpers.lookups import lookups  # noqa: F401 - a shared fixture
from tests.helpers.paper_values import kb_env  # noqa: F401 - a shared fixture
from tests.helpers.workers import kb_workers  # noqa: F401 - a shared fixture
from tests.noop_analyzer import register_for_subprocesses
from tests.servers import pg_database, pg_url, s3_endpoint, s3_url, slurm_cluster  # noqa: F401 - shared fixtures

if TYPE_CHECKING:  # the app's helpers import streamlit: only the tests that use them pay for it
    from tests.helpers.app_env import AppEnv

ROOT = Path(__file__).resolve().parents[1]
BUNDLED_PAPERS = ROOT / "papers"
SEEDS = ROOT.parent / "shared" / "seeds"

# The test-only ``noop`` analyzer is registered the way a lab adds its own, through KB_ANALYZER_MODULES: set
# before anything loads the registry, so every process the tests start inherits it.
register_for_subprocesses()
# No test reaches the internet: 'kb add FILE.pdf' reads the layout alone unless a test serves recorded answers
# on loopback and turns lookups on (tests/test_paper_lookups.py); set here so processes the tests start agree.
os.environ["KB_LOOKUPS"] = "false"
# pytest-xdist's workers start with COLUMNS=80 and LINES=24 (execnet's defaults), which a serial run lacks, and
# rich fixes a COLUMNS it sees when kb's consoles are built: drop them, so that every run lays out alike and a
# test sets the width it needs per call (tests/helpers/cli.py's ``env``).
for _size in ("COLUMNS", "LINES"):
    os.environ.pop(_size, None)
# Each pytest-xdist worker gets its share of the cores for torch's and BLAS's threads (OMP_NUM_THREADS, which
# they read when they start, and so do the processes the tests start). By default each process takes every core:
# two workers on two cores run four threads that spin waiting on each other, and any other load makes it worse
# (tests/test_langevin.py and tests/test_depth.py on 2 workers, load 6-9: 330-390 s against 52-107 s). A value
# the caller set is kept; a run in one process keeps every core.
_workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
if _workers > 1:
    os.environ.setdefault("OMP_NUM_THREADS", str(max(1, len(os.sched_getaffinity(0)) // _workers)))
# The tests start hundreds of ``kb`` processes. Where PYTHONDONTWRITEBYTECODE is set (as on these machines), each
# would compile kb from source (~8 % of a ``kb list``): write the project's bytecode once here, which Python then
# reads whatever that variable says (compileall writes it regardless; up-to-date files are only checked).
for _package in ("kb", "schemas", "analyzers", "app", "tests"):
    compileall.compile_dir(ROOT / _package, quiet=2)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: one worker more than the cores. Much of the suite waits (on ``kb`` processes it started, on
    servers, on a worker's lease), so a third worker on two cores keeps them busy: the default suite on 2 idle
    cores took 432 s with three workers against 510-519 s with two, all tests passing. ``--maxprocesses``
    still caps it (``.ci/run``: 4, each worker starting its own servers)."""
    return len(os.sched_getaffinity(0)) + 1


@pytest.fixture
def seeds() -> Path:
    """The seed folder beside the checkout; tests that need it skip when it is absent."""
    if not (SEEDS / "000_ce90e91fe3e899e8.txt").exists():
        pytest.skip("../shared/seeds is not present")
    return SEEDS


@pytest.fixture
def kb_dirs(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the bundled notes and an empty KB home."""
    papers = tmp_path / "papers"
    shutil.copytree(BUNDLED_PAPERS, papers)
    return papers, tmp_path / "home"


@pytest.fixture
def kb(kb_dirs: tuple[Path, Path]) -> KnowledgeBase:
    """A knowledge base over the copied bundled notes, with a SQLite index in a temp folder."""
    papers, home = kb_dirs
    return KnowledgeBase(Settings(papers=papers, home=home))


@pytest.fixture
def app_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AppEnv]:
    """The bundled notes plus a noop note for the app's tests; the app must not start workers (runs stay queued)."""
    import streamlit as st

    from kb.queue import daemon
    from tests.helpers.app_env import make_env

    env = make_env(tmp_path, monkeypatch)
    yield env
    daemon.stop_worker(env.home)
    st.cache_resource.clear()
    st.cache_data.clear()
