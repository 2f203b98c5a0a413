"""Form building blocks: widgets generated from pydantic fields, and errors shown next to their fields.

Validation is always the project's own pydantic models (``schemas.PaperNote``, ``schemas.Claim``, an
analyzer's ``Params``): the form collects values, the model judges them, and each error is routed to
the slot under the widget it belongs to (``ErrorSlots``). Widget state lives in ``st.session_state``
under stable keys, initialised once (``init_value``), so edits survive reruns and page switches.
"""

from __future__ import annotations

import datetime as dt
import enum
import json
import types
from collections.abc import Iterable
from typing import Any, Literal, Union, get_args, get_origin

import streamlit as st
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

NONE = "(none)"


def init_value(key: str, value: Any) -> None:
    """Give a widget its starting value through session state (once; the user's edits win after)."""
    if key not in st.session_state:
        st.session_state[key] = value


def reset_values(prefix: str) -> None:
    """Forget every widget value whose key starts with ``prefix``."""
    for key in [k for k in st.session_state if isinstance(k, str) and k.startswith(prefix)]:
        del st.session_state[key]


class ErrorSlots:
    """Placeholders under widgets, filled with the validation errors that belong to each."""

    def __init__(self) -> None:
        self.slots: dict[tuple[str, ...], Any] = {}

    def slot(self, *path: str | int) -> None:
        """Reserve the spot for errors at ``path`` (e.g. ``('publication', 'year')``) right here."""
        self.slots[tuple(str(p) for p in path)] = st.empty()

    def show(self, errors: dict[tuple[str, ...], list[str]]) -> list[str]:
        """Show each error in the deepest reserved slot on its path; returns the errors with no slot."""
        unplaced: list[str] = []
        grouped: dict[tuple[str, ...], list[str]] = {}
        for loc, messages in errors.items():
            target = next((loc[:n] for n in range(len(loc), 0, -1) if loc[:n] in self.slots), None)
            if target is None:
                unplaced.extend(f"{'.'.join(loc) or 'note'}: {m}" for m in messages)
            else:
                grouped.setdefault(target, []).extend(messages)
        for target, messages in grouped.items():
            self.slots[target].caption("  \n".join(field_error(m) for m in dict.fromkeys(messages)))
        return unplaced


def field_error(message: str) -> str:
    """A validation message as small red text under a field (fits narrow columns, unlike a box)."""
    escaped = message.replace("[", "\\[").replace("]", "\\]")
    return f":red[:material/error: {escaped}]"


def errors_of(exc: ValidationError, prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], list[str]]:
    """A pydantic ValidationError as {location: [messages]}."""
    out: dict[tuple[str, ...], list[str]] = {}
    for err in exc.errors():
        loc = prefix + tuple(str(p) for p in err["loc"])
        message = err["msg"].removeprefix("Value error, ")
        out.setdefault(loc, []).append(message)
    return out


def validate(model: type[BaseModel], data: dict[str, Any]) -> dict[tuple[str, ...], list[str]]:
    """Errors of ``data`` against ``model`` (empty when valid)."""
    try:
        model.model_validate(data)
    except ValidationError as exc:
        return errors_of(exc)
    return {}


# -- widgets from pydantic fields --------------------------------------------------------------

def _unwrap(annotation: Any) -> tuple[Any, bool]:
    """(the annotation without None, whether None is allowed)."""
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        optional = len(args) < len(get_args(annotation))
        return (args[0] if len(args) == 1 else annotation), optional
    return annotation, False


def _bounds_text(info: FieldInfo) -> str:
    parts = []
    for item in info.metadata:
        for name, symbol in (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<"), ("min_length", "min length"),
                             ("max_length", "max length")):
            value = getattr(item, name, None)
            if value is not None:
                parts.append(f"{symbol} {value}")
    return f" ({', '.join(parts)})" if parts else ""


