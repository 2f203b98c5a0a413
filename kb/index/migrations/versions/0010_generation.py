"""the index keeps a generation: a counter every write to the notes' rows or to the evidence bumps

``generation`` holds one row (id 1) whose ``value`` grows in the transaction of every INSERT, UPDATE or DELETE
on ``paper``, ``claim`` and ``evidence``, whichever process, connection or kb version writes it: database
triggers do it, so no writer can forget. A reader keys cached results on it (the app's pages,
``kb.index.generation``): one primary-key read tells whether anything they were computed from changed. Runs
moving through the queue bump nothing (no cached result is computed from them); the evidence a run leaves
does. The counter starts at a random value, so a rebuilt index (a new database) never reads as the one it
replaced.

SQLite fires triggers per row (an UPDATE of a one-row table in the writer's transaction: microseconds; its
writers take turns anyway). On PostgreSQL, where writers of different rows run at once, the triggers are
deferred to the commit and bump once per transaction (a transaction-local flag says it did): the counter's
row is locked only while a transaction commits, the last lock it takes, so no writer waits on another's
long re-index and no two wait on each other; re-indexing thousands of notes bumps it once, not once per row
(updating one row many times in a transaction is slow there). A later migration that rebuilds one of these
tables on SQLite (``batch_alter_table``) drops its triggers and must create them again
(``tests/test_generation.py`` fails otherwise).

Revision ID: 0010g
Revises: 0009t
"""

import secrets

import sqlalchemy as sa
from alembic import op

revision = '0010g'
down_revision = '0009t'
branch_labels = None
depends_on = None

WATCHED = ("paper", "claim", "evidence")
BUMP = "UPDATE generation SET value = value + 1 WHERE id = 1"


def upgrade() -> None:
    op.create_table(
        'generation',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('value', sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint('id'),
    )
    op.execute(sa.text("INSERT INTO generation (id, value) VALUES (1, :start)")
               .bindparams(start=secrets.randbelow(2**40)))
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"""CREATE FUNCTION kb_bump_generation() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF current_setting('kb.generation_bumped', true) IS DISTINCT FROM 'yes' THEN
                    {BUMP};
                    PERFORM set_config('kb.generation_bumped', 'yes', true);
                END IF;
                RETURN NULL;
            END $$""")
        for table in WATCHED:
            op.execute(f"CREATE CONSTRAINT TRIGGER generation_{table} AFTER INSERT OR UPDATE OR DELETE "
                       f"ON {table} DEFERRABLE INITIALLY DEFERRED FOR EACH ROW "
                       f"EXECUTE FUNCTION kb_bump_generation()")
    else:
        for table in WATCHED:
            for event in ("INSERT", "UPDATE", "DELETE"):
                op.execute(f"CREATE TRIGGER generation_{table}_{event.lower()} AFTER {event} ON {table} "
                           f"BEGIN {BUMP}; END")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for table in WATCHED:
            op.execute(f"DROP TRIGGER IF EXISTS generation_{table} ON {table}")
        op.execute("DROP FUNCTION IF EXISTS kb_bump_generation()")
    else:
        for table in WATCHED:
            for event in ("insert", "update", "delete"):
                op.execute(f"DROP TRIGGER IF EXISTS generation_{table}_{event}")
    op.drop_table('generation')
