"""Schema migrations with Alembic: ``upgrade`` brings any database (SQLite, PostgreSQL) to the head."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy.engine import Engine

MIGRATIONS = Path(__file__).resolve().parent / "migrations"


def alembic_config(connection: object | None = None) -> Config:
    """An Alembic config pointing at kb's migrations, optionally bound to an open connection."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Apply migrations up to ``revision``."""
    with engine.begin() as connection:
        command.upgrade(alembic_config(connection), revision)


def revision(engine: Engine, message: str) -> None:
    """Autogenerate a migration from the difference between the models and the database (developers)."""
    with engine.begin() as connection:
        command.revision(alembic_config(connection), message=message, autogenerate=True)
