"""one evidence row per run: the database itself refuses a second result for a run

A run that somehow executed twice (a worker that lost its lease but finished anyway, a scheduler that
started a job twice) must not leave two results that disagree; ``queue.store.finish`` already checks the
owner, and this unique index makes the rule hold whatever path writes evidence.

Revision ID: 0004u
Revises: 0003j
"""

from alembic import op

revision = '0004u'
down_revision = '0003j'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('evidence', schema=None) as batch_op:
        batch_op.drop_index('ix_evidence_run_id')
        batch_op.create_index('ix_evidence_run_id', ['run_id'], unique=True)


def downgrade() -> None:
    with op.batch_alter_table('evidence', schema=None) as batch_op:
        batch_op.drop_index('ix_evidence_run_id')
        batch_op.create_index('ix_evidence_run_id', ['run_id'], unique=False)
