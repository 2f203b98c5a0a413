"""The claims editor of the Add / edit page: one expander per claim, analyzers from the registry.

Each claim's analyzer is chosen from ``analyzers.registry``; its parameters are a form generated from
the analyzer's ``Params`` model (types, defaults from the chosen scale preset, descriptions as help);
its declared ``metrics`` are offered for the expectation. A claim is rebuilt on top of the dict it was
loaded from, so fields the editor does not know (and untouched ones) come back exactly as they were.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any, Final

import streamlit as st

from app.forms import NONE, ErrorSlots, field_input, field_kind, init_value, overlay, to_widget
from kb.notes.bindings import params_problems
from schemas import Operator

OTHER_METRIC = "other path…"
HIDDEN_PARAMS = ("seed",)  # set per run by the binding's seeds
LIST_KEY = "edit_claims"
PERSIST: Final = "session"  # keep half-edited claims when the user visits another page


def claim_uids() -> list[str]:
    """The uids of the claims being edited, in order."""
    return st.session_state.setdefault(LIST_KEY, [])


def load_claims(claims: list[dict[str, Any]]) -> None:
    """Start editing these claims (drops any claim being edited)."""
    for key in [k for k in st.session_state if isinstance(k, str) and k.startswith("c_")]:
        del st.session_state[key]
    st.session_state[LIST_KEY] = []
    for claim in claims:
        add_claim(claim)


def add_claim(claim: dict[str, Any] | None = None) -> str:
    """Append a claim (a new empty one by default) to the editor; returns its uid."""
    uid = uuid.uuid4().hex[:10]
    original = claim or {}
    st.session_state[f"c_{uid}__orig"] = original
    source = original.get("source") or {}
    analyzer = original.get("analyzer") or {}
    expect = original.get("expect") or {}
    scale = original.get("scale") or {}
    init_value(f"c_{uid}_id", original.get("id", ""))
    init_value(f"c_{uid}_statement", original.get("statement", ""))
    init_value(f"c_{uid}_kind", original.get("kind", "qualitative"))
    init_value(f"c_{uid}_quote", source.get("quote", ""))
    init_value(f"c_{uid}_section", source.get("section") or "")
    init_value(f"c_{uid}_analyzer", analyzer.get("name") or NONE)
    init_value(f"c_{uid}_seeds", ", ".join(str(s) for s in analyzer.get("seeds") or []))
    init_value(f"c_{uid}_has_expect", bool(expect))
    init_value(f"c_{uid}_op", expect.get("op", ">="))
    value = expect.get("value")
    init_value(f"c_{uid}_value", ", ".join(map(str, value)) if isinstance(value, list)
               else ("" if value is None else str(value).lower() if isinstance(value, bool) else str(value)))
    init_value(f"c_{uid}_tolerance", expect.get("tolerance"))
    init_value(f"c_{uid}_rel_tolerance", expect.get("rel_tolerance"))
    init_value(f"c_{uid}_band", expect.get("inconclusive_band"))
    init_value(f"c_{uid}_scale_parameters", scale.get("parameters"))
    init_value(f"c_{uid}_scale_data", scale.get("data") or "")
    claim_uids().append(uid)
    st.session_state[f"c_{uid}__open"] = not claim
    return uid


def _remove(uid: str) -> None:
    st.session_state[LIST_KEY] = [u for u in claim_uids() if u != uid]


def _parse_value(raw: str, op: str) -> Any:
    text = raw.strip()
    if op == Operator.between.value:
        parts = [p.strip() for p in text.strip("[]").split(",") if p.strip()]
        try:
            return [float(p) for p in parts]
        except ValueError:
            return parts
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    try:
        return float(text)
    except ValueError:
        return text


def _scale_default(analyzer_cls: Any, scale: str | None, name: str) -> Any:
    preset = analyzer_cls.scales.get(scale, {}) if scale else {}
    if name in preset:
        return preset[name]
    info = analyzer_cls.Params.model_fields[name]
    return info.get_default(call_default_factory=True)


def params_form(uid: str, analyzer_cls: Any, scale: str | None, original_params: dict[str, Any],
                slots: ErrorSlots, position: int) -> dict[str, Any]:
    """The analyzer's parameters as a typed form; returns those that differ from the scale preset.

    A parameter the note already wrote stays written, even when it equals the default.
    """
    # Only what a note may set: the operator's parameters (a FASTA path, trusting remote code) are not
    # offered.
    fields = {n: analyzer_cls.Params.model_fields[n] for n in analyzer_cls.Params.note_fields()
              if n not in HIDDEN_PARAMS}
    params: dict[str, Any] = {}
    columns = st.columns(2)
    for i, (name, info) in enumerate(fields.items()):
        key = f"c_{uid}_p_{analyzer_cls.name}_{scale or NONE}_{name}"
        default = _scale_default(analyzer_cls, scale, name)
        init_value(key, to_widget(field_kind(info.annotation), original_params.get(name, default)))
        with columns[i % 2]:
            value = field_input(name, info, key)
            slots.slot("claims", position, "analyzer", "params", name)
        if name in original_params and original_params[name] == value:
            params[name] = original_params[name]  # as written (3 stays 3, not 3.0)
        elif name in original_params or value != default:
            params[name] = value
    return params


def claim_editor(uid: str, position: int, analyzers: dict[str, Any], slots: ErrorSlots) -> dict[str, Any]:
    """Render one claim's editor and return the claim as a dict (not yet validated)."""
    original: dict[str, Any] = st.session_state.get(f"c_{uid}__orig", {})

    def slot(*path: str) -> None:
        slots.slot("claims", position, *path)

    title = st.session_state.get(f"c_{uid}_id") or "new claim"
    statement = st.session_state.get(f"c_{uid}_statement") or ""
    label = f"{position + 1}. {title}" + (
        f" — {statement[:70]}{'…' if len(statement) > 70 else ''}" if statement else ""
    )
    with st.expander(
        label, expanded=st.session_state.get(f"c_{uid}__open", False), icon=":material/checklist:"
    ):
        _text_fields(uid, slot)
        name, metrics, binding = _binding_fields(uid, position, original, analyzers, slots)
        slot("analyzer")
        expect = _expect_fields(uid, original, name, metrics)
        slot("expect")
        scale_dict = _claimed_at_fields(uid, original)
        slot("scale")
    return _claim_values(uid, original, binding, expect, scale_dict)


