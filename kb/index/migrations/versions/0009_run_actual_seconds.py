"""runs keep their actual time beside their estimate: ``actual_seconds`` and ``stages_json``

``actual_seconds``: the seconds the run's last attempt worked (first-use stages included), ``stages_json``:
the seconds of each of its stages (``{"first use: training builtin:...": 41.2, "run": 6.3}``). Estimates take
the median of earlier runs' own time, first-use stages left out (kb.evidence.estimates); ``expected_seconds``
stays the estimate. Runs finished before this revision have neither: their time is read from started to
finished.

Revision ID: 0009t
Revises: 0008q
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = '0009t'
down_revision = '0008q'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('run', schema=None) as batch_op:
        batch_op.add_column(sa.Column('actual_seconds', sa.Float(), nullable=True))
        batch_op.add_column(sa.Column('stages_json', sqlmodel.sql.sqltypes.AutoString(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('run', schema=None) as batch_op:
        batch_op.drop_column('stages_json')
        batch_op.drop_column('actual_seconds')
