"""Alembic environment: migrations run on the connection kb hands over (see kb.index.opening.init_db)."""

from alembic import context
from sqlmodel import SQLModel

import kb.index.database  # noqa: F401  (registers the tables on SQLModel.metadata)

connection = context.config.attributes["connection"]


def _include(name: str | None, type_: str, parent: object) -> bool:
    # The full-text index is created by kb.index.search, not by migrations.
    return not (type_ == "table" and name is not None and name.startswith("paper_fts"))


context.configure(connection=connection, target_metadata=SQLModel.metadata, render_as_batch=True,
                  include_name=_include)
with context.begin_transaction():
    context.run_migrations()
