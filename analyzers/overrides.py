"""``--set key=value``: the one place parameters typed on a command line are split, typed and checked.

``kb run``, ``kb verify`` and ``kb langevin run`` all take ``--set``. Each pair is split here
(``split_pairs``), then read against an analyzer's ``Params`` (``typed_overrides``): a text field keeps the
text as typed (``--set title=12`` stays '12'), any other field reads the value as YAML (numbers,
true/false, lists like ``layers=[2,4]``). A key the analyzer does not take, or a value its field cannot
hold, is an ``OverrideError`` with one line naming the key, the allowed keys or the expected type: nothing
is run or queued on input that would be dropped or misread.
"""

from __future__ import annotations

import difflib
import types
import typing
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError


class OverrideError(ValueError):
    """A ``--set`` pair that cannot be used: the message is one line saying which and what is allowed."""


def split_pairs(pairs: list[str]) -> dict[str, str]:
    """``key=value`` strings as {key: raw value}; a pair without '=' or without a key is an ``OverrideError``.

    Dashes in a key read as underscores (``--set max-steps=5`` is ``max_steps``), as in typer's flags.
    """
    split: dict[str, str] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise OverrideError(f"--set {pair!r} is not key=value (e.g. --set max_sequences=16)")
        split[key] = raw
    return split


def is_text_field(annotation: Any) -> bool:
    """Whether a Params field holds text (``str`` or ``str | None``), so its value is kept as typed."""
    if annotation is str:
        return True
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return bool(args) and all(a is str for a in args)
    return False


def type_text(annotation: Any) -> str:
    """A field's type as a reader writes it: 'int', 'list[float]', 'str | None'."""
    if isinstance(annotation, type) and not typing.get_args(annotation):
        return annotation.__name__
    return str(annotation).replace("typing.", "")


def _yaml_value(raw: Any) -> Any:
    if not isinstance(raw, str):  # already typed (a caller of kb.core rather than a command line)
        return raw
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        return YAML(typ="safe", pure=True).load(raw) if raw.strip() else None
    except YAMLError:
        return raw  # not YAML: the field's own check below says what it expects


def typed_overrides(raw: dict[str, Any], params: type[BaseModel], analyzer: str = "") -> dict[str, Any]:
    """Raw ``--set`` values as the typed values ``params`` takes, each checked against its field.

    ``analyzer`` names the analyzer in messages. Raises ``OverrideError`` on the first key ``params`` has
    no field for (listing the keys it has, and the nearest one) or value its field rejects (with the type).
    """
    fields = params.model_fields
    typed: dict[str, Any] = {}
    whose = f"{analyzer} " if analyzer else ""
    for key, text in raw.items():
        if key not in fields:
            near = difflib.get_close_matches(key, list(fields), n=1)
            hint = f"did you mean {near[0]}? " if near else ""
            raise OverrideError(f"--set {key}: unknown parameter {key!r} of {analyzer or 'this analyzer'}; "
                                f"{hint}allowed: {', '.join(sorted(fields))}")
        info = fields[key]
        value: Any = text if is_text_field(info.annotation) else _yaml_value(text)
        try:
            checked: Any = info.annotation
            if info.metadata:  # constraints such as ge=1 travel as metadata
                checked = typing.Annotated[info.annotation, *info.metadata]
            typed[key] = TypeAdapter(checked).validate_python(value)
        except ValidationError as error:
            reason = error.errors()[0]["msg"]
            expected = type_text(info.annotation)
            raise OverrideError(f"--set {key}={text}: {whose}parameter {key!r} expects {expected} "
                                f"({reason[:1].lower()}{reason[1:]})") from None
    return typed


def model_error_line(error: ValidationError, given: dict[str, Any]) -> str:
    """A ``ValidationError`` of a whole Params model as one line: the first failing field, its value, why."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "parameters"
    shown = f"={given[where]!r}" if where in given else ""
    return f"{where}{shown}: {first['msg']}"
