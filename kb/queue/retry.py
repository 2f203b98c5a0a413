"""Riding out database outages: a worker retries what it must write, and waits out a restart or a lock.

A PostgreSQL restart, a dropped connection or a SQLite write lock held longer than the busy timeout
surfaces as an ``OperationalError`` (or a ``DBAPIError`` whose connection was invalidated). None of
these says anything about the run: the worker retries the operation with a bounded backoff (0.5 s,
doubling to 30 s) for as long as it takes, and logs one line when the outage starts and one when it
ends, not one per try. Any other error is the caller's to handle.

``Outage`` also tells the worker how long the database has answered since the last outage: a lease
that expired while nobody could reach the database says nothing about its holder, so a worker only
reclaims expired leases once it has seen the database healthy for a whole lease (``healthy_for``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError, DisconnectionError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

log = logging.getLogger("kb.worker")
T = TypeVar("T")

#: First wait after a failed try, and the longest wait between two tries (seconds).
FIRST_DELAY, MAX_DELAY = 0.5, 30.0
#: An operation that took this long (a lock waited out inside the busy timeout) counts as an outage too.
SLOW_SECONDS = 5.0
# What an OperationalError says when the database is unreachable or locked, rather than when a query is
# wrong ("no such table" is an OperationalError on SQLite too, and retrying it would hang a worker).
_TRANSIENT = (
    "locked", "busy", "connection", "could not connect", "server closed", "terminating",
    "the database system is", "timeout", "timed out", "ssl syscall", "broken pipe", "no route to host",
)


def is_transient(exc: BaseException) -> bool:
    """Whether ``exc`` is a database outage (restart, lost connection, lock) worth waiting out."""
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return True
    if isinstance(exc, DisconnectionError | PoolTimeout):
        return True
    if isinstance(exc, OperationalError | InterfaceError):
        text = str(getattr(exc, "orig", exc)).lower()
        return any(marker in text for marker in _TRANSIENT)
    return False


class Outage:
    """The state of one database as this process sees it: up, or down since when (shared by all threads)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._lock = threading.Lock()
        self.down_since: float | None = None
        self.up_since = float("-inf")  # monotonic time the database last came back (never down: always up)
        # An outage that began with a write failing (a SQLite lock: reads still work) ends only when a write
        # succeeds; one where reads failed too (a lost server) ends with any answer.
        self.needs_write = False

    def failed(self, what: str, exc: BaseException, *, write: bool = True) -> None:
        """A try failed on an outage: log the outage's start (once)."""
        with self._lock:
            if self.down_since is not None:
                self.needs_write = self.needs_write and write
                return
            self.down_since, self.needs_write = time.monotonic(), write
        reason = (
            str(getattr(exc, "orig", exc)).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        )
        log.warning("database %s unavailable while %s (%s); waiting and retrying (%.1f s doubling to %.0f s)",
                    self.name, what, reason, FIRST_DELAY, MAX_DELAY)

    def answered(self, seconds: float = 0.0, *, write: bool = True) -> None:
        """A try succeeded (after ``seconds``): log the outage's end (once)."""
        if self.down_since is None and seconds < SLOW_SECONDS:
            return
        if self.down_since is not None and self.needs_write and not write:
            return
        with self._lock:
            now = time.monotonic()
            self.up_since = now
            since, self.down_since = self.down_since, None
        if since is not None:
            log.warning("database %s answers again after %.1f s", self.name, now - since)

    def healthy_for(self) -> float:
        """Seconds since the database last came back (infinite when this process never saw it down)."""
        if self.down_since is not None:
            return 0.0
        return time.monotonic() - self.up_since


_outages: dict[str, Outage] = {}
_outages_lock = threading.Lock()


def outage(engine: Engine) -> Outage:
    """The outage tracker of ``engine``'s database (one per database URL in this process)."""
    key = engine.url.render_as_string(hide_password=True)
    with _outages_lock:
        return _outages.setdefault(key, Outage(key))


def retrying(engine: Engine, what: str, operation: Callable[[], T], *, write: bool = True,
             max_delay: float = MAX_DELAY) -> T:
    """``operation()``, tried again after 0.5 s, 1 s, 2 s ... (at most ``max_delay``) while the database is
    out.

    Errors that are not outages are raised at once. There is no limit on the number of tries: a worker
    that gives up on a result its analyzer computed would throw away hours of GPU time. ``write=False``
    marks an operation that may only read (its success does not end an outage of writes).
    """
    tracker = outage(engine)
    delay = FIRST_DELAY
    while True:
        started = time.monotonic()
        try:
            result = operation()
        except Exception as exc:
            if not is_transient(exc):
                raise
            tracker.failed(what, exc, write=write)
            time.sleep(delay)
            delay = min(max_delay, delay * 2)
            continue
        tracker.answered(time.monotonic() - started, write=write)
        return result
