"""grounding and binding hash on claims, seed groups on runs and evidence, versions on evidence

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None

_TEXT = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    with op.batch_alter_table('paper', schema=None) as batch_op:
        batch_op.add_column(sa.Column('source_path', _TEXT(), nullable=True))
        batch_op.add_column(sa.Column('source_mtime_ns', sa.BigInteger(), nullable=True))
    with op.batch_alter_table('claim', schema=None) as batch_op:
        batch_op.add_column(sa.Column('grounding', _TEXT(), nullable=True))
        batch_op.add_column(sa.Column('binding_hash', _TEXT(), nullable=True))
    with op.batch_alter_table('run', schema=None) as batch_op:
        batch_op.add_column(sa.Column('group_id', _TEXT(), nullable=True))
        batch_op.add_column(sa.Column('binding_hash', _TEXT(), nullable=True))
        batch_op.create_index(batch_op.f('ix_run_group_id'), ['group_id'], unique=False)
    with op.batch_alter_table('evidence', schema=None) as batch_op:
        batch_op.add_column(sa.Column('group_id', _TEXT(), nullable=True))
        batch_op.add_column(sa.Column('binding_hash', _TEXT(), nullable=True))
        batch_op.add_column(sa.Column('analyzer_version', _TEXT(), nullable=True))
        batch_op.add_column(sa.Column('kb_version', _TEXT(), nullable=True))
        batch_op.create_index(batch_op.f('ix_evidence_group_id'), ['group_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('evidence', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_evidence_group_id'))
        for column in ('kb_version', 'analyzer_version', 'binding_hash', 'group_id'):
            batch_op.drop_column(column)
    with op.batch_alter_table('run', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_run_group_id'))
        batch_op.drop_column('binding_hash')
        batch_op.drop_column('group_id')
    with op.batch_alter_table('claim', schema=None) as batch_op:
        batch_op.drop_column('binding_hash')
        batch_op.drop_column('grounding')
    with op.batch_alter_table('paper', schema=None) as batch_op:
        batch_op.drop_column('source_mtime_ns')
        batch_op.drop_column('source_path')
