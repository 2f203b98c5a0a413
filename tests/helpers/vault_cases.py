"""A note's ``source_file`` that the vault must refuse, as a case (``Case``), the note that uses it (``bad_note``) and
the secret it must never show (``SECRET``): shared by the CLI and app tests (``test_vault.py``) and the browser's."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

# A note quotes the start of the secret (grounded, were it read); the rest ("4417") is only in the file, so any
# of it on screen is a leak.
SECRET = "TOP SECRET launch code 4417 never leaves this file"
SECRET_QUOTE = "TOP SECRET launch code"


@dataclass(frozen=True)
class Case:
    """One ``source_file`` a note may not use: its value, a quote from its target, what the vault holds."""

    name: str
    source_file: str
    quote: str
    make: Callable[[Path, Path], None] = lambda papers, outside: None
    prefix: tuple[str, ...] = field(default=())  # run kb under this (a root that honours file permissions)


def bad_note(case: Case) -> str:
    """A valid note but for its source_file (line 4); its one claim quotes the file it must not read."""
    return textwrap.dedent(f"""\
        ---
        paper_id: "vault:{case.name}"
        title: "Vault case {case.name}"
        source_file: {json.dumps(case.source_file)}
        claims:
          - id: probe
            statement: "A probe of the file."
            source:
              quote: {json.dumps(case.quote)}
        ---
        Body.
        """)
