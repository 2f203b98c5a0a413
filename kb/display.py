"""How values are written for a reader, the same in the CLI and the app: metric values, parameter
counts, scales, a verdict's observed value and a run's status.

One home for these, so ``kb evidence`` and the Note page round a number, name a scale and call a
run "not runnable" alike. Plain text only (the app adds its own Markdown emphasis).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from analyzers.files import json_safe

if TYPE_CHECKING:  # types only: the schemas (pydantic) load where a value is shown, not for `kb list`
    from schemas import Claim, Provenance, Verdict

#: What a run that ended without executing (its analyzer raised ``NotRunnable``) shows as its status.
NOT_RUNNABLE = "not runnable"

# Characters a terminal acts on instead of showing: C0 and C1 controls (ESC starts colour, title and hyperlink
# sequences; C1's 0x9b is a one-byte CSI), DEL, the bidirectional overrides that reorder what is shown
# ("Trojan source"), and lone surrogates (a file name's bytes that are not UTF-8), which no terminal can
# print.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
_KEPT_IN_BLOCKS = "\n\t"  # a note's body keeps its lines and tabs


def _visible(char: str) -> str:
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8, as Python keeps it in a file name
        return f"\\x{code - 0xDC00:02x}"
    return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def terminal_text(value: object, *, block: bool = False) -> str:
    """User text (titles, file names, tags, queries, error messages quoting them) safe to print in a terminal:
    every control or escape character written out as Python would (ESC as ``\\x1b``, a newline as ``\\n``),
    so text can neither restyle the terminal nor break a one-line message. ``block``: text shown as a block (a
    note's body) keeps its newlines and tabs."""
    text = value if isinstance(value, str) else str(value)
    return _UNSAFE.sub(
        lambda m: m.group() if block and m.group() in _KEPT_IN_BLOCKS else _visible(m.group()), text
    )


#: What makes Markdown text a link, an image, code, HTML, maths or a Streamlit colour (``:red[...]``): the
#: characters ``markdown_text`` escapes. Emphasis and headings are left alone: in a one-line message they can
#: only restyle it, and escaping every ``_`` would garble file and field names.
_MARKDOWN = re.compile(r"([\\`*\[\]<$~])")


def markdown_text(value: object, *, brackets: bool = True) -> str:
    """Text that is not Markdown (an error quoting a note's file name or a path, a message from an analyzer)
    shown where Markdown is rendered (the app's messages), with what Markdown reads as a link, an image, code,
    HTML or maths escaped: a name like ``[x](https://...)`` or ``![x](...)`` shows as written, never a link.
    ``brackets=False`` leaves ``[`` and ``]`` to the caller (``st.badge`` escapes them itself)."""
    text = value if isinstance(value, str) else str(value)
    escaped = _MARKDOWN.sub(
        lambda m: m.group() if not brackets and m.group() in "[]" else f"\\{m.group()}", text
    )
    return _no_shortcodes(_no_autolinks(escaped))


# What GitHub-flavoured Markdown (Streamlit's) turns into a link without brackets: a bare URL or 'www.' name.
_AUTOLINK = re.compile(r"(?i)\b(https?|ftp|mailto|file|data|javascript)(:)|\b(www)(\.)")


def _no_autolinks(text: str) -> str:
    """``text`` with a backslash before the ':' of a bare URL (and the '.' of 'www.'), which Markdown then
    shows as written, never as a link."""
    return _AUTOLINK.sub(lambda m: f"{m.group(1) or m.group(3)}\\{m.group(2) or m.group(4)}", text)


# Streamlit's shortcodes: ':material/verified:' draws an icon, ':smile:' an emoji and ':streamlit:' a logo,
# so a claim could wear kb's own "verified" icon. A backslash does not stop them; a colon written as the HTML
# entity '&#58;' does, and shows as ':'. Which colon matters differs (measured in headless Chromium,
# tests/test_browser_user_text.py): the opening one for icons and emoji, the closing one for the logo. The
# lookahead finds, in ':smile:smile:', the second name's opening colon (the first one's closing colon) too.
_SHORTCODE = re.compile(r":(?=[A-Za-z0-9_+\-]+(?:/[A-Za-z0-9_]+)?:)")


def _no_shortcodes(text: str) -> str:
    """``text`` with every shortcode-shaped ``:name:`` shown as written, never as an icon, emoji or logo."""
    return _SHORTCODE.sub("&#58;", text.replace(":streamlit:", ":streamlit&#58;"))


def markdown_body(text: str) -> str:
    """A note's Markdown body as Markdown without what makes the reader's browser fetch or follow anything:
    images, links, autolinks and raw HTML are shown as written (``[``, ``]`` and ``<`` escaped, bare URLs
    broken), headings, lists, emphasis, tables and code stay Markdown. Opening a shared note must not tell
    a third party who read it and when."""
    return _no_autolinks(re.sub(r"([\\\[\]<])", r"\\\1", text))


def code_span(value: object) -> str:
    """``value`` as one Markdown code span that its own backticks cannot close (the fence is longer than any
    run of backticks inside it), on one line: user text shown as code, never as Markdown."""
    text = (value if isinstance(value, str) else str(value)).replace("\r", " ").replace("\n", " ")
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def terminal_json(data: Any, *, indent: int | None = 2) -> str:
    """``data`` as indented JSON safe for a terminal: non-ASCII text stays readable, and the characters
    :func:`terminal_text` escapes are written as JSON ``\\u`` escapes (the same data, nothing a terminal acts
    on, and a file name's non-UTF-8 bytes as the surrogates Python reads them as). ``indent=None``: one line
    (a JSON Lines record)."""
    # Strict JSON (no NaN or Infinity, which JSON has not): a value a note or a record made non-finite is
    # null.
    text = json.dumps(json_safe(data), ensure_ascii=False, indent=indent, default=str, allow_nan=False)
    # json already escapes C0 controls inside strings: one met here is the layout's own newline.
    return _UNSAFE.sub(lambda m: m.group() if m.group() < " " else f"\\u{ord(m.group()):04x}", text)


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


def claim_scale_text(claim: Claim, *, bold_name: bool = False) -> str:
    """The scale a claim is about, as the note states it now ('650M parameters · UniRef50', 'not stated').

    The one way every surface says a claim's scale (the claim's own side and the side that compares it with
    the evidence's scale, in the app and ``kb evidence``), read from the claim, never from a verdict, which
    may not repeat it (a run that could not execute records none).
    """
    return scale_text(claim.scale.model_dump(exclude_none=True) if claim.scale else None, bold_name=bold_name)


def observed_text(verdict: Verdict) -> str:
    """The regenerated value, with the seed spread when there is one."""
    text = format_value(verdict.observed)
    if verdict.spread is not None:
        text += f" ± {verdict.spread:.2g}"
    return text


def run_status(status: str, verdict: Verdict | None) -> str:
    """A run's status as a reader needs it: a run whose analyzer could not execute here did not succeed."""
    from schemas import VerdictKind

    return NOT_RUNNABLE if verdict is not None and verdict.kind is VerdictKind.not_runnable else status


def body_within(body: str, limit: int, path: object) -> tuple[str, str | None]:
    """The part of a note's Markdown body to render, at most ``limit`` characters cut at a line end, and a
    line saying what is left out and where to read it all (None when the whole body fits).

    Rendering Markdown costs far more than its length (a 2 MB table took ``kb show`` a minute and 2 GB), so
    the CLI and the app render within the same budget (the setting ``max_rendered_body``).
    """
    if len(body) <= limit:
        return body, None
    cut = body.rfind("\n", 0, limit) + 1 or limit
    return body[:cut], (
        f"… {len(body) - cut:,} more characters of the body are not shown (rendering stops at "
        f"{limit:,}: setting max_rendered_body); the whole note is in {path}"
    )


def evidence_origin(provenance: Provenance | None) -> str | None:
    """Where and on what imported evidence was made ("regenerated on NVIDIA H100 80GB (host gpu7) on
    2026-11-28 by kb 0.9.0 (commit 1a2b3c4d5e6f); imported from lab.tar.gz on 2026-11-29"), or None for
    evidence made here: the one wording the CLI and the app show."""
    if provenance is None or provenance.imported_from is None:
        return None
    device = provenance.gpu_name or provenance.device
    host = f" (host {provenance.host})" if provenance.host else ""
    made = provenance.finished_at or provenance.started_at
    when = f" on {made:%Y-%m-%d}" if made else ""
    commit = f" (commit {provenance.git_commit[:12]})" if provenance.git_commit else ""
    imported = f" on {provenance.imported_at:%Y-%m-%d}" if provenance.imported_at else ""
    return (f"regenerated on {device}{host}{when} by kb "
            f"{provenance.kb_version}{commit}; imported from {provenance.imported_from}{imported}")
