"""What a list metric of an analyzer's result is plotted against: its axes, read from the result itself.

A result holds lists along different axes: per layer (``layers.logit_lens_kl``,
``attention_entropy_by_layer``), per temperature (``test_error_by_temperature`` beside the ``temperatures`` it
was sampled at), per trained depth (``val_perplexity_by_depth`` beside ``depths``), per model. Analyzers name
them consistently (``layers.*``, ``*_by_<axis>`` with the axis values under ``<axis>s``), so the axes of a
list follow from its path and the result it sits in, with no table per analyzer. Compare offers a metric only
the axes it has: a per-temperature metric is never drawn against layer depth.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

RELATIVE_DEPTH = "relative depth"
LAYER = "layer"
INDEX = "index"
#: Axes of a per-layer list: depth relative to the model's (models of different depth line up), then the
#: layer.
LAYER_AXES = (RELATIVE_DEPTH, LAYER)


def _numbers(value: Any) -> bool:
    return (isinstance(value, list) and bool(value)
            and all(v is None or (isinstance(v, int | float) and not isinstance(v, bool)) for v in value))


def _axis_word(part: str) -> str | None:
    """'test_error_by_temperature' -> 'temperature'; None when the part names no axis."""
    for marker in ("_by_", "_per_"):
        if marker in part:
            return part.rsplit(marker, 1)[1] or None
    return None


def _per_layer(parts: list[str]) -> bool:
    return any(p == "layers" or p.startswith("layers_") or _axis_word(p) == "layer" for p in parts)


def _coordinates(metrics: dict[str, Any], parts: list[str], key: str, length: int) -> list[float] | None:
    """The numeric list named ``key`` of ``length`` items in the dict holding the metric or any dict above
    it."""
    scopes = [metrics]
    for part in parts[:-1]:
        inner = scopes[-1].get(part) if isinstance(scopes[-1], dict) else None
        if not isinstance(inner, dict):
            break
        scopes.append(inner)
    for scope in reversed(scopes):  # the nearest first
        found = scope.get(key)
        if _numbers(found) and len(found) == length and all(v is not None for v in found):
            return [float(v) for v in found]
    return None


def axes(metrics: dict[str, Any], path: str) -> dict[str, list[float]]:
    """The axes the list at ``path`` can be plotted against, each with the x value of every item, best first.

    A per-layer list has the relative depth (layer / (layers - 1)) and the layer. A list ``*_by_<axis>`` (or
    inside one) has ``<axis>`` where the result holds its values as ``<axis>s`` of the same length (the
    temperatures, the depths); a list whose own name says nothing (``test_errors_by_model.transformer``) has
    the axis of a top-level list of values of its length; any other list has only its items' position,
    ``index``.
    """
    parts = path.split(".")
    scope: Any = metrics
    for part in parts:
        scope = scope.get(part) if isinstance(scope, dict) else None
    if not _numbers(scope):
        return {}
    length = len(scope)
    positions = [float(i) for i in range(length)]
    if _per_layer(parts):
        return {RELATIVE_DEPTH: [i / max(length - 1, 1) for i in range(length)], LAYER: positions}
    found: dict[str, list[float]] = {}
    leaf = _axis_word(parts[-1])
    if leaf is not None:  # the list names its own axis: its values, else the items' positions along it
        return {leaf: _coordinates(metrics, parts, f"{leaf}s", length) or positions}
    words = [w for w in (_axis_word(p) for p in reversed(parts[:-1])) if w]
    for word in words:
        values = _coordinates(metrics, parts, f"{word}s", length)
        if values is not None:
            found.setdefault(word, values)
    # in a dict named for another axis ('test_errors_by_model.transformer'): the result's
    if words and not found:
        for key, value in metrics.items():
            if key.endswith("s") and _axis_word(key) is None and key != parts[-1] and _numbers(value) \
                    and len(value) == length and None not in value:
                found[key[:-1]] = [float(v) for v in value]
                break
    return found or {INDEX: positions}


def list_metric_paths(metrics: dict[str, Any], prefix: str = "") -> dict[str, int]:
    """Dotted paths of the numeric lists in a result (e.g. ``layers.logit_lens_kl``), with their lengths.

    A list counts when every item is a number or null (NaN is stored as null); lists of lists do not.
    """
    found: dict[str, int] = {}
    for key, value in metrics.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            found.update(list_metric_paths(value, prefix=f"{path}."))
        elif _numbers(value) and any(v is not None for v in value):
            found[path] = len(value)
    return found


def scalar(metrics: dict[str, Any], path: str) -> float | None:
    """The number at dotted ``path`` of a result (``value``, ``layers.20.kl_to_final``), else None."""
    scope: Any = metrics
    for part in path.split("."):
        if isinstance(scope, dict):
            scope = scope.get(part)
        elif isinstance(scope, list) and part.isdigit() and int(part) < len(scope):
            scope = scope[int(part)]
        else:
            return None
    if isinstance(scope, bool) or not isinstance(scope, int | float) or not math.isfinite(scope):
        return None
    return float(scope)


@dataclass(frozen=True)
class Series:
    """One list a run recorded, with the axis it is plotted against (``axes``' best)."""

    path: str
    axis: str
    x: list[float]
    y: list[float | None]


def series(metrics: dict[str, Any]) -> list[Series]:
    """Every numeric list of a result (per step, layer, temperature, depth...) with its best axis: what a
    run's page plots. Lists of one item are left out (a point is no curve)."""
    found = []
    for path, length in list_metric_paths(metrics).items():
        if length < 2:
            continue
        axis, x = next(iter(axes(metrics, path).items()))
        scope: Any = metrics
        for part in path.split("."):
            scope = scope[part]
        found.append(Series(path, axis, x, [None if v is None else float(v) for v in scope]))
    return found


OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge, "<=": operator.le, "!=": operator.ne, "==": operator.eq, "=": operator.eq,
    ">": operator.gt, "<": operator.lt,
}
_CONDITION = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*(>=|<=|!=|==|=|>|<)\s*(-?[\d.]+(?:[eE][-+]?\d+)?)\s*$")


class BadCondition(ValueError):
    """A metric filter that does not read as ``metric op number``."""


def parse_condition(text: str) -> tuple[str, str, float]:
    """'value > 2' -> ('value', '>', 2.0); ``BadCondition`` saying the form otherwise."""
    found = _CONDITION.match(text)
    if found is None:
        raise BadCondition(
            f"{text.strip()!r} is not a metric filter: write METRIC OP NUMBER, e.g. 'value > 2' "
            f"(OP one of {' '.join(o for o in OPERATORS if o != '=')})"
        )
    try:
        number = float(found.group(3))
    except ValueError:
        raise BadCondition(f"{found.group(3)!r} is not a number") from None
    return found.group(1), found.group(2), number


def holds(metrics: dict[str, Any], condition: tuple[str, str, float]) -> bool:
    """Whether a result's metric meets ``condition``; a result without that number does not."""
    path, op, number = condition
    value = scalar(metrics, path)
    return value is not None and OPERATORS[op](value, number)
