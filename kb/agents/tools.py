"""Agent tools over ``KnowledgeBase``: a registry of typed tools whose docstrings are written for the LLM.

Each tool is a ``ToolBox`` method registered with ``@tool(ArgsModel)``: the pydantic model types and
describes its arguments, the method's docstring tells the model when to use it and what comes back.
``build_tools(kb)`` binds them to one knowledge base and returns the ``ToolBox``: the LangChain tools
by name, plus the citations collected from the calls the agent actually made (notes it read, claims
and runs whose states or evidence it looked at). Search hits are only candidates: they become
citations when the agent reads them or names them in its answer.

Invalid arguments and failed lookups come back to the model as an ``error: ...`` string saying what
to fix, never as an exception. Tools only read, except ``queue_verification``, which puts runs on
the same queue as ``kb verify`` (``KnowledgeBase.verify``) and never executes an analyzer.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field, ValidationError

from kb.agents import queries
from kb.core import KnowledgeBase
from kb.evidence import tensions as tensions_mod
from kb.evidence.claim_states import ClaimState
from kb.evidence.verdicts import MetricMissing, resolve_metric
from kb.index.indexing import claim_for_key
from kb.notes.files import NoteError
from kb.notes.grounding import QuoteMatcher, check_quote, normalize_text

CitationKind = Literal["note", "claim", "run"]
ClaimStateName = Literal[
    "supported", "refuted", "consistent_proxy", "at_odds_proxy", "inconclusive", "not_runnable", "error",
    "stale", "unverified", "unbound",
]
MAX_BODY_CHARS = 4000
# About 4k tokens: list_analyzers (every metric with its description, 6 analyzers) is the longest answer,
# ~12k.
MAX_RESULT_CHARS = 16000
CLAIM_KEY = r"^[^#\s]+#[^#\s]+$"
assert set(ClaimStateName.__args__) == {s.value for s in ClaimState}  # type: ignore[attr-defined]


class Citation(BaseModel):
    """A knowledge-base object an answer rests on, for the app to link to."""

    kind: CitationKind = Field(description="What is cited: a note, a claim or a run.")
    id: str = Field(description="Note id, claim key '<note id>#<claim id>', or run id.")
    label: str | None = Field(default=None, description="Title, statement or analyzer, for display.")


# -- argument models (what the model may pass) ---------------------------------------------------

class SearchNotesArgs(BaseModel):
    """Arguments of search_notes."""

    query: str = Field(
        min_length=1, description="Keywords to search titles, tags, note bodies and claims for."
    )
    limit: int = Field(default=5, ge=1, le=20, description="Most results to return (1-20).")


class ReadNoteArgs(BaseModel):
    """Arguments of read_note."""

    note_id: str = Field(
        min_length=1, description="Note id as returned by search_notes (file name without .md)."
    )


class ListClaimsArgs(BaseModel):
    """Arguments of list_claims. Every filter is optional; combine them."""

    query: str | None = Field(
        default=None,
        description="Topic words; a claim matches any of them as written, so "
        "add variants: 'depth deep deeper layers'.",
    )
    note_id: str | None = Field(default=None, description="Only claims of this note.")
    state: list[ClaimStateName] | None = Field(default=None, description="Only claims in these states.")
    outcome: Literal["supported", "refuted", "inconclusive"] | None = Field(
        default=None,
        description="Only claims whose latest evidence came out this way AT ITS OWN SCALE (small-scale "
        "evidence is a proxy: its verdict stays inconclusive, but its outcome is kept).",
    )
    evidence_scale: str | None = Field(
        default=None,
        description="Only evidence made at this scale preset: 'smoke', 'small', 'paper' or 'custom'.",
    )
    analyzer: str | None = Field(default=None, description="Only claims bound to this analyzer.")
    limit: int = Field(default=20, ge=1, le=100, description="Most claims to return (1-100).")


class ListTensionsArgs(BaseModel):
    """Arguments of list_tensions. Every filter is optional."""

    note_id: str | None = Field(default=None, description="Only tensions with a claim of this note.")
    claim_key: str | None = Field(default=None, pattern=CLAIM_KEY, description="Only tensions of this claim "
                                  "'<note id>#<claim id>'.")
    outcome: Literal["settled_a", "settled_b", "both_wrong", "open"] | None = Field(
        default=None, description="Only tensions the evidence left this way: settled for claim A, for "
                                  "claim B, both claims wrong, or still open.")
    limit: int = Field(default=10, ge=1, le=50, description="Most tensions to return (1-50).")


class ListAnalyzersArgs(BaseModel):
    """list_analyzers takes no arguments."""


class DescribeAnalyzerArgs(BaseModel):
    """Arguments of describe_analyzer."""

    name: str = Field(min_length=1, description="Registry name from list_analyzers, e.g. 'depth.probe'.")


class ReadEvidenceArgs(BaseModel):
    """Arguments of read_evidence: a claim key or a run id, and optionally which part of the metrics."""

    claim_key: str | None = Field(
        default=None, pattern=CLAIM_KEY, description="Claim key '<note id>#<claim id>'."
    )
    run_id: str | None = Field(
        default=None, min_length=1, description="Run id (from find_evidence or list_claims)."
    )
    metric: str | None = Field(
        default=None, description="Dotted path into the metrics, e.g. 'layers.kl_to_final'."
    )
    layer: int | None = Field(
        default=None, ge=0, description="Layer index: the value of every per-layer list there."
    )


class FindEvidenceArgs(BaseModel):
    """Arguments of find_evidence. Give at least one filter."""

    model: str | None = Field(
        default=None, description="Words of a model's name, e.g. 'ESM-2 650M' or 'esm2_t33'."
    )
    analyzer: str | None = Field(
        default=None, description="Registry name of the analyzer, e.g. 'depth.probe'."
    )
    claim_key: str | None = Field(default=None, pattern=CLAIM_KEY, description="Only evidence of this claim.")
    limit: int = Field(default=10, ge=1, le=50, description="Most records to return (1-50).")


class QueueVerificationArgs(BaseModel):
    """Arguments of queue_verification."""

    claim_key: str = Field(pattern=CLAIM_KEY, description="Claim key '<note id>#<claim id>'.")
    device: Literal["cpu", "cuda"] = Field(default="cpu", description="Device the run should use.")


class FindQuoteArgs(BaseModel):
    """Arguments of find_quote."""

    quote: str = Field(min_length=3, description="Text you want to quote from the paper, copied verbatim.")


def _validation_message(exc: ValidationError | Any) -> str:
    if isinstance(exc, ValidationError):
        parts = [f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in exc.errors()]
        return (
            "error: invalid tool arguments: "
            + "; ".join(parts)
            + ". Fix the arguments and call the tool again."
        )
    return f"error: invalid tool arguments: {exc}. Fix the arguments and call the tool again."


def _dumps(data: Any) -> str:
    text = json.dumps(data, ensure_ascii=False, default=str)
    if len(text) > MAX_RESULT_CHARS:
        return text[:MAX_RESULT_CHARS] + " [... truncated: narrow the request]"
    return text


# -- the registry --------------------------------------------------------------------------------

TOOL_ARGS: dict[str, type[BaseModel]] = {}
ASK_TOOLS = ("search_notes", "read_note", "list_claims", "list_tensions", "find_evidence", "read_evidence",
             "list_analyzers", "describe_analyzer", "queue_verification")
DRAFT_TOOLS = ("list_analyzers", "describe_analyzer", "find_quote", "search_notes")


def tool(args: type[BaseModel]) -> Callable[[Callable[..., str]], Callable[..., str]]:
    """Register a ``ToolBox`` method as an agent tool whose arguments are ``args``."""

    def register(method: Callable[..., str]) -> Callable[..., str]:
        TOOL_ARGS[method.__name__] = args
        return method

    return register


@dataclass
class ToolBox:
    """The tools bound to one knowledge base (and, for drafting, one text), and what the calls cited."""

    kb: KnowledgeBase
    text: str | None = None
    allow_queue: bool = True
    on_call: Callable[[str, dict[str, Any]], None] | None = None
    citations: list[Citation] = field(default_factory=list)
    candidates: list[Citation] = field(default_factory=list)
    tools: dict[str, BaseTool] = field(default_factory=dict)
    matcher: QuoteMatcher | None = field(default=None, repr=False)  # ``text`` prepared for quotes, once
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def cite(self, kind: CitationKind, ident: str, label: str | None = None) -> None:
        """Record a citation once, in first-seen order (tools may run in parallel threads)."""
        if label is None and kind == "claim":
            claim = claim_for_key(self.kb.engine, ident)
            label = claim.statement if claim else None
        with self._lock:
            if not any(c.kind == kind and c.id == ident for c in self.citations):
                self.citations.append(Citation(kind=kind, id=ident, label=label))

    def cited(self, answer: str = "") -> list[Citation]:
        """The citations, plus search hits the answer names by id."""
        extra = [c for c in self.candidates if c.id in answer and c not in self.citations]
        return [*self.citations, *extra]

    # -- reading the library ---------------------------------------------------------------------

    @tool(SearchNotesArgs)
    def search_notes(self, query: str, limit: int = 5) -> str:
        """Search the paper notes of the knowledge base by keywords (full text: titles, tags, bodies, claims).

        Returns a JSON list of hits, best first: note id, title, relevance score and a snippet. Read a
        hit with read_note before relying on it. Answer only from what the tools return.
        """
        self.kb.index()
        hits = self.kb.search(query, limit=limit)
        titles = {p.id: p.title for p in self.kb.list_papers()}
        with self._lock:
            for hit in hits:
                candidate = Citation(kind="note", id=hit.paper_id, label=titles.get(hit.paper_id))
                if candidate not in self.candidates:
                    self.candidates.append(candidate)
        if not hits:
            return "no notes match this query; try other words, or list_claims with a topic word"
        return _dumps([{"note_id": h.paper_id, "title": titles.get(h.paper_id), "score": round(h.score, 3),
                        "snippet": h.snippet} for h in hits])

    @tool(ReadNoteArgs)
    def read_note(self, note_id: str) -> str:
        """Read one paper note: title, year, status, decision, body (truncated) and every claim with its
        state.

        Each claim has its claim key '<note id>#<claim id>', statement, kind, source quote, analyzer and
        expectation, and its state (supported, refuted, inconclusive, stale, unverified, unbound, ...).
        Use the claim key with read_evidence or queue_verification.
        """
        note = self.kb.read(note_id)
        meta = note.meta
        self.cite("note", note_id, meta.title)
        states = {s.claim_key: s for s in queries.claim_states(self.kb, note_id=note_id, limit=1000)}
        claims = []
        for claim in meta.claims:
            key = f"{note_id}#{claim.id}"
            state = states.get(key)
            claims.append({
                "claim_key": key, "statement": claim.statement, "kind": claim.kind.value,
                "quote": claim.source.quote if claim.source else None,
                "analyzer": claim.analyzer.model_dump(exclude_none=True) if claim.analyzer else None,
                "expect": claim.expect.model_dump(exclude_none=True) if claim.expect else None,
                "claim_scale": claim.scale.model_dump(exclude_none=True) if claim.scale else None,
                "state": state.state if state else None, "verdict_reason": state.reason if state else None,
            })
        body = note.body if len(note.body) <= MAX_BODY_CHARS else note.body[:MAX_BODY_CHARS] + " [...]"
        return _dumps({"note_id": note_id, "title": meta.title, "year": getattr(meta, "year", None),
                       "status": getattr(meta, "status", None), "decision": getattr(meta, "decision", None),
                       "body": body, "claims": claims})

    @tool(ListClaimsArgs)
    def list_claims(
        self,
        query: str | None = None,
        note_id: str | None = None,
        state: list[str] | None = None,
        outcome: str | None = None,
        evidence_scale: str | None = None,
        analyzer: str | None = None,
        limit: int = 20,
    ) -> str:
        """List claims across the whole library with their verification state, filtered.

        Use it for questions like "which claims about depth are refuted at small scale?" (query='depth deep
        deeper layers', outcome='refuted', evidence_scale='smoke' or 'small') or "what is stale?"
        (state=['stale']). Each claim has: claim_key, note_id, statement, analyzer, state (consistent_proxy /
        at_odds_proxy: a smaller-scale proxy leaning for / against the claim without settling it), verdict and
        reason, proxy (true when the evidence was made at a smaller scale than the claim, so its verdict
        cannot settle the claim), outcome_at_evidence_scale, evidence_scale, evidence_parameters,
        claim_parameters, run_id.
        """
        found = queries.claim_states(self.kb, query=query, note_id=note_id, states=state, outcome=outcome,
                                     evidence_scale=evidence_scale, analyzer=analyzer, limit=limit)
        for row in found:
            self.cite("claim", row.claim_key, row.statement)
            if row.run_id:
                self.cite("run", row.run_id, row.analyzer)
        if not found:
            return "no claim matches these filters; loosen them (fewer filters, other query words)"
        return _dumps([row.as_dict() for row in found])

    @tool(ListTensionsArgs)
    def list_tensions(self, note_id: str | None = None, claim_key: str | None = None,
                      outcome: str | None = None, limit: int = 10) -> str:
        """List tensions: pairs of claims of different notes that cannot both hold, and how evidence stands.

        Use it for "which claims disagree?", "do the notes contradict each other on depth?" or "is X's claim
        disputed?" (claim_key=...). Each tension has: id, kind ('expectations': no value satisfies both;
        'evidence': one run supports one claim and refutes the other), quantity, why, state ('settled_a',
        'settled_b', 'both_wrong', 'open') and state_text with the reason, deciding_evidence (run, scale,
        value and both verdicts), settle (which claim's run at which scale would decide it), and both sides
        a and b: claim key, note, statement, quote with section and page, what it expects, its state and
        its latest evidence. Tensions kb found by rule only; say when there are none.
        """
        self.kb.index()
        found = [t for t in self.kb.tensions()
                 if (note_id is None or note_id in (t.a.note_id, t.b.note_id))
                 and (claim_key is None or claim_key in (t.a.key, t.b.key))
                 and (outcome is None or t.state.outcome.value == outcome)][:limit]
        for found_tension in found:
            for ref in (found_tension.a, found_tension.b):
                self.cite("claim", ref.key, ref.claim.statement)
            if found_tension.state.deciding is not None:
                self.cite("run", found_tension.state.deciding.run_id, found_tension.quantity)
        if not found:
            return "no tension matches: no two claims of different notes contradict each other here" + (
                " (with these filters; loosen them)" if note_id or claim_key or outcome else "")
        return _dumps([tensions_mod.record(t) for t in found])

    @tool(FindEvidenceArgs)
    def find_evidence(
        self,
        model: str | None = None,
        analyzer: str | None = None,
        claim_key: str | None = None,
        limit: int = 10,
    ) -> str:
        """Find evidence (results of finished runs), newest first, by model name, analyzer and/or claim.

        Use it for questions about a model ("what does the evidence say about layer 20 of ESM-2 650M?":
        model='ESM-2 650M'). Each record: run_id, claim_key, analyzer, model, scale, parameters, verdict,
        stale, created_at and the names of its metrics. Then call read_evidence(run_id=..., layer=20 or
        metric=...) to read the numbers.
        """
        if not (model or analyzer or claim_key):
            return "error: give at least one of model, analyzer or claim_key"
        hits = queries.find_evidence(
            self.kb, model=model, analyzer=analyzer, claim_key=claim_key, limit=limit
        )
        if not hits:
            return (
                "no evidence matches; list_analyzers shows what could produce some, "
                "queue_verification queues it"
            )
        return _dumps([hit.as_dict() for hit in hits])

    @tool(ReadEvidenceArgs)
    def read_evidence(
        self,
        claim_key: str | None = None,
        run_id: str | None = None,
        metric: str | None = None,
        layer: int | None = None,
    ) -> str:
        """Read the evidence of a claim (newest first, at most 3 records) or of one run: verdict and numbers.

        Each record has the run id, analyzer, verdict (supported / refuted / inconclusive / not_runnable /
        error) and its reason, proxy, the scale and model of the evidence, whether it is stale and why,
        and the metrics: a summary by default, the value at a dotted path with metric='a.b.0', or with
        layer=N the N-th element of every per-layer list (with each list's length: a length of
        layers + 1 means index 0 is the embedding output).
        """
        if (claim_key is None) == (run_id is None):
            return "error: give exactly one of claim_key or run_id"
        if claim_key is not None:
            records = [(r.run_id, r.metrics, r.verdict, r.stale, r.stale_reason, r.provenance)
                       for r in self.kb.evidence(claim_key)[:3]]
            self.cite("claim", claim_key)
            if not records:
                return f"no evidence recorded for {claim_key}; queue_verification can queue a run"
        else:
            row = queries.evidence_by_run(self.kb, run_id or "")
            if row is None:
                return f"error: no evidence for run {run_id!r}; find_evidence lists runs with evidence"
            record = next((r for r in self.kb.evidence(row.claim_key) if r.run_id == row.run_id), None) \
                if row.claim_key else None
            if record is not None:
                records = [(row.run_id, record.metrics, record.verdict, record.stale, record.stale_reason,
                            record.provenance)]
                self.cite("claim", row.claim_key or "")
            else:  # evidence of a run made for no claim (e.g. 'kb probe'): no verdict
                records = [
                    (row.run_id, json.loads(row.metrics_json), None, row.stale, row.stale_reason, None)
                ]
        out = []
        for run, metrics, verdict, stale, stale_reason, provenance in records:
            self.cite("run", run, metrics.get("model") or (provenance.analyzer if provenance else None))
            entry: dict[str, Any] = {
                "run_id": run,
                "verdict": verdict.kind.value if verdict else None,
                "reason": verdict.reason if verdict else None,
                "proxy": verdict.proxy if verdict else None,
                "scale": metrics.get("scale"),
                "model": provenance.model_id if provenance else metrics.get("model"),
                "stale": stale,
                "stale_reason": stale_reason,
            }
            if metric:
                try:
                    entry["metric"] = {metric: resolve_metric(metrics, metric)}
                except MetricMissing as exc:
                    entry["metric_error"] = str(exc.args[0])
            elif layer is not None:
                entry["layer"] = layer
                entry["num_layers"] = metrics.get("num_layers")
                entry["values"] = queries.layer_slice(metrics, layer) or "no per-layer list is that long"
            else:
                entry["metrics"] = queries.summarize_metrics(metrics)
            out.append(entry)
        return _dumps(out)

    @tool(ListAnalyzersArgs)
    def list_analyzers(self) -> str:
        """List the registered analyzers that can re-verify claims: the only names a claim may bind.

        Each has its registry name, a summary, the metrics an expectation may reference (dotted paths
        into its result), its parameter names, its named scale presets (e.g. smoke, small, paper) and
        whether it needs a GPU. Call describe_analyzer for the parameters' types, defaults and meaning.
        """
        return _dumps([{"name": name, "summary": getattr(cls, "summary", ""), "metrics": dict(cls.metrics),
                        "params": [p for p in cls.Params.model_fields if p not in ("device", "seed")],
                        "scales": sorted(cls.scales), "gpu": cls.resources.gpu.value}
                       for name, cls in self.kb.analyzers().items()])

    @tool(DescribeAnalyzerArgs)
    def describe_analyzer(self, name: str) -> str:
        """Describe one analyzer: each parameter's type, default and meaning, and its scale presets' values.

        A claim's analyzer binding may only set these parameters; they are validated when a run is queued.
        """
        cls = self.kb.analyzers().get(name)
        if cls is None:
            return f"error: no analyzer {name!r}; list_analyzers gives the registered names"
        params = {}
        for field_name, info in cls.Params.model_fields.items():
            if field_name not in ("device", "seed"):
                kind = getattr(info.annotation, "__name__", None) or str(info.annotation).replace(
                    "typing.", ""
                )
                params[field_name] = {"type": kind, "default": info.get_default(call_default_factory=True),
                                      "description": info.description}
        return _dumps({"name": name, "summary": getattr(cls, "summary", ""), "metrics": dict(cls.metrics),
                       "params": params, "scales": cls.scales})

    # -- acting ------------------------------------------------------------------------------------

    @tool(QueueVerificationArgs)
    def queue_verification(self, claim_key: str, device: str = "cpu") -> str:
        """Queue a verification run for one claim bound to an analyzer; a worker executes it later.

        Only call it when the user asks to verify or re-check something. Returns the queued run ids and
        their status, or why the claim was skipped. It never runs the analyzer itself: tell the user the
        run is queued and that 'kb worker' (or the app's Runs page) executes it.
        """
        if not self.allow_queue:
            return "error: queueing runs is switched off in this session; tell the user to run 'kb verify'"
        queued, skipped = self.kb.verify([claim_key], device=device)
        self.cite("claim", claim_key)
        for run in queued:
            self.cite("run", run.id, run.analyzer)
        return _dumps(
            {
                "queued": [
                    {"run_id": r.id, "analyzer": r.analyzer, "status": r.status.value} for r in queued
                ],
                "skipped": [{"claim_key": k, "reason": why} for k, why in skipped],
            }
        )

    # -- drafting ------------------------------------------------------------------------------------

    @tool(FindQuoteArgs)
    def find_quote(self, quote: str) -> str:
        """Check that a quote occurs verbatim in the paper's text before you use it in a claim.

        Returns 'found' with the PDF page it starts on (when the text has pages) and the sentence around it,
        or 'not found' with the closest sentences and their pages, whose exact words you should copy instead.
        Give a claim the page its quote starts on. Claims whose quote is not in the text are rejected.
        """
        if self.text is None:
            return "error: there is no paper text in this session"
        if check_quote(quote, self.text):
            if self.matcher is None:  # the text's pages normalized once for every call of the session
                self.matcher = QuoteMatcher(self.text)
            page = self.matcher.start_page(quote)
            return f"found{'' if page is None else f' on page {page}'}: " + _around(quote, self.text)
        return "not found. Closest passages (copy one verbatim): " + _dumps(_closest(quote, self.text))


def _around(quote: str, text: str, width: int = 200) -> str:
    flat, needle = normalize_text(text), normalize_text(quote)
    at = flat.find(needle)
    return flat[max(0, at - width // 2): at + len(needle) + width // 2]


def _closest(quote: str, text: str, count: int = 3) -> list[str | dict[str, Any]]:
    """The sentences of the text sharing the most words with the quote; in a text with pages, each with the
    page it starts on."""
    from kb.agents.fallback import units

    words = set(normalize_text(quote).split())
    scored = sorted(
        ((len(words & set(normalize_text(u.text).split())), i, u) for i, u in enumerate(units(text))),
        key=lambda found: (-found[0], found[1]),
    )
    return [unit.text if unit.page is None else {"page": unit.page, "text": unit.text}
            for score, _, unit in scored[:count] if score]


def _guarded(name: str, func: Callable[..., str], box: ToolBox) -> Callable[..., str]:
    """Report the call, and turn failed lookups into an error string the model can act on."""

    def call(**kwargs: Any) -> str:
        if box.on_call is not None:
            box.on_call(name, kwargs)
        try:
            return func(**kwargs)
        except (NoteError, KeyError, ValueError) as exc:
            return f"error: {str(exc).strip(chr(34))}"

    call.__name__ = name
    call.__doc__ = func.__doc__
    return call


def build_tools(
    kb: KnowledgeBase,
    names: list[str] | tuple[str, ...] | None = None,
    *,
    text: str | None = None,
    allow_queue: bool = True,
    on_call: Callable[[str, dict[str, Any]], None] | None = None,
) -> ToolBox:
    """The tool registry bound to ``kb`` (all tools, or those named); ``text`` is the paper being drafted
    from."""
    box = ToolBox(kb, text=text, allow_queue=allow_queue, on_call=on_call)
    for name, args in TOOL_ARGS.items():
        if names is not None and name not in names:
            continue
        method = getattr(box, name)
        box.tools[name] = StructuredTool.from_function(
            func=_guarded(name, method, box), name=name, description=(method.__doc__ or "").strip(),
            args_schema=args, handle_validation_error=_validation_message,
        )
    return box
