"""The contract every executor fulfils, and the one ``JobConfig`` each of them is fed.

An executor decides where queued runs execute (this process, Ray tasks, Slurm jobs, a lab's own
scheduler); the durable queue decides which run executes, once. Every executor, the worker, ``kb run`` and
the analyzers' own commands get the same ``JobConfig``, built once from the settings, instead of reading
settings or environment variables themselves: a setting added here reaches all of them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from analyzers.base import RunContext
from kb.settings import Settings, SlurmSettings

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from kb.evidence.artifact_store import ArtifactStore


class JobConfig(BaseModel):
    """What a run needs wherever it executes, from the operator's settings (never from a note).

    Picklable, so a Ray task or a Slurm job carries it to the machine that executes the run.
    """

    model_config = ConfigDict(frozen=True)

    home: Path = Field(
        description="KB home of the machine that queued the runs (absolute): staging, caches and, "
        "without an artifact store, the evidence files."
    )
    database_url: str = Field(description="The index every worker and job claims runs from (SQLAlchemy URL).")
    artifact_store: str = Field(description="fsspec URL where every run's files go, wherever it runs: the "
                                "configured store, else the KB home (which remote workers must then share).")
    offline: bool = Field(
        default=False, description="No network: analyzers fail fast where they would download."
    )
    cache_dir: Path | None = Field(default=None, description="Analyzers' cache (weights, structures); None: "
                                   "<home of the executing machine>/cache.")
    progress_interval: float = Field(default=30.0, gt=0, description="Longest a run goes without a progress "
                                     "report, in seconds (RunContext.report_every).")
    lease_seconds: float = Field(default=60.0, gt=0, description="How long a claim holds a run without a "
                                 "heartbeat renewing it.")
    db_busy_timeout: float = Field(default=30.0, gt=0, description="Seconds a SQLite write waits for a lock.")
    short_lane: bool = Field(
        default=True,
        description="A second lane takes short interactive runs beside a long one (2 or more cores).",
    )
    stop_grace_seconds: float = Field(
        default=30.0,
        ge=0,
        description="After SIGTERM/SIGINT, how long the running "
        "run may take to reach its next checkpoint or end before it is handed back.",
    )
    slurm: SlurmSettings = Field(
        default_factory=SlurmSettings, description="How runs are submitted to Slurm."
    )
    ray_address: str | None = Field(default=None, description="Ray cluster to submit to; None: a local Ray.")

    @classmethod
    def from_settings(cls, settings: Settings) -> JobConfig:
        """The config of these settings (relative paths resolved here, where the operator typed them)."""
        home = settings.home.resolve()
        return cls(
            home=home,
            database_url=settings.resolved_database_url,
            artifact_store=settings.artifact_store or str(home),
            offline=settings.offline,
            cache_dir=settings.cache_dir.resolve() if settings.cache_dir is not None else None,
            progress_interval=settings.progress_interval,
            lease_seconds=settings.lease_seconds,
            db_busy_timeout=settings.db_busy_timeout,
            slurm=settings.slurm,
            ray_address=settings.ray_address,
            short_lane=settings.short_lane,
            stop_grace_seconds=settings.stop_grace_seconds,
        )

    @property
    def lease(self) -> dt.timedelta:
        """``lease_seconds`` as a timedelta."""
        return dt.timedelta(seconds=self.lease_seconds)

    @property
    def shared_database(self) -> bool:
        """Whether machines other than this one can reach the index (a server, not a SQLite file)."""
        return not self.database_url.startswith("sqlite")

    def cache_for(self, home: Path) -> Path:
        """The analyzers' cache of a run executing with KB home ``home``."""
        return self.cache_dir if self.cache_dir is not None else home / "cache"

    def store(self, home: Path | None = None) -> ArtifactStore:
        """The artifact store, read through a cache under ``home`` (default: this config's KB home)."""
        from kb.evidence.artifact_store import ArtifactStore

        return ArtifactStore(home or self.home, self.artifact_store)

    def engine(self) -> Engine:
        """A new engine on the index (the caller disposes of it)."""
        from kb.index.database import make_engine

        return make_engine(self.database_url, busy_timeout=self.db_busy_timeout)

    def run_context(self, out_dir: Path, progress: Callable[[float, str], None] | None = None, *,
                    home: Path | None = None, **more: object) -> RunContext:
        """What an analyzer gets when it runs under this config (``home``: the KB home of the machine it runs
        on, default the config's; ``more``: other ``RunContext`` fields). The one place a run context is built
        from the settings."""
        extra = {"progress": progress} if progress is not None else {}
        return RunContext(out_dir=out_dir, cache_dir=self.cache_for(home or self.home), offline=self.offline,
                          report_every=self.progress_interval, **extra, **more)  # type: ignore[arg-type]


class ExecutorUnavailable(ValueError):
    """An executor cannot take runs under this config (say, a SQLite index for jobs on other machines)."""


class Executor:
    """Where queued runs execute. Subclass, set the class attributes, override ``run`` (and what else
    applies), and register the class with ``kb.queue.executors.register``.

    Every executor claims a run by id through the queue (``kb.queue.store.claim_next``), exactly as a
    local worker does, so a run never executes twice, and records its outcome with
    ``kb.queue.execution.execute``; what differs is where that code runs.
    """

    #: ``--executor NAME`` and the run's ``executor`` column.
    name: ClassVar[str]
    #: The label the app shows in "Run on".
    label: ClassVar[str]
    #: One sentence for ``kb verify --help``, the app and the README: where runs execute, what it needs.
    description: ClassVar[str]
    #: True where runs execute on other machines that must reach the index (no SQLite file).
    needs_shared_database: ClassVar[bool] = False
    #: True where queued runs wait for a ``kb worker`` (the app then makes sure one is alive).
    needs_worker: ClassVar[bool] = False
    #: True where the executor itself notices runs whose job vanished (``reconcile``): workers then leave its
    #: running runs alone instead of reclaiming them on an expired lease.
    reconciles: ClassVar[bool] = False
    #: The ``Settings`` fields it reads from its config besides those every run gets (a nested section,
    #: such as ``slurm``, stands for each of its fields); with the shared index and store where
    #: ``needs_shared_database``, what ``kb executors`` lists with their environment variables
    #: (``kb.queue.executors.needed_settings``).
    settings: ClassVar[tuple[str, ...]] = ()

    def __init__(self, config: JobConfig) -> None:
        self.config = config

    def check(self) -> None:
        """Raise ``ExecutorUnavailable`` saying why this executor cannot take runs under its config."""
        if self.needs_shared_database and not self.config.shared_database:
            raise ExecutorUnavailable(
                f"the {self.name} executor runs on other machines, which need a shared index: set "
                "KB_DATABASE_URL (or --db) to a PostgreSQL URL, e.g. postgresql+psycopg://user@host/kb, and "
                "KB_ARTIFACT_STORE to a store they reach (see README, Running on a GPU cluster)")

    def submit(self, engine: Engine, run_ids: list[str]) -> dict[str, str]:
        """Hand these queued runs over without waiting for them; returns a job id per run where there is one.

        The default leaves them queued for a ``kb worker`` (``needs_worker``)."""
        return {}

    def run(self, engine: Engine, run_ids: list[str]) -> object:
        """Execute these queued runs and return once they have ended (``kb verify`` waits on this)."""
        raise NotImplementedError

    def reconcile(self, engine: Engine) -> dict[str, str]:
        """Notice runs whose job vanished and resubmit or fail them; returns what happened per run id."""
        return {}

    def cancel_job(self, job_id: str) -> None:
        """Stop the job executing a cancelled run (no error if it already ended)."""
