"""One settings model for kb: where notes live, where the index and evidence go, which database.

Each field reads from an environment variable (``KB_PAPERS``, ``KB_HOME``, ``KB_DATABASE_URL``) and
the CLI exposes the same fields as flags (``--papers``, ``--home``, ``--db``).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Configuration of one knowledge base."""

    model_config = SettingsConfigDict(env_prefix="KB_", extra="ignore")

    papers: Path = Field(default=Path("papers"), description="Folder of paper notes (Markdown + YAML).")
    home: Path = Field(default=Path(".kb"), description="Folder for the SQLite index and evidence files.")
    database_url: str | None = Field(
        default=None, description="SQLAlchemy URL; default: SQLite file 'index.sqlite' under the KB home."
    )
    max_note_bytes: int = Field(default=5_000_000, description="Notes larger than this are rejected.")
    app_worker: bool = Field(
        default=True, description="The app starts a background 'kb worker --forever' for queued runs when none "
        "is alive; turn off (KB_APP_WORKER=false) where workers run elsewhere, e.g. on a cluster.",
    )
    arxiv_api_url: str = Field(
        default="https://export.arxiv.org/api/query",
        description="arXiv API query endpoint 'kb add arxiv:ID' asks (KB_ARXIV_API_URL; a mirror or a test server).",
    )
    crossref_api_url: str = Field(
        default="https://api.crossref.org",
        description="Crossref REST API base 'kb add doi:DOI' asks for '/works/<doi>' (KB_CROSSREF_API_URL).",
    )
    lookup_timeout: float = Field(
        default=8.0, gt=0, description="Seconds an online lookup (arXiv, Crossref) may take before kb gives up.",
    )

    @property
    def resolved_database_url(self) -> str:
        """The database URL to use, defaulting to SQLite under the KB home."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.home / 'index.sqlite').resolve()}"
