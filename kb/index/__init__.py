"""The index: a database cache of the notes and the home of runs and evidence. Its tables and engine
(``database``), schema migrations (``migrate`` with Alembic's ``migrations/``), incremental indexing of the
notes folder and queries over it (``indexing``), and full-text search (``search``, ``search_postgres``)."""
