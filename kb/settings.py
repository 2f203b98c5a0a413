"""One settings model for kb: where notes live, where the index and evidence go, which database.

Each field reads from an environment variable (``KB_PAPERS``, ``KB_HOME``, ``KB_DATABASE_URL``) and
the CLI exposes the same fields as flags (``--papers``, ``--home``, ``--db``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from kb.locations import DEFAULT_HOME, DEFAULT_PAPERS, index_file

#: Runs one claim may queue, one per seed: the default of the setting ``max_seeds_per_claim``. A verdict on a
#: mean needs a handful of seeds; thousands would only fill the queue.
DEFAULT_MAX_SEEDS = 10
#: The largest whole number a note may give an analyzer parameter (a step count, a batch size, a budget): past
#: it a shared note could make the machine that re-verifies it work for days or exhaust its memory.
DEFAULT_MAX_NOTE_INTEGER = 10_000_000


@dataclass(frozen=True)
class NoteLimits:
    """What a note may ask of the machine that re-verifies it: the operator's settings, carried whole from the
    command that read them to the one binding check (``kb.notes.bindings``). A note never widens them; the
    person running kb does, with settings or ``--set``."""

    max_seeds: int = DEFAULT_MAX_SEEDS  # runs one claim may queue
    max_integer: int = DEFAULT_MAX_NOTE_INTEGER  # largest whole-number parameter
    max_threads: int | None = None  # threads, workers, processes; None: this machine's cores

    @property
    def threads(self) -> int:
        return self.max_threads if self.max_threads is not None else (os.cpu_count() or 1)


class SlurmSettings(BaseModel):
    """How the operator's runs are submitted to Slurm (env: ``KB_SLURM__PARTITION`` and so on)."""

    partition: str | None = Field(
        default=None, description="Partition (queue); default: the cluster's default."
    )
    account: str | None = Field(
        default=None, description="Account to charge, where the cluster asks for one."
    )
    time_minutes: int = Field(
        default=240,
        ge=1,
        description="Time limit per job; a run cut off by it resumes "
        "from its last checkpoint in the next attempt.",
    )
    mem_gb: float = Field(default=32.0, gt=0, description="Host memory per job.")
    cpus_per_task: int = Field(default=4, ge=1, description="CPU cores per job (data loading, tokenization).")
    gpus_per_job: int = Field(
        default=1, ge=0, description="GPUs per job for runs on CUDA (CPU runs ask for none)."
    )
    extra_sbatch: dict[str, str] = Field(default_factory=dict, description="More sbatch options, e.g. "
                                         "{'qos': 'high', 'constraint': 'a100'}.")
    folder: Path | None = Field(default=None, description="submitit's job files, on a filesystem the compute "
                                "nodes see; default: <KB home>/slurm.")
    job_home: str | None = Field(default=None, description="KB home of a job on its node (staging, caches); "
                                 "default: $SLURM_TMPDIR or $TMPDIR, else /tmp, plus kb-job-<job id>.")
    python: str | None = Field(default=None, description="Python on the compute nodes; default: this one.")


class BundleSettings(BaseModel):
    """Bounds on an evidence bundle `kb evidence import` reads (KB_BUNDLES__...): a bundle comes from
    elsewhere, so what it may cost to check is fixed here, never by the bundle."""

    max_file_bytes: int = Field(default=64_000_000, ge=1, description="Largest file in a bundle, in bytes "
                                "(KB_BUNDLES__MAX_FILE_BYTES): a figure or a metrics file is well under it.")
    max_total_bytes: int = Field(
        default=512_000_000,
        ge=1,
        description="Largest bundle, all files together, in bytes (KB_BUNDLES__MAX_TOTAL_BYTES).",
    )
    max_files: int = Field(default=10_000, ge=2, description="Most files (and folders) in a bundle "
                           "(KB_BUNDLES__MAX_FILES).")


