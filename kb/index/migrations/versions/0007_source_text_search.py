"""A note's source text is searched, page by page: notes with a source_file are re-indexed once

The full-text tables for source pages (``paper_fts_source`` and its bigram twin) are created by the search
backend like the others; this revision marks every note that names a source text as having a changed
source, so the next ``kb index`` re-reads it and fills them. Nothing else changes, so the downgrade has
nothing to undo (the extra tables are ignored by older code).

Revision ID: 0007s
Revises: 0006t
"""

import sqlalchemy as sa
from alembic import op

revision = '0007s'
down_revision = '0006t'
branch_labels = None
depends_on = None

_PAPER = sa.table('paper', sa.column('source_path', sa.String), sa.column('source_mtime_ns', sa.BigInteger))


def upgrade() -> None:
    # -1 matches no file's mtime: the index sees the source as changed and re-parses the note.
    op.get_bind().execute(_PAPER.update().where(_PAPER.c.source_path.is_not(None)).values(source_mtime_ns=-1))


def downgrade() -> None:
    return None
