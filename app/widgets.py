"""Small rendering helpers the pages share: verdict and state badges, numbers, provenance, artifacts.

Note content (titles, statements, quotes, bodies) is rendered with ``st.markdown``/``st.text``,
which escape raw HTML; nothing here passes note text to ``unsafe_allow_html``.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import streamlit as st

from kb.artifact_store import ArtifactStore
from schemas import EvidenceRecord, Provenance, RunStatus, Verdict

#: Colour, icon and label of each claim state (see kb.library.STATES) and of grounding problems.
STATE_STYLE: dict[str, tuple[str, str, str]] = {
    "supported": ("green", ":material/check_circle:", "supported"),
    "refuted": ("red", ":material/cancel:", "refuted"),
    "inconclusive": ("orange", ":material/help:", "inconclusive"),
    "not_runnable": ("gray", ":material/block:", "not runnable"),
    "error": ("red", ":material/error:", "error"),
    "stale": ("yellow", ":material/schedule:", "stale"),
    "unverified": ("blue", ":material/radio_button_unchecked:", "unverified"),
    "unbound": ("gray", ":material/do_not_disturb_on:", "unbound"),
    "ungrounded": ("violet", ":material/link_off:", "ungrounded"),
}
#: CSS colours of the same states, for table cells.
STATE_CSS: dict[str, str] = {
    "supported": "#1a7f37", "refuted": "#cf222e", "inconclusive": "#bc4c00", "not_runnable": "#6e7781",
    "error": "#cf222e", "stale": "#9a6700", "unverified": "#0969da", "ungrounded": "#8250df",
}
RUN_STYLE: dict[str, tuple[str, str]] = {
    RunStatus.queued.value: ("gray", ":material/hourglass_empty:"),
    RunStatus.running.value: ("blue", ":material/progress_activity:"),
    RunStatus.succeeded.value: ("green", ":material/check:"),
    RunStatus.failed.value: ("red", ":material/error:"),
    RunStatus.cancelled.value: ("gray", ":material/cancel:"),
}
GROUNDING_STYLE: dict[str, tuple[str, str, str]] = {
    "grounded": ("green", ":material/format_quote:", "quote found in source"),
    "not_found": ("violet", ":material/link_off:", "quote NOT in source"),
    "no_quote": ("gray", ":material/format_quote:", "no source quote"),
    "no_source": ("gray", ":material/description:", "no source text to check"),
}
IMAGE_SUFFIXES = (".png", ".svg", ".jpg", ".jpeg", ".gif", ".webp")
TEXT_SUFFIXES = (".txt", ".log", ".json", ".csv", ".tsv", ".md", ".yaml")


def state_badge(state: str, count: int | None = None, help: str | None = None) -> None:  # noqa: A002
    """A coloured badge of a claim state (optionally with a count)."""
    colour, icon, label = STATE_STYLE.get(state, ("gray", None, state))
    st.badge(f"{count} {label}" if count is not None else label, color=colour, icon=icon, help=help)  # type: ignore[arg-type]


def run_badge(status: str) -> None:
    """A coloured badge of a run's status."""
    colour, icon = RUN_STYLE.get(status, ("gray", None))
    st.badge(status, color=colour, icon=icon)  # type: ignore[arg-type]


def verdict_badges(record: EvidenceRecord) -> None:
    """The verdict of a piece of evidence as badges: kind, proxy, stale."""
    verdict = record.verdict
    if verdict is None:
        st.badge("no verdict", color="gray")
    else:
        colour, icon, label = STATE_STYLE.get(verdict.kind.value, ("gray", None, verdict.kind.value))
        st.badge(label, color=colour, icon=icon)  # type: ignore[arg-type]
        if verdict.proxy:
            st.badge("small-scale proxy", color="orange", icon=":material/compress:",
                     help="The evidence was made at a smaller scale than the claim: it cannot settle the claim.")
    if record.stale:
        st.badge(f"stale: {record.stale_reason}", color="yellow", icon=":material/schedule:")


def format_value(value: Any) -> str:
    """A metric value for display: numbers to 4 significant digits, lists shortened."""
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


def scale_text(scale: dict[str, Any] | None) -> str:
    """One line describing a scale (claim or evidence)."""
    if not scale:
        return "not stated"
    parts = []
    if scale.get("name"):
        parts.append(f"**{scale['name']}**")
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