class Settings(BaseSettings):
    """Configuration of one knowledge base."""

    model_config = SettingsConfigDict(env_prefix="KB_", env_nested_delimiter="__", extra="ignore")

    papers: Path = Field(default=DEFAULT_PAPERS, description="Folder of paper notes (Markdown + YAML).")
    home: Path = Field(default=DEFAULT_HOME, description="Folder for the SQLite index and evidence files.")
    database_url: str | None = Field(
        default=None, description="SQLAlchemy URL; default: SQLite file 'index.sqlite' under the KB home."
    )
    artifact_store: str | None = Field(
        default=None,
        description="fsspec URL of the evidence files (plots, metrics, checkpoints): default the KB "
        "home itself; a shared folder or s3://bucket/prefix where workers run on other machines.",
    )
    slurm: SlurmSettings = Field(default_factory=SlurmSettings, description="How runs are submitted to Slurm "
                                 "(KB_SLURM__PARTITION, KB_SLURM__ACCOUNT, KB_SLURM__TIME_MINUTES, ...).")
    ray_address: str | None = Field(default=None, description="Ray cluster the 'ray' executor submits to "
                                    "(KB_RAY_ADDRESS, --ray-address); default: a local Ray instance.")
    max_note_bytes: int = Field(default=5_000_000, description="Notes larger than this are rejected.")
    bundles: BundleSettings = Field(
        default_factory=BundleSettings,
        description="Bounds on the evidence bundles "
        "`kb evidence import` reads (KB_BUNDLES__MAX_FILE_BYTES, ...).",
    )
    max_seeds_per_claim: int = Field(
        default=DEFAULT_MAX_SEEDS,
        ge=1,
        description="Seeds one claim may list (KB_MAX_SEEDS_PER_CLAIM); each is a "
        "run: a note listing more is invalid, naming the claim's 'analyzer.seeds'.",
    )
    max_note_integer: int = Field(
        default=DEFAULT_MAX_NOTE_INTEGER,
        ge=1,
        description="Largest whole number a note may give an analyzer "
        "parameter (KB_MAX_NOTE_INTEGER): steps, sizes, budgets past it are refused at validate, naming "
        "the bound; "
        "the person running kb sets larger ones with --set.",
    )
    max_note_threads: int | None = Field(
        default=None,
        ge=1,
        description="Most threads, workers or processes a note may ask for (KB_MAX_NOTE_THREADS); "
        "default: this machine's CPU cores.",
    )
    max_rendered_body: int = Field(
        default=50_000,
        ge=1_000,
        description="Characters of a note's Markdown body that 'kb show' and the app "
        "render (KB_MAX_RENDERED_BODY): rendering costs grow with tables; the rest is left out, saying "
        "where it is.",
    )
    max_source_bytes: int = Field(
        default=20_000_000,
        ge=1,
        description="Largest source text (a note's source_file) kb reads, in bytes "
        "(KB_MAX_SOURCE_BYTES): a paper's full text is well under it; a larger file is refused, never "
        "read whole.",
    )
    max_tension_pairs: int = Field(
        default=200_000,
        ge=1_000,
        description="Pairs of claims of different notes on one quantity that finding "
        "tensions examines in all (KB_MAX_TENSION_PAIRS); past it the listing stops and says which "
        "quantities "
        "may be incomplete, so a shared note of thousands of claims cannot stall every command.",
    )
    note_lock_timeout: float = Field(
        default=30.0, gt=0, description="Seconds an edit of a note waits for another writer of the same note "
        "(any KB home) before giving up with a message, nothing written (KB_NOTE_LOCK_TIMEOUT).",
    )
    offline: bool = Field(
        default=False,
        description="No network here (KB_OFFLINE=1): analyzers fail fast where they would download "
        "weights or structures, saying what to provide instead.",
    )
    cache_dir: Path | None = Field(
        default=None,
        description="Folder where analyzers keep what outlives a run (downloaded structures and "
        "weights, trained reference models, designed sequences; KB_CACHE_DIR): default <KB home>/cache; "
        "a node-local "
        "disk on a worker whose KB home is shared.",
    )
    progress_interval: float = Field(
        default=30.0,
        gt=0,
        description="Longest a running run goes without a progress line, in seconds "
        "(KB_PROGRESS_INTERVAL): analyzers report at least this often, with the time left, and 'kb demo' / "
        "'kb verify' print each running run's progress at least this often where the output is not a "
        "terminal.",
    )
    chat_model: str | None = Field(
        default=None, description="LangChain 'provider:model' the agents use (KB_CHAT_MODEL), e.g. "
        "'openai:gpt-4o-mini'; none: the agents' offline fallbacks.",
    )
    lease_seconds: float = Field(
        default=60.0,
        gt=0,
        description="How long a worker's claim on a run holds without a heartbeat (every 2 s) "
        "renewing it; then any live worker reclaims the run (KB_LEASE_SECONDS). Longer than any database "
        "outage "
        "a worker should ride out unnoticed.",
    )
    short_lane: bool = Field(
        default=True, description="While a worker holds a long run, a second lane beside it takes short "
        "interactive runs (a verify of one claim), on machines with 2 or more cores (KB_SHORT_LANE).",
    )
    stop_grace_seconds: float = Field(
        default=30.0,
        ge=0,
        description="After SIGTERM or SIGINT, how long a worker waits for its running run to "
        "reach its next checkpoint or end before it hands the run back to the queue (KB_STOP_GRACE_SECONDS).",
    )
    db_busy_timeout: float = Field(
        default=30.0, gt=0, description="Seconds a SQLite write waits for another writer's lock before the "
        "worker logs an outage and retries (KB_DB_BUSY_TIMEOUT).",
    )
    app_worker: bool = Field(
        default=True,
        description="The app starts a background 'kb worker --forever' for queued runs when none "
        "is alive; turn off (KB_APP_WORKER=false) where workers run elsewhere, e.g. on a cluster.",
    )
    arxiv_api_url: str = Field(
        default="https://export.arxiv.org/api/query",
        description="arXiv API query endpoint 'kb add arxiv:ID' asks (KB_ARXIV_API_URL; a mirror or a "
        "test server).",
    )
    crossref_api_url: str = Field(
        default="https://api.crossref.org",
        description="Crossref REST API base 'kb add doi:DOI' asks for '/works/<doi>' (KB_CROSSREF_API_URL).",
    )
    openalex_api_url: str = Field(
        default="https://api.openalex.org",
        description="OpenAlex API base a PDF's DOI is looked up at ('/works/doi:<doi>') for author "
        "institutions "
        "(KB_OPENALEX_API_URL).",
    )
    lookup_timeout: float = Field(
        default=8.0,
        gt=0,
        description="Seconds an online lookup (arXiv, Crossref, OpenAlex) may take before kb gives up.",
    )
    lookup_max_wait: float = Field(
        default=10.0,
        ge=0,
        description="Longest a lookup waits when a service says 'too many requests' (HTTP "
        "429/503 with Retry-After) before asking once more (KB_LOOKUP_MAX_WAIT); a longer wait gives up.",
    )
    contact_email: str | None = Field(
        default=None,
        description="Your e-mail, sent in the User-Agent of lookups (KB_CONTACT_EMAIL): Crossref and "
        "OpenAlex serve such 'polite' requests from a faster pool and write to you rather than block you.",
    )
    lookups: bool = Field(
        default=True, description="'kb add FILE.pdf' looks the DOI or arXiv id it finds up online "
        "(KB_LOOKUPS=false: the layout alone, as offline).",
    )
    learned_year: bool = Field(
        default=False,
        description="'kb add FILE.pdf' lets the learned year ranker (kb/papers/pdf_year.py) fill the year "
        "where the layout rules leave it empty, saying so when the note is added (KB_LEARNED_YEAR=true). "
        "Off by default: cross-validated on the tuning half, its fills where the rules leave the year "
        "empty fall short of the 95 % lower bound of 0.9 a default needs (the numbers: year_model.json's "
        "'default' and benchmarks/data/pdfs/README.md, rounds 8, 10 and 11).",
    )
    learned_abstract: bool = Field(
        default=False,
        description="'kb add FILE.pdf' lets the learned line labeller (kb/papers/pdf_roles.py) read the "
        "abstract where it gives the line the layout rules' abstract opens on almost no chance of being an "
        "abstract's (a byline, an address, a citation box), or, surely, where the rules read none, saying so "
        "when the note is added (KB_LEARNED_ABSTRACT=true). Off by default: on articles it did not see it "
        "mends about as many abstracts as it breaks (role_model.json's 'default', "
        "benchmarks/data/pdfs/README.md, round 12).",
    )
    grobid_url: str | None = Field(
        default=None,
        description="Base URL of a GROBID service you trust with your PDFs (KB_GROBID_URL, e.g. "
        "http://localhost:8070): 'kb add FILE.pdf' uploads the PDF to it and takes the header it reads "
        "(title, authors, affiliations, year, venue, ids, abstract) over the layout rules'; the identifier "
        "lookups still come first. Default: none, the layout rules alone. Offline or with KB_LOOKUPS=false "
        "it is not asked.",
    )

    @property
    def note_limits(self) -> NoteLimits:
        """What a note may ask of this machine, from the operator's settings."""
        return NoteLimits(max_seeds=self.max_seeds_per_claim, max_integer=self.max_note_integer,
                          max_threads=self.max_note_threads)

    @property
    def resolved_cache_dir(self) -> Path:
        """The analyzers' cache folder: ``cache_dir``, else ``<home>/cache``."""
        return self.cache_dir if self.cache_dir is not None else self.home / "cache"

    @property
    def resolved_database_url(self) -> str:
        """The database URL to use, defaulting to SQLite under the KB home."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{index_file(self.home)}"
