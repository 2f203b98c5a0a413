"""Field names a note is given, checked against the schema at every depth: a key the note does not have and
the schema does not know, one typo from one it does (``quality_scroe``, ``publication.yeer``), is a mistake.

``kb set`` refuses such a key (``--new-field`` adds it on purpose) and ``kb validate`` warns about one a note
already holds (kept verbatim as an extra field, so nothing else would say so). The known names at a depth
are the fields of the schema's model there (``Publication`` under ``publication``) and the keys the note
already has there; list items are reached by index or, for claims, by id (``claims.late-layers.expect``).
"""

from __future__ import annotations

import difflib
import types
import typing
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from schemas.note import PaperNote

#: How close a new key must be to a known one to be taken for a typo of it (difflib's ratio).
CUTOFF = 0.8


@dataclass(frozen=True)
class NearMiss:
    """A key (dotted, as typed) that is one typo from a known field (dotted, as it should be)."""

    key: str
    known: str

    def text(self) -> str:
        """What ``kb set`` says when it refuses the key."""
        return f"not a field of this note: did you mean `{self.known}`? (use --new-field to add a new field)"


def _models_in(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model a field holds, directly, optionally or as list items (``list[Author]``: Author)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) in (typing.Union, types.UnionType, list):
        for arg in typing.get_args(annotation):
            if (found := _models_in(arg)) is not None:
                return found
    return None


def typos(a: str, b: str) -> int:
    """Edits from ``a`` to ``b``, a swap of neighbours counting as one (optimal string alignment distance)."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, char in enumerate(a, 1):
        row = [i]
        for j, other in enumerate(b, 1):
            row.append(min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (char != other)))
            if i > 1 and j > 1 and char == b[j - 2] and a[i - 2] == other:
                row[j] = min(row[j], previous2[j - 2] + 1)
        previous2, previous = previous, row
    return previous[-1]


def typo_of(key: str, known: list[str]) -> str | None:
    """The known name ``key`` is one typo from (``yeer``: ``year``), or failing that the closest by difflib's
    ratio above ``CUTOFF`` (``quality_scroe``); None when ``key`` is known or like nothing known."""
    if key in known:
        return None
    one = [name for name in known if typos(key, name) == 1]
    found = one or difflib.get_close_matches(key, known, n=1, cutoff=CUTOFF)
    return found[0] if found else None


def _near(part: str, model: type[BaseModel] | None, present: list[str]) -> str | None:
    """The known name ``part`` is a typo of at its depth (the model's fields, the note's keys), or None."""
    return typo_of(part, sorted({*(model.model_fields if model is not None else ()), *present}))


def near_miss(data: dict[str, Any], dotted: str) -> NearMiss | None:
    """The first part of ``dotted`` that the note lacks, the schema does not know, and that is a typo of a
    known name at its depth; ``data``: the note's frontmatter as plain data
    (``kb.notes.edits.frontmatter_data``)."""
    model: type[BaseModel] | None = PaperNote
    node: Any = data
    walked: list[str] = []
    for part in dotted.split("."):
        if isinstance(node, list):  # an item by index, or a claim by its id; its model is the list's
            index = (
                int(part)
                if part.isdigit()
                else next(
                    (
                        i
                        for i, item in enumerate(node)
                        if isinstance(item, dict) and str(item.get("id")) == part
                    ),
                    None,
                )
            )
            node = node[index] if index is not None and index < len(node) else None
            walked.append(part)
            continue
        present = list(node) if isinstance(node, dict) else []
        if (known := _near(part, model, present)) is not None:
            return NearMiss(".".join([*walked, part]), ".".join([*walked, known]))
        field = model.model_fields.get(part) if model is not None else None
        model = _models_in(field.annotation) if field is not None else None
        node = node.get(part) if isinstance(node, dict) else None
        walked.append(part)
    return None


def near_miss_fields(meta: BaseModel, prefix: str = "") -> list[NearMiss]:
    """Every extra key of a validated frontmatter (at any depth) that is a typo of a field of its model: kept
    verbatim by the schema, so only this says that ``publication.yeer`` was meant to be
    ``publication.year``."""
    found = []
    fields = type(meta).model_fields
    for key in meta.model_extra or {}:
        if (near := typo_of(key, sorted(fields))) is not None:
            found.append(NearMiss(f"{prefix}{key}", f"{prefix}{near}"))
    for name in fields:
        value = getattr(meta, name, None)
        items = enumerate(value) if isinstance(value, list) else [(None, value)]
        for index, item in items:
            if isinstance(item, BaseModel):
                step = name if index is None else f"{name}.{getattr(item, 'id', index)}"
                found += near_miss_fields(item, f"{prefix}{step}.")
    return found