def provenance_rows(prov: Provenance) -> list[dict[str, str]]:
    """Provenance as (field, value) rows, most useful first; empty fields left out."""
    rows: list[tuple[str, Any]] = [
        ("device", prov.device + (f" ({prov.gpu_name})" if prov.gpu_name else "")),
        ("when", prov.finished_at.strftime("%Y-%m-%d %H:%M UTC") if prov.finished_at else None),
        ("wall time", f"{prov.wall_seconds:.1f} s" if prov.wall_seconds is not None else None),
        ("GPU time", f"{prov.gpu_seconds:.1f} s" if prov.gpu_seconds is not None else None),
        ("seed", prov.seed),
        ("model", prov.model_id),
        ("model revision", prov.model_revision),
        ("dtype", prov.dtype),
        ("weights sha256", prov.weights_hash[:16] + "…" if prov.weights_hash else None),
        ("data sha256", prov.data_hash[:16] + "…" if prov.data_hash else None),
        ("analyzer", f"{prov.analyzer} v{prov.analyzer_version}"),
        ("kb", prov.kb_version + (f" @ {prov.git_commit[:10]}" if prov.git_commit else "")),
        ("python", prov.python),
        ("packages", ", ".join(f"{k} {v}" for k, v in sorted(prov.packages.items()))),
        ("params sha256", prov.params_hash[:16] + "…"),
    ]
    for key, value in sorted((prov.model_extra or {}).items()):
        if key != "extra":
            rows.append((key.replace("_", " "), value))
    for key, value in sorted(((prov.model_extra or {}).get("extra") or {}).items()):
        rows.append((key.replace("_", " "), format_value(value) if not isinstance(value, str) else value))
    return [{"field": k, "value": str(v)} for k, v in rows if v not in (None, "", {})]


def _run_path(artifact: str) -> Path:
    """Where the analyzer wrote the file in its output folder: the part after ``evidence/<ab>/<sha256>/``."""
    parts = Path(artifact).parts
    return Path(*parts[3:]) if len(parts) > 3 and parts[0] == "evidence" else Path(parts[-1])


def show_artifacts(store: ArtifactStore, artifacts: list[str], key: str) -> None:
    """Plots inline (PNG/SVG), text files (logs, metrics) in expanders, read through the artifact store."""
    local = {a: store.local_path(a) for a in artifacts}  # a remote store downloads each file once, into its cache
    present = {a: p for a, p in local.items() if p is not None}
    images: dict[str, Path] = {}  # one image per plot: PNG when an SVG of the same plot exists too
    for artifact in sorted(present, key=lambda a: not a.lower().endswith(".png")):
        if artifact.lower().endswith(IMAGE_SUFFIXES):
            images.setdefault(Path(artifact).stem, present[artifact])
    if len(images) == 1:
        (stem, path), = images.items()
        st.image(str(path), caption=stem.replace("_", " "), width="stretch")
    elif images:
        tabs = st.tabs([stem.replace("_", " ") for stem in images], key=f"{key}_plots")
        for tab, path in zip(tabs, images.values(), strict=True):
            with tab:
                st.image(str(path), width="stretch")
    # Files the analyzer wrote at the top of its output (log, metrics) open inline; the rest (checkpoints,
    # per-model folders) go into one table, so a sweep's dozens of files do not bury the verdict.
    texts = [a for a in present if a.lower().endswith(TEXT_SUFFIXES) and len(_run_path(a).parts) == 1]
    others = [a for a in present if a not in texts and not a.lower().endswith(IMAGE_SUFFIXES)]
    for artifact in texts:
        name = Path(artifact).name
        with st.expander(name, icon=":material/article:"):
            text = present[artifact].read_text(encoding="utf-8", errors="replace")
            language = "json" if name.endswith(".json") else None
            if language == "json":
                with contextlib.suppress(ValueError):
                    text = json.dumps(json.loads(text), indent=2)
            st.code(text[-20_000:], language=language, height=300 if text.count("\n") > 15 else "content")
    if others:
        with st.expander(f"Other files ({len(others)})", icon=":material/folder_open:"):
            st.dataframe([{"file": str(_run_path(a)), "bytes": present[a].stat().st_size, "stored at": a}
                          for a in others], hide_index=True, key=f"{key}_files")
    missing = [a for a, p in local.items() if p is None]
    if missing:
        st.caption(f"{len(missing)} artifact file(s) missing from the artifact store {store.url}: {', '.join(missing)}")


def empty_state(message: str, icon: str = ":material/info:") -> None:
    """A friendly 'nothing here yet, here is what to do' box."""
    st.info(message, icon=icon)
