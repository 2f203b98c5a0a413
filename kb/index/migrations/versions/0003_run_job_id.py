"""scheduler job id and attempt count on runs (the Slurm executor, bounded retries)

Revision ID: 0003j
Revises: 0002
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = '0003j'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('run', schema=None) as batch_op:
        batch_op.add_column(sa.Column('job_id', sqlmodel.sql.sqltypes.AutoString(), nullable=True))
        batch_op.add_column(sa.Column('attempts', sa.Integer(), nullable=False, server_default='0'))


def downgrade() -> None:
    with op.batch_alter_table('run', schema=None) as batch_op:
        batch_op.drop_column('attempts')
        batch_op.drop_column('job_id')
