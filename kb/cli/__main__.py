"""``python -m kb.cli``: the same as the ``kb`` command (used to start background workers)."""

from kb.cli import main

main()
