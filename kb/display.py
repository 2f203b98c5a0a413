"""How values are written for a reader, the same in the CLI and the app: metric values, parameter
counts, scales, a verdict's observed value and a run's status.

One home for these, so ``kb evidence`` and the Note page round a number, name a scale and call a
run "not runnable" alike. Plain text only (the app adds its own Markdown emphasis).
"""

from __future__ import annotations

from typing import Any

from schemas import Verdict, VerdictKind

#: What a run that ended without executing (its analyzer raised ``NotRunnable``) shows as its status.
NOT_RUNNABLE = "not runnable"


def format_value(value: Any) -> str:
    """A metric value for display: numbers to 4 significant digits, lists shortened, None as a dash."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list):
        shown = ", ".join(format_value(v) for v in value[:6])
        return f"[{shown}{', …' if len(value) > 6 else ''}]"
    return str(value)


def format_count(value: float | None) -> str:
    """Parameter/data counts the way papers write them: 650M, 8M, 1.2B."""
    if value is None:
        return "—"
    for unit, size in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(value) >= size:
            return f"{value / size:.3g}{unit}"
    return f"{value:g}"


def scale_text(scale: dict[str, Any] | None, *, bold_name: bool = False) -> str:
    """One line describing a scale (a claim's or an evidence's): 'smoke · 207K parameters · UniRef50'."""
    if not scale:
        return "not stated"
    parts = []
    if scale.get("name"):
        parts.append(f"**{scale['name']}**" if bold_name else str(scale["name"]))
    if scale.get("parameters") is not None:
        parts.append(f"{format_count(scale['parameters'])} parameters")
    if scale.get("data"):
        parts.append(str(scale["data"]))
    if scale.get("description"):
        parts.append(str(scale["description"]))
    return " · ".join(parts) or "not stated"


def observed_text(verdict: Verdict) -> str:
    """The regenerated value, with the seed spread when there is one."""
    text = format_value(verdict.observed)
    if verdict.spread is not None:
        text += f" ± {verdict.spread:.2g}"
    return text


def run_status(status: str, verdict: Verdict | None) -> str:
    """A run's status as a reader needs it: a run whose analyzer could not execute here did not succeed."""
    return NOT_RUNNABLE if verdict is not None and verdict.kind is VerdictKind.not_runnable else status