def field_kind(annotation: Any) -> str:
    """How a field is edited: bool, int, float, choice, str, list, or json."""
    base, _ = _unwrap(annotation)
    if base is bool:
        return "bool"
    if base is int:
        return "int"
    if base is float:
        return "float"
    if get_origin(base) is Literal or (isinstance(base, type) and issubclass(base, enum.Enum)):
        return "choice"
    if base is str:
        return "str"
    if get_origin(base) in (list, tuple) and all(a in (int, float, str) for a in get_args(base)):
        return "list"
    return "json"


def choices_of(annotation: Any) -> list[Any]:
    """The allowed values of a Literal or Enum field."""
    base, _ = _unwrap(annotation)
    if get_origin(base) is Literal:
        return list(get_args(base))
    return [member.value for member in base]


def to_widget(kind: str, value: Any) -> Any:
    """A field value as its widget holds it."""
    if kind == "list":
        return ", ".join(str(v) for v in value) if value else ""
    if kind == "json":
        return json.dumps(value) if value is not None else ""
    if kind == "str":
        return "" if value is None else str(value)
    if kind == "choice":
        return NONE if value is None else (value.value if isinstance(value, enum.Enum) else value)
    return value


def from_widget(kind: str, raw: Any, annotation: Any) -> Any:
    """A widget's value as the field takes it (strings left for pydantic to reject with a clear message)."""
    _, optional = _unwrap(annotation)
    if kind == "list":
        items = [p.strip() for p in str(raw).split(",") if p.strip()]
        base, _ = _unwrap(annotation)
        item_type = (get_args(base) or (str,))[0]
        converted: list[Any] = []
        for item in items:
            try:
                converted.append(item_type(item) if item_type is not str else item)
            except ValueError:
                converted.append(item)  # pydantic names the bad item
        return converted if items or not optional else None
    if kind == "json":
        if not str(raw).strip():
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    if kind == "str":
        return None if (raw == "" and optional) else raw
    if kind == "choice":
        return None if raw == NONE else raw
    if kind == "int" and isinstance(raw, float) and raw.is_integer():
        return int(raw)
    return raw


def field_input(name: str, info: FieldInfo, key: str, label: str | None = None) -> Any:
    """One widget for one pydantic field (its value already initialised under ``key``); returns the value."""
    kind = field_kind(info.annotation)
    label = label or name.replace("_", " ")
    help_text = (info.description or "") + _bounds_text(info)
    raw: Any
    if kind == "bool":
        raw = st.toggle(label, key=key, persist_state="session", help=help_text)
    elif kind == "int":
        raw = st.number_input(label, key=key, persist_state="session", step=1, help=help_text)
    elif kind == "float":
        raw = st.number_input(label, key=key, persist_state="session", format="%g", step=None, help=help_text)
    elif kind == "choice":
        _, optional = _unwrap(info.annotation)
        options = ([NONE] if optional else []) + choices_of(info.annotation)
        raw = st.selectbox(label, options, key=key, persist_state="session", help=help_text)
    elif kind == "list":
        raw = st.text_input(label, key=key, persist_state="session", help=help_text + " · comma-separated")
    elif kind == "json":
        raw = st.text_area(label, key=key, persist_state="session", help=help_text + " · JSON", height=80)
    else:
        raw = st.text_input(label, key=key, persist_state="session", help=help_text)
    return from_widget(kind, raw, info.annotation)


def jsonable(value: Any) -> Any:
    """Dates and enums as the YAML frontmatter writes them."""
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value


def overlay(original: dict[str, Any] | None, new: dict[str, Any], clearable: Iterable[str]) -> dict[str, Any]:
    """``original`` with the form's values on top: kept keys keep their order, cleared ones go.

    A key the form leaves empty disappears, unless the file wrote it as ``null`` (then it stays), so
    an untouched field never shows up as a change.
    """
    out = dict(original or {})
    for key in clearable:
        value = new.get(key)
        empty = value is None or value == "" or value == [] or value == {}
        if not empty:
            if not (key in out and out[key] == value and type(out[key]) in (int, float)):
                out[key] = value  # an equal number keeps its written form (650000000, not 650000000.0)
        elif key in out and out[key] is not None:
            del out[key]
    return out
