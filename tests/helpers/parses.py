"""How often notes' YAML is parsed (issue 40: an edit parsed its note about five times). Every parse of a
frontmatter, by ``kb.notes.files`` or ``kb.notes.edits``, is one ``ruamel.yaml.YAML.compose`` of its text;
this records each text composed, the real parse still made."""

from __future__ import annotations

from typing import Any

import pytest
from ruamel.yaml import YAML


def record_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts ``YAML.compose`` parses from now until the test ends, in order (a list filled as they come)."""
    texts: list[str] = []
    real = YAML.compose

    def compose(self: YAML, stream: Any) -> Any:
        texts.append(stream if isinstance(stream, str) else repr(stream))
        return real(self, stream)

    monkeypatch.setattr(YAML, "compose", compose)
    return texts
