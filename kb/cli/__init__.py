"""The ``kb`` command line: a thin typer + rich shell over ``kb.core.KnowledgeBase``.

Every listing command takes ``--json`` and then prints a JSON array of objects, each with an ``id``
(the note id: its file name without extension). Errors go to stderr with the file, line or field and
a hint, and the exit code is non-zero. The commands live by topic in ``notes``, ``runs``, ``agents``
and ``serve``; analyzer packages add their own (``kb probe``, ``kb langevin``) through the registry.
"""

# Each module adds its commands to the app on import, in this order (the order `kb --help` lists them).
# isort: off
from kb.cli import notes  # noqa: F401
from kb.cli import add  # noqa: F401
from kb.cli import runs  # noqa: F401
from kb.cli import agents  # noqa: F401
from kb.cli import serve  # noqa: F401
# isort: on
from kb.cli.common import app

__all__ = ["app"]


def _add_analyzer_commands() -> None:
    """Commands analyzer packages contribute (``kb probe``, ``kb models``, ``kb langevin``, ...)."""
    from analyzers import registry

    for hook in registry.command_hooks():
        hook(app)


_add_analyzer_commands()