def _text_fields(uid: str, slot: Callable[..., None]) -> None:
    """The claim's id, kind, Remove button, statement, quote and section."""
    top = st.columns([2, 1, 1], vertical_alignment="bottom")
    top[0].text_input(
        "Claim id",
        key=f"c_{uid}_id",
        persist_state=PERSIST,
        placeholder="e.g. optimal-depth",
        help="Lower-case letters, digits, '-', '_' or '.'; unique within the note",
    )
    top[1].selectbox("Kind", ["quantitative", "qualitative"], key=f"c_{uid}_kind", persist_state=PERSIST)
    top[2].button(
        "Remove",
        key=f"c_{uid}_remove",
        icon=":material/delete:",
        on_click=_remove,
        args=(uid,),
        type="tertiary",
    )
    slot("id")
    st.text_area("Statement", key=f"c_{uid}_statement", persist_state=PERSIST, height=68,
                 placeholder="The claim in one sentence, in your words")
    slot("statement")
    quote_col, section_col = st.columns([3, 1])
    quote_col.text_area(
        "Source quote",
        key=f"c_{uid}_quote",
        persist_state=PERSIST,
        height=68,
        help="Verbatim text from the paper that backs the claim (checked against source_file)",
    )
    section_col.text_input("Section", key=f"c_{uid}_section", persist_state=PERSIST,
                           placeholder="Abstract, Table 2…")
    slot("source")


