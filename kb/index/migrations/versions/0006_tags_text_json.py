"""tags_text holds a JSON array of the note's tags, so a tag with a space ("protein design") stays one tag

It held the tags joined by spaces, which listing read back split at every space. Each row is rewritten from
the tags its ``meta_json`` (the note's frontmatter as indexed) lists, in the note's order.

Revision ID: 0006t
Revises: 0005l
"""

import json
from collections.abc import Callable

import sqlalchemy as sa
from alembic import op

revision = '0006t'
down_revision = '0005l'
branch_labels = None
depends_on = None

_PAPER = sa.table('paper', sa.column('id', sa.String), sa.column('tags_text', sa.String),
                  sa.column('meta_json', sa.String))


def _rewrite(encode: Callable[[list[str]], str]) -> None:
    bind = op.get_bind()
    rows = bind.execute(sa.select(_PAPER.c.id, _PAPER.c.meta_json)).all()
    updates = []
    for paper_id, meta_json in rows:
        tags = list(dict.fromkeys(str(t) for t in (json.loads(meta_json or "{}").get("tags") or [])))
        updates.append({"pid": paper_id, "text": encode(tags)})
    if updates:
        bind.execute(_PAPER.update().where(_PAPER.c.id == sa.bindparam("pid"))
                     .values(tags_text=sa.bindparam("text")), updates)


def upgrade() -> None:
    _rewrite(lambda tags: json.dumps(tags, ensure_ascii=False))


def downgrade() -> None:
    _rewrite(" ".join)
