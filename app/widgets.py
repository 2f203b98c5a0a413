"""Small rendering helpers the pages share: verdict and state badges, numbers, provenance, artifacts.

Note content (titles, statements, quotes, bodies) is rendered with ``st.markdown``/``st.text``,
which escape raw HTML; nothing here passes note text to ``unsafe_allow_html``.
"""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path
from typing import Any

import streamlit as st

from kb import display
from kb.display import format_value
from kb.evidence.artifact_store import ArtifactStore
from kb.evidence.claim_states import label, verdict_state
from schemas import EvidenceRecord, Provenance, RunStatus

#: Colour, icon and label of each claim state (``kb.evidence.claim_states``: states and their labels) and of
#: grounding problems. Proxies differ from each other and from a settled verdict in colour and icon both.
STATE_STYLE: dict[str, tuple[str, str, str]] = {
    "supported": ("green", ":material/check_circle:", label("supported")),
    "refuted": ("red", ":material/cancel:", label("refuted")),
    "consistent_proxy": ("blue", ":material/trending_up:", label("consistent_proxy")),
    "at_odds_proxy": ("orange", ":material/trending_down:", label("at_odds_proxy")),
    "inconclusive": ("gray", ":material/help:", label("inconclusive")),
    "not_runnable": ("gray", ":material/block:", label("not_runnable")),
    "error": ("red", ":material/error:", label("error")),
    "stale": ("yellow", ":material/schedule:", label("stale")),
    "unverified": ("primary", ":material/radio_button_unchecked:", label("unverified")),
    "unbound": ("gray", ":material/do_not_disturb_on:", label("unbound")),
    "ungrounded": ("violet", ":material/link_off:", "ungrounded"),
}
#: CSS colours of the same states, for table cells.
STATE_CSS: dict[str, str] = {
    "supported": "#1a7f37", "refuted": "#cf222e", "consistent_proxy": "#0969da", "at_odds_proxy": "#bc4c00",
    "inconclusive": "#57606a", "not_runnable": "#6e7781", "error": "#cf222e", "stale": "#9a6700",
    "unverified": "#3b5bdb", "unbound": "#6e7781", "ungrounded": "#8250df",
}
#: What each state means, for the Library's legend and help texts.
STATE_HELP: dict[str, str] = {
    "supported": "the latest evidence supports the claim at the claim's own scale",
    "refuted": "the latest evidence contradicts the claim at the claim's own scale",
    "consistent_proxy": "a smaller-scale proxy agrees with the claim; it cannot settle a claim about "
    "larger models",
    "at_odds_proxy": "a smaller-scale proxy disagrees with the claim; it cannot settle a claim about "
    "larger models",
    "inconclusive": "inside the tolerance band or the seed spread, or the metric could not be trusted",
    "not_runnable": "the analyzer cannot run here (and says why)",
    "error": "the analyzer ran but the verdict could not be drawn",
    "stale": "evidence made with older code, an older kb, or other parameters: re-verify",
    "unverified": "bound to an analyzer but never run",
    "unbound": "no analyzer is bound to the claim, so nothing can re-verify it",
    "ungrounded": "the claim's quote is not found in the note's source text",
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
    colour, icon, name = STATE_STYLE.get(state, ("gray", None, label(state)))
    st.badge(f"{count} {name}" if count is not None else name, color=colour, icon=icon, help=help)  # type: ignore[arg-type]


def run_badge(status: str) -> None:
    """A coloured badge of a run's status."""
    colour, icon = RUN_STYLE.get(status, ("gray", None))
    st.badge(status, color=colour, icon=icon)  # type: ignore[arg-type]


def verdict_badges(record: EvidenceRecord) -> None:
    """The verdict of a piece of evidence as badges: kind, proxy, stale."""
    verdict = record.verdict
    state = verdict_state(verdict)
    if verdict is None or state is None:
        st.badge("no verdict", color="gray")
    else:
        state_badge(state.value, help=STATE_HELP.get(state.value))
        if verdict.proxy and state.value == "inconclusive":  # a proxy that leans neither way: say it is one
            st.badge(
                "small-scale proxy",
                color="gray",
                icon=":material/compress:",
                help="The evidence was made at a smaller scale than the claim: it cannot settle the claim.",
            )
    if record.stale:
        st.badge(f"stale: {record.stale_reason}", color="yellow", icon=":material/schedule:")


def scale_text(scale: dict[str, Any] | None) -> str:
    """One line describing a scale (claim or evidence), its preset's name in bold."""
    return display.scale_text(scale, bold_name=True)


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


_WORD = re.compile(r"[a-z]+")
_STOPWORDS = frozenset(
    {
        "the", "of", "vs", "by", "and", "over", "in", "to", "at", "with", "when", "is", "per", "or", "on",
        "for", "than", "its", "from", "made", "true", "false",
    }
)


def _words(text: str) -> set[str]:
    """Content words of a metric path, a description or a plot's file name, singular (``ranks`` ->
    ``rank``)."""
    return {w[:-1] if len(w) > 3 and w.endswith("s") else w
            for w in _WORD.findall(text.lower()) if len(w) > 1 and w not in _STOPWORDS}


def plot_order(stems: list[str], metric: str | None, description: str | None = None) -> list[str]:
    """The plots with the one that shows the claim's metric first, the rest in their order.

    A plot shows a metric when its file name shares words with the metric's path (weighed double) or
    with the metric's description (``late_half_kl_drop_fraction``: "share of the logit-lens KL ..." ->
    ``logit_lens.png``); with no shared word the order is kept.
    """
    if not metric or not stems:
        return stems
    in_path, in_description = _words(metric), _words(description or "")

    def score(stem: str) -> int:
        words = _words(stem)
        return 2 * len(words & in_path) + len(words & in_description)

    best = max(stems, key=score)  # the first of equals: max keeps the earliest
    return [best, *(s for s in stems if s != best)] if score(best) > 0 else stems


def _full_width_dialog(path: Path, title: str) -> None:
    @st.dialog(title, width=2400)  # as wide as the window allows: a 2x3 figure needs every pixel
    def show() -> None:
        st.image(str(path), width="stretch")

    show()


def _plot(path: Path, title: str, key: str, caption: str | None = None) -> None:
    """One plot at its own size up to the width it is given (never blown up past its pixels), and a button
    that shows it as wide as the window."""
    st.image(str(path), caption=caption, width="content")
    # A key fit for a CSS class (Streamlit marks the button's container with it): claim keys hold a '#'.
    if st.button(
        "Full width",
        key=re.sub(r"[^A-Za-z0-9_-]", "_", f"{key}_wide"),
        icon=":material/open_in_full:",
        type="tertiary",
        help="Show this plot as wide as the window",
    ):
        _full_width_dialog(path, title)


def show_plots(store: ArtifactStore, artifacts: list[str], key: str, metric: str | None = None,
               metric_description: str | None = None) -> None:
    """The plots among ``artifacts`` (PNG/SVG, read through the artifact store), one tab each: the plot of
    ``metric``, the claim's own, opens first; each can be shown as wide as the window."""
    present = {a: p for a in artifacts if a.lower().endswith(IMAGE_SUFFIXES) and (p := store.local_path(a))}
    found: dict[str, Path] = {}  # one image per plot: PNG when an SVG of the same plot exists too
    for artifact in sorted(present, key=lambda a: not a.lower().endswith(".png")):
        found.setdefault(Path(artifact).stem, present[artifact])
    images = {stem: found[stem] for stem in plot_order(list(found), metric, metric_description)}
    # A plot's name is its file's (a bundle names its own): shown as text where Markdown renders
    titles = [display.markdown_text(stem.replace("_", " ")) for stem in images]
    if len(images) == 1:
        (path,) = images.values()
        _plot(path, titles[0], f"{key}_plot_0", caption=titles[0])
    elif images:
        tabs = st.tabs(titles, key=f"{key}_plots", default=titles[0])
        for number, (tab, title, path) in enumerate(zip(tabs, titles, images.values(), strict=True)):
            with tab:
                _plot(path, title, f"{key}_plot_{number}")


def show_files(store: ArtifactStore, artifacts: list[str], key: str) -> None:
    """The files among ``artifacts`` other than plots: text files the analyzer wrote at the top of its output
    (log, metrics) in expanders, the rest in one table, and which ones the artifact store lacks."""
    # a remote store downloads each file once, into its cache
    local = {a: store.local_path(a) for a in artifacts}
    present = {a: p for a, p in local.items() if p is not None}
    # Files the analyzer wrote at the top of its output (log, metrics) open inline; the rest (checkpoints,
    # per-model folders) go into one table, so a sweep's dozens of files do not bury the verdict.
    texts = [a for a in present if a.lower().endswith(TEXT_SUFFIXES) and len(_run_path(a).parts) == 1]
    others = [a for a in present if a not in texts and not a.lower().endswith(IMAGE_SUFFIXES)]
    for artifact in texts:
        name = Path(artifact).name
        with st.expander(display.markdown_text(name), icon=":material/article:"):
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
        st.caption(
            f"{len(missing)} artifact file(s) missing from the artifact store {store.url}: "
            f"{', '.join(missing)}"
        )


def empty_state(message: str, icon: str = ":material/info:") -> None:
    """A friendly 'nothing here yet, here is what to do' box."""
    st.info(message, icon=icon)