def _binding_fields(uid: str, position: int, original: dict[str, Any], analyzers: dict[str, Any],
                    slots: ErrorSlots) -> tuple[str, dict[str, str], dict[str, Any] | None]:
    """The analyzer, its scale preset, seeds and parameters: the analyzer's name, its metrics and the binding
    (None without an analyzer; an unregistered one's binding kept exactly as written)."""
    original_name = (original.get("analyzer") or {}).get("name")
    names = [NONE, *analyzers] + (
        [original_name] if original_name and original_name not in analyzers else []
    )
    if st.session_state.get(f"c_{uid}_analyzer") not in names:
        st.session_state[f"c_{uid}_analyzer"] = NONE
    a_col, s_col, seed_col = st.columns([2, 1, 1])
    name = (
        a_col.selectbox(
            "Analyzer",
            names,
            key=f"c_{uid}_analyzer",
            persist_state=PERSIST,
            format_func=lambda n: (
                n
                if n == NONE
                else (f"{n} — {analyzers[n].summary}"[:90] if n in analyzers else f"{n} (not registered)")
            ),
            help="The registered analyzer that can re-verify this claim",
        )
        or NONE
    )
    if name == NONE:
        return name, {}, None
    if name not in analyzers:
        st.warning(f"No analyzer `{name}` is registered here: its binding is kept exactly as written.",
                   icon=":material/warning:")
        return name, {}, original.get("analyzer")
    analyzer_cls = analyzers[name]
    original_binding = original.get("analyzer") or {}
    same = original_binding.get("name") == name
    scales = [NONE, *analyzer_cls.scales]
    scale_key = f"c_{uid}_scale_{name}"
    # A binding the note already has keeps its scale (or none); a new one starts at the smoke preset.
    init_value(scale_key, (original_binding.get("scale") or NONE) if same else
               ("smoke" if "smoke" in analyzer_cls.scales else NONE))
    scale = s_col.selectbox(
        "Scale preset",
        scales,
        key=scale_key,
        persist_state=PERSIST,
        help="Named parameter presets of the analyzer (smoke runs on a laptop CPU)",
    )
    seed_col.text_input(
        "Seeds",
        key=f"c_{uid}_seeds",
        persist_state=PERSIST,
        placeholder="e.g. 0, 1, 2",
        help="One run per seed; the verdict uses the mean and the spread",
    )
    with st.container(border=True):
        st.caption(f"Parameters of `{name}` (defaults from the "
                   f"{'`' + scale + '` preset' if scale != NONE else 'analyzer'})")
        params = params_form(uid, analyzer_cls, None if scale == NONE else scale,
                             original_binding.get("params") or {} if same else {}, slots, position)
    seeds_raw = [
        s.strip() for s in st.session_state.get(f"c_{uid}_seeds", "").split(",") if s.strip()
    ]
    seeds: list[Any] = [int(s) if s.lstrip("-").isdigit() else s for s in seeds_raw]
    binding = overlay(original_binding if same else {}, {"name": name}, ["name"])
    binding = overlay(binding, {"scale": None if scale == NONE else scale, "params": params,
                                "seeds": seeds or None}, ["scale", "seeds"])
    binding["params"] = params  # a binding always states its parameters, {} included
    return name, dict(analyzer_cls.metrics), binding


def _expect_fields(uid: str, original: dict[str, Any], name: str,
                   metrics: dict[str, str]) -> dict[str, Any] | None:
    """The expectation behind its toggle (None when off): metric (one of the analyzer's, or a path),
    operator, value, tolerances and the inconclusive band."""
    if not st.toggle("Expectation (what the analyzer's result must show)", key=f"c_{uid}_has_expect",
                     persist_state=PERSIST):
        return None
    m_col, op_col, v_col = st.columns([3, 1, 2])
    original_expect = original.get("expect") or {}
    metric_key = f"c_{uid}_metric_{name}"
    known_metric = original_expect.get("metric") in metrics
    init_value(
        metric_key,
        original_expect.get("metric")
        if known_metric
        else (OTHER_METRIC if original_expect.get("metric") or not metrics else next(iter(metrics))),
    )
    if metrics:
        choice = m_col.selectbox(
            "Metric",
            [*metrics, OTHER_METRIC],
            key=metric_key,
            persist_state=PERSIST,
            format_func=lambda m: m if m == OTHER_METRIC else f"{m}",
            help="\n\n".join(f"**{k}**: {v}" for k, v in metrics.items()),
        )
    else:
        choice = OTHER_METRIC
    if choice == OTHER_METRIC:
        init_value(f"c_{uid}_metric_path", original_expect.get("metric", ""))
        metric = m_col.text_input(
            "Metric path",
            key=f"c_{uid}_metric_path",
            persist_state=PERSIST,
            placeholder="dotted path into the result, e.g. layers.20.kl_to_final",
        )
    else:
        metric = choice
        m_col.caption(metrics.get(metric, ""))
    op = op_col.selectbox(
        "Operator", [o.value for o in Operator], key=f"c_{uid}_op", persist_state=PERSIST
    )
    raw_value = v_col.text_input("Value", key=f"c_{uid}_value", persist_state=PERSIST,
                                 help="A number; 'low, high' for between; true/false for a flag")
    t_col, r_col, b_col = st.columns(3)
    tolerance = t_col.number_input(
        "Tolerance (approx)", key=f"c_{uid}_tolerance", persist_state=PERSIST, format="%g", step=None
    )
    rel_tolerance = r_col.number_input("Relative tolerance", key=f"c_{uid}_rel_tolerance",
                                       persist_state=PERSIST, format="%g", step=None)
    band = b_col.number_input(
        "Inconclusive band",
        key=f"c_{uid}_band",
        persist_state=PERSIST,
        format="%g",
        step=None,
        help="Margin around the threshold where the verdict is inconclusive",
    )
    expect = overlay(original_expect, {
        "metric": metric, "op": op, "value": _parse_value(raw_value, op), "tolerance": tolerance,
        "rel_tolerance": rel_tolerance, "inconclusive_band": band,
    }, ["metric", "op", "value", "tolerance", "rel_tolerance", "inconclusive_band"])
    if "value" not in expect:
        expect["value"] = None  # let the schema say that a value is needed
    return expect


