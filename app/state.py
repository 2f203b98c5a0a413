"""Shared app state: the cached KnowledgeBase, its index keeper and worker handle, session defaults.

Every page starts with ``kb = setup()``. The KnowledgeBase (and its database engine) is created once
per settings (``st.cache_resource``). The index is kept in step with the notes folder by a background
thread (``IndexKeeper``), so no page waits for a re-index of thousands of notes; a page that must
show fresh data after a write asks for it explicitly. Runs are executed by one background
``kb worker --forever`` process per KB home (``kb.queue.daemon``), started when the app queues runs or
finds runs waiting with no worker alive.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from kb.core import KnowledgeBase
from kb.index.indexing import IndexReport
from kb.queue import daemon
from kb.settings import Settings

#: Every session-state key the pages share, with its default (widget keys live with their widgets).
SESSION_DEFAULTS: dict[str, Any] = {
    "note_id": None,  # the note the Note page shows (the ?id= query parameter wins)
    "edit_id": None,  # the note the edit page edits; None: a new note
    "run_id": None,  # the run the Runs page details
    "chat": [],  # Ask page: [{"role", "content", "citations"}]
    "drafts": None,  # edit page: the last drafted claims (kb.agents.drafter.DraftResult) awaiting review
    "flash": [],  # messages to show once after a page switch: [(kind, text)]
    "edit_target": None,  # edit page: which note (and version) the form was loaded from, or "new"
    "edit_claims": [],  # edit page: uids of the claims in the claims editor, in order
    "fm_attempted": False,  # edit page: a save was tried (errors show even on untouched fields)
    "runs_table_nonce": 0,  # Runs page: bumped to clear the table's row selection after a retry
    "_status_seen": None,  # sidebar: runs in flight and the index's generation at the last full render
}


def init_session() -> None:
    """Set every shared session-state key the pages rely on, once per session."""
    for key, value in SESSION_DEFAULTS.items():
        if key not in st.session_state:
            st.session_state[key] = list(value) if isinstance(value, list) else value


def settings_key(settings: Settings) -> str:
    """A stable key naming one knowledge base (cache keys for st.cache_data)."""
    return f"{settings.papers.resolve()}|{settings.home.resolve()}|{settings.database_url or ''}"


@st.cache_resource(show_spinner=False)
def _kb_for(key: str) -> KnowledgeBase:
    return KnowledgeBase(Settings())


def get_kb() -> KnowledgeBase:
    """The knowledge base named by KB_PAPERS / KB_HOME / KB_DATABASE_URL (one per combination)."""
    return _kb_for(settings_key(Settings()))


@dataclass
class IndexKeeper:
    """Re-indexes the notes folder in a background thread, at most every ``min_interval`` seconds.

    ``lock`` is held while indexing; the app holds it around its own writes, which index too. What a
    re-index changed reaches cached results through the index's generation (``generation``).
    """

    kb: KnowledgeBase
    min_interval: float = 15.0
    lock: threading.Lock = field(default_factory=threading.Lock)
    last_started: float = float("-inf")
    last_report: IndexReport | None = None
    error: str | None = None
    progress: tuple[int, int] = (0, 0)
    thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        """Whether a re-index is under way."""
        return self.thread is not None and self.thread.is_alive()

    def refresh(self, *, force: bool = False) -> None:
        """Start a background re-index unless one is running or the last started recently."""
        if self.running or (not force and time.monotonic() - self.last_started < self.min_interval):
            return
        self.last_started = time.monotonic()
        self.thread = threading.Thread(target=self._run, name="kb-index", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            with self.lock:
                self._record(self.kb.index(progress=self._progress))
            self.error = None
        except Exception as exc:  # noqa: BLE001 - shown on the page; the next refresh tries again
            self.error = f"{type(exc).__name__}: {exc}"

    def _progress(self, done: int, total: int) -> None:
        self.progress = (done, total)

    def _record(self, report: IndexReport) -> IndexReport:
        self.last_report = report
        return report


#: Seconds a cached result lives over an index that has no generation (an older one opened read-only).
UNKEYED_TTL = 30


def generation() -> int | str:
    """What every cached query is keyed on besides the knowledge base: the index's generation
    (``kb.index.generation``), which any process's write to the notes' rows or to the evidence changes, so a
    run that a ``kb worker`` or a ``kb verify`` in a terminal finished shows at the next render. An index
    without one (older, read-only) is keyed on the current ``UNKEYED_TTL``-second period instead."""
    found = get_kb().generation()
    return found if found is not None else f"period {int(time.time() // UNKEYED_TTL)}"


@st.cache_resource(show_spinner=False)
def _keeper_for(key: str) -> IndexKeeper:
    return IndexKeeper(get_kb())


def index_keeper() -> IndexKeeper:
    """The index keeper of the current knowledge base."""
    return _keeper_for(settings_key(Settings()))


@dataclass
class WorkerHandle:
    """The background worker of one KB home: find it, start it, describe it."""

    settings: Settings
    started: int = 0  # workers this app process started

    def status(self) -> daemon.WorkerInfo | None:
        """The live worker, or None."""
        return daemon.find_worker(self.settings.home)

    def ensure(self) -> daemon.WorkerInfo | None:
        """A live worker, started when none is alive; None when the settings say the app must not start
        one."""
        if not self.settings.app_worker:
            return self.status()
        info, started = daemon.ensure_worker(self.settings)
        self.started += started
        return info


@st.cache_resource(show_spinner=False)
def _worker_for(key: str) -> WorkerHandle:
    return WorkerHandle(get_kb().settings)


def worker() -> WorkerHandle:
    """The worker handle of the current knowledge base."""
    return _worker_for(settings_key(Settings()))


def setup() -> KnowledgeBase:
    """What every page runs first: session defaults and the knowledge base.

    Pages render from the index as it is; ``main.py`` starts a background re-index after the page
    has rendered (so it never slows the render), and the sidebar reruns the page when it changed
    something. A page with nothing to show before the first index calls ``index_first``.
    """
    init_session()
    return get_kb()


def index_first() -> bool:
    """Index now, with a progress bar, if this process never indexed; True when it did."""
    keeper = index_keeper()
    if keeper.last_report is not None:
        return False
    if keeper.running:
        wait_for_index()
        return True
    bar = st.progress(0.0, text="Indexing notes…")

    def progress(done: int, total: int) -> None:
        bar.progress(done / total if total else 1.0, text=f"Indexing notes… {done}/{total}")

    with keeper.lock:
        keeper.last_started = time.monotonic()
        keeper._record(keeper.kb.index(progress=progress))
    bar.empty()
    return True


def wait_for_index() -> None:
    """Block, with a progress bar, until a running re-index ends (only when there is nothing to show)."""
    keeper = index_keeper()
    if not keeper.running:
        return
    bar = st.progress(0.0, text="Indexing notes…")
    while keeper.running:
        done, total = keeper.progress
        bar.progress(done / total if total else 0.0, text=f"Indexing notes… {done}/{total}")
        time.sleep(0.1)
    bar.empty()


def flash(kind: str, text: str) -> None:
    """Queue a message to show once on the next page render (survives st.switch_page)."""
    st.session_state.setdefault("flash", []).append((kind, text))


def show_flash() -> None:
    """Show and clear the queued messages."""
    for kind, text in st.session_state.get("flash", []):
        {"success": st.success, "error": st.error, "warning": st.warning}.get(kind, st.info)(text)
    st.session_state["flash"] = []


def chat_model() -> tuple[Any, str | None]:
    """The configured chat model (KB_CHAT_MODEL) and None, or None and why there is none."""
    from kb.agents import config

    try:
        return config.chat_model(get_kb().settings.chat_model), None
    except config.NoChatModel as exc:
        return None, str(exc)
