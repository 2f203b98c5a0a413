"""runs have a priority and an expected cost: the queue serves interactive requests first, short ones first

``priority``: 0 for what a person waits on (``kb verify`` of named claims, the app's re-verify), 2 for bulk
work (``kb demo``, ``kb verify --all``); waiting lowers it (kb.queue.store.order_key). ``expected_seconds``:
the run's estimate (kb.evidence.estimates) when it was queued, or none. Runs queued before this revision keep
their order among themselves (priority 0, no estimate).

Revision ID: 0008q
Revises: 0007s
"""

import sqlalchemy as sa
from alembic import op

revision = '0008q'
down_revision = '0007s'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('run', schema=None) as batch_op:
        batch_op.add_column(sa.Column('priority', sa.Integer(), nullable=False, server_default='0'))
        batch_op.add_column(sa.Column('expected_seconds', sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('run', schema=None) as batch_op:
        batch_op.drop_column('expected_seconds')
        batch_op.drop_column('priority')
