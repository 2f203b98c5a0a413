"""a lease on running runs: the time its worker must renew it by, or any worker may reclaim the run

The attempt number (``attempts``, 0003j) is the lease's fencing token: every write of a worker is
conditional on it (kb.queue.store).

Revision ID: 0005l
Revises: 0004u
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = '0005l'
down_revision = '0004u'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('run', schema=None) as batch_op:
        batch_op.add_column(sa.Column('lease_expires_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('run', schema=None) as batch_op:
        batch_op.drop_column('lease_expires_at')