def _claimed_at_fields(uid: str, original: dict[str, Any]) -> dict[str, Any]:
    """The scale the claim was made at (model parameters, data)."""
    p_col, d_col = st.columns(2)
    parameters = p_col.number_input("Claimed at: model parameters", key=f"c_{uid}_scale_parameters",
                                    persist_state=PERSIST, format="%g", step=None,
                                    help="e.g. 6.5e8 for ESM-2 650M")
    data = d_col.text_input("Claimed at: data", key=f"c_{uid}_scale_data", persist_state=PERSIST,
                            placeholder="e.g. UniRef50")
    return overlay(original.get("scale"), {"parameters": parameters, "data": data}, ["parameters", "data"])


def _claim_values(uid: str, original: dict[str, Any], binding: dict[str, Any] | None,
                  expect: dict[str, Any] | None, scale_dict: dict[str, Any] | None) -> dict[str, Any]:
    """The claim as the form now holds it, laid over what the note had (fields the form does not show
    kept)."""
    values = {
        "id": st.session_state.get(f"c_{uid}_id", "").strip(),
        "statement": st.session_state.get(f"c_{uid}_statement", "").strip(),
        "kind": st.session_state.get(f"c_{uid}_kind"),
        "source": overlay(
            original.get("source"),
            {
                "quote": st.session_state.get(f"c_{uid}_quote", "").strip(),
                "section": st.session_state.get(f"c_{uid}_section", "").strip(),
            },
            ["quote", "section"],
        )
        or None,
        "analyzer": binding,
        "expect": expect,
        "scale": scale_dict or None,
    }
    if values["source"] is not None and "quote" not in values["source"]:
        values["source"] = None if set(values["source"]) <= {"section"} else values["source"]
    return overlay(original, values, list(values))


def params_errors(claim: dict[str, Any], analyzers: dict[str, Any]) -> dict[tuple[str, ...], list[str]]:
    """The analyzer's own Params validation of a claim's binding ({('analyzer', 'params', field): [msg]})."""
    binding = claim.get("analyzer")
    if not binding or binding.get("name") not in analyzers:
        return {}
    analyzer = analyzers[binding["name"]]()
    errors: dict[tuple[str, ...], list[str]] = {}
    for field, message in params_problems(analyzer, binding.get("params") or {}, binding.get("scale")):
        errors.setdefault(tuple(field.split(".")), []).append(message)
    return errors


def from_draft(draft: Any, with_proposed_scale: bool = False) -> dict[str, Any]:
    """A drafted claim (kb.agents.drafter.DraftClaim) as a claim dict for the editor: its quote and page, its
    analyzer binding (name, parameters, scale preset, seeds), expectation and claim scale as drafted (or,
    ``with_proposed_scale``, the scale proposed from the paper's text for a claim that states none)."""
    source = {"quote": draft.quote, **({"section": draft.section} if draft.section else {}),
              **({"page": draft.page} if draft.page is not None else {})}  # the PDF page the quote starts on
    claim: dict[str, Any] = {"id": draft.id, "statement": draft.statement, "kind": draft.kind.value,
                             "source": source}
    if draft.analyzer is not None:
        claim["analyzer"] = draft.analyzer.model_dump(mode="json", exclude_none=True)
    if draft.expect is not None:
        claim["expect"] = draft.expect.model_dump(mode="json", exclude_defaults=True)
    scale = draft.scale if draft.scale is not None or not with_proposed_scale else draft.proposed_scale
    if scale is not None:
        claim["scale"] = scale.model_dump(mode="json", exclude_none=True)
    return claim


def proposed_scale_text(draft: Any) -> str:
    """The scale proposed from the paper's text for a drafted claim that states none, in words (''
    otherwise)."""
    from kb.agents.scales import scale_text

    return (
        scale_text(draft.proposed_scale) if draft.scale is None and draft.proposed_scale is not None else ""
    )
