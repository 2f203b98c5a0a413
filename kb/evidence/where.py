"""Saved queries over notes: the one grammar of ``kb list --where`` and the app Library's filter box.

A condition is ``FIELD OP VALUE``, e.g. ``quality_score>=4``, ``decision=ACCEPT``,
``publication.venue~arXiv``:

* FIELD: any frontmatter field, dotted for nested ones (``publication.year``; through a list, any item:
  ``authors.name~Rives``); ``tags`` (any tag); ``state`` (any claim's state: ``state=refuted``); a claim
  state's name for how many claims are in it (``refuted>=1``, ``supported>0``); ``claims`` for how many
  claims the note has. A field no note has and kb does not know is an error naming the closest one.
* OP: ``=`` ``!=`` ``>`` ``>=`` ``<`` ``<=`` and ``~`` (contains); ``=``, ``!=`` and ``~`` ignore case.
* VALUE: as typed (quotes around it are dropped); compared as numbers when both sides are numbers, else as
  text (ISO dates order as text does).

Conditions combine with AND (a note must meet every one). A missing field meets only ``!=``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from kb.evidence.claim_states import ALL_STATES, LABELS
from schemas.note import PaperNote

OPERATORS = ("<=", ">=", "!=", "=", "<", ">", "~")  # two-character operators first: '>=' is not '>' then '='
_CONDITION = re.compile(r"^\s*([A-Za-z_][\w.\-]*)\s*(<=|>=|!=|=|<|>|~)\s*(.*?)\s*$", re.DOTALL)
#: Fields every note has besides its frontmatter: its tags, its claims' states and counts.
SPECIAL = ("tags", "state", "claims", *ALL_STATES)


class WhereError(ValueError):
    """A condition kb cannot read, or a field no note has: one line naming it and what to do."""


@dataclass(frozen=True)
class Condition:
    """One ``FIELD OP VALUE`` condition, as parsed."""

    field: str
    op: str
    value: str

    def text(self) -> str:
        """The condition as it is written (what the URL keeps and the error quotes)."""
        return f"{self.field}{self.op}{self.value}"


def parse(text: str) -> Condition:
    """One condition from its text; ``WhereError`` saying how it is written when it is not one."""
    found = _CONDITION.match(text)
    if found is None:
        raise WhereError(f"{text!r}: expected FIELD OP VALUE with OP one of {' '.join(OPERATORS)}, "
                         "e.g. \"quality_score>=4\" or \"decision=ACCEPT\"")
    field, op, value = found.groups()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1]
    return Condition(field, op, value)


def parse_all(texts: Iterable[str]) -> list[Condition]:
    """Every condition (blank ones, as an empty filter box gives, left out)."""
    return [parse(text) for text in texts if text.strip()]


def split(box: str) -> list[str]:
    """The conditions of one line of text, as the app's filter box (and its URL) holds them:
    ``;``-separated."""
    return [part.strip() for part in box.split(";") if part.strip()]


def _schema_fields(model: type[BaseModel], prefix: str = "") -> Iterator[str]:
    """The frontmatter's known fields, dotted (``publication.year``), from the schema's nested models."""
    for name, info in model.model_fields.items():
        yield f"{prefix}{name}"
        for arg in (info.annotation, *getattr(info.annotation, "__args__", ())):
            for inner in (arg, *getattr(arg, "__args__", ())):
                if isinstance(inner, type) and issubclass(inner, BaseModel) and name != "claims":
                    yield from _schema_fields(inner, f"{prefix}{name}.")


def _data_fields(data: Any, prefix: str = "") -> Iterator[str]:
    """The dotted fields a note's frontmatter has (through lists, their items' fields)."""
    if isinstance(data, Mapping):
        for key, value in data.items():
            yield f"{prefix}{key}"
            yield from _data_fields(value, f"{prefix}{key}.")
    elif isinstance(data, list):
        for item in data:
            yield from _data_fields(item, prefix)


def check_fields(conditions: list[Condition], metas: Iterable[Mapping[str, Any]]) -> None:
    """``WhereError`` for the first condition whose field kb does not know and no note has, with the
    closest."""
    unknown = [c for c in conditions if c.field not in SPECIAL]
    if not unknown:
        return
    known = set(SPECIAL) | set(_schema_fields(PaperNote))
    for meta in metas:
        known.update(_data_fields(meta))
    for condition in unknown:
        if condition.field not in known:
            near = difflib.get_close_matches(condition.field, sorted(known), n=1)
            raise WhereError(
                f"{condition.text()!r}: no note has a field {condition.field!r}"
                + (f"; did you mean `{near[0]}`?" if near else "")
                + " (frontmatter fields, dotted for nested ones, tags, state, claims or a claim state)"
            )


def _values(data: Any, parts: list[str]) -> list[Any]:
    """The values at a dotted path (every list item's, through a list); empty when there is none."""
    if not parts:
        return [item for item in (data if isinstance(data, list) else [data]) if item is not None]
    if isinstance(data, list):
        return [found for item in data for found in _values(item, parts)]
    if isinstance(data, Mapping) and parts[0] in data:
        return _values(data[parts[0]], parts[1:])
    return []


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(str(value).strip())
    except ValueError:
        return None


def _meets(actual: Any, op: str, wanted: str) -> bool:
    """One value against the condition's value: as numbers when both are, else as text."""
    left, right = _number(actual), _number(wanted)
    if left is None or right is None:
        text = str(actual).lower() if isinstance(actual, bool) else str(actual)
        if op in ("=", "!=", "~"):
            text, goal = text.casefold(), wanted.casefold()
            return goal in text if op == "~" else (text == goal) == (op == "=")
        return {"<": text < wanted, "<=": text <= wanted, ">": text > wanted, ">=": text >= wanted}[op]
    return {"=": left == right, "!=": left != right, "<": left < right, "<=": left <= right,
            ">": left > right, ">=": left >= right, "~": wanted.casefold() in str(actual).casefold()}[op]


def matches(
    condition: Condition, meta: Mapping[str, Any], tags: list[str], states: Mapping[str, int]
) -> bool:
    """Whether one note meets the condition: ``meta`` its frontmatter as JSON data, ``states`` its claims
    counted by state. A field with many values (tags, a list) meets ``!=`` when none equals the value, the
    others when any does."""
    if condition.field == "tags":
        values: list[Any] = list(tags)
    elif condition.field == "state":  # a state by its value or by its label ('not run', 'no analyzer')
        values = [s for s in ALL_STATES if states.get(s)] + [LABELS[s] for s in ALL_STATES if states.get(s)]
    elif condition.field == "claims":
        values = [sum(states.values())]
    elif condition.field in ALL_STATES:
        values = [states.get(condition.field, 0)]
    else:
        values = _values(meta, condition.field.split("."))
    if condition.op == "!=":
        return not any(_meets(value, "=", condition.value) for value in values)
    return any(_meets(value, condition.op, condition.value) for value in values)
