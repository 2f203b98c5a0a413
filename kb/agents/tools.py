"""Agent tools over ``KnowledgeBase``: typed argument models, docstrings written for the LLM.

``build_tools(kb)`` returns a ``ToolBox``: the LangChain tools (a registry by name) plus the citations
collected from the calls the agent actually made (note ids, claim keys, run ids). Invalid arguments and
lookup failures come back to the model as an ``error: ...`` string it can act on, never as an exception.
Tools only read the knowledge base, except ``queue_verification``, which queues runs via
``KnowledgeBase.verify`` and never executes an analyzer.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field, ValidationError

from kb.core import KnowledgeBase
from kb.notes import NoteError

CitationKind = Literal["note", "claim", "run"]
MAX_BODY_CHARS = 4000


class Citation(BaseModel):
    """A knowledge-base object an answer rests on."""

    kind: CitationKind = Field(description="What is cited: a note, a claim or a run.")
    id: str = Field(description="Note id, claim key '<note id>#<claim id>', or run id.")


class SearchNotesArgs(BaseModel):
    """Arguments of search_notes."""

    query: str = Field(min_length=1, description="Keywords to search titles, tags, note bodies and claims for.")
    limit: int = Field(default=5, ge=1, le=20, description="Most results to return (1-20).")


class ReadNoteArgs(BaseModel):
    """Arguments of read_note."""

    note_id: str = Field(min_length=1, description="Note id as returned by search_notes (file name without .md).")


class ListAnalyzersArgs(BaseModel):
    """list_analyzers takes no arguments."""


class ReadEvidenceArgs(BaseModel):
    """Arguments of read_evidence."""

    claim_key: str = Field(pattern=r"^[^#\s]+#[^#\s]+$", description="Claim key '<note id>#<claim id>'.")


class QueueVerificationArgs(BaseModel):
    """Arguments of queue_verification."""

    claim_key: str = Field(pattern=r"^[^#\s]+#[^#\s]+$", description="Claim key '<note id>#<claim id>'.")
    device: Literal["cpu", "cuda"] = Field(default="cpu", description="Device the run should use.")


def _validation_message(exc: ValidationError | Any) -> str:
    if isinstance(exc, ValidationError):
        parts = [f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in exc.errors()]
        return "error: invalid tool arguments: " + "; ".join(parts) + ". Fix the arguments and call the tool again."
    return f"error: invalid tool arguments: {exc}. Fix the arguments and call the tool again."


@dataclass
class ToolBox:
    """The tools bound to one knowledge base, and what the agent's calls cited."""

    kb: KnowledgeBase
    citations: list[Citation] = field(default_factory=list)
    tools: dict[str, BaseTool] = field(default_factory=dict)

    def cite(self, kind: CitationKind, ident: str) -> None:
        """Record a citation once, in first-seen order."""
        citation = Citation(kind=kind, id=ident)
        if citation not in self.citations:
            self.citations.append(citation)

    # -- the tools -----------------------------------------------------------------------------

    def search_notes(self, query: str, limit: int = 5) -> str:
        """Search the paper notes of the knowledge base by keywords.

        Returns a JSON list of hits, best first, each with the note id, a relevance score and a snippet.
        Use the note id with read_note to read the note and its claims. Search before answering any
        question about papers; answer only from what the tools return.
        """
        self.kb.index()
        hits = self.kb.search(query, limit=limit)
        for hit in hits:
            self.cite("note", hit.paper_id)
        return json.dumps([{"note_id": h.paper_id, "score": round(h.score, 3), "snippet": h.snippet}
                           for h in hits], ensure_ascii=False) if hits else "no notes match this query"

    def read_note(self, note_id: str) -> str:
        """Read one paper note: its title, year, status, body (truncated) and its claims.

        Each claim comes with its claim key '<note id>#<claim id>', statement, kind, source quote and the
        analyzer bound to it (if any). Use the claim key with read_evidence or queue_verification.
        """
        note = self.kb.read(note_id)
        self.cite("note", note_id)
        meta = note.meta
        claims = [{"claim_key": f"{note_id}#{c.id}", "statement": c.statement, "kind": c.kind.value,
                   "quote": c.source.quote if c.source else None,
                   "analyzer": c.analyzer.name if c.analyzer else None} for c in meta.claims]
        body = note.body if len(note.body) <= MAX_BODY_CHARS else note.body[:MAX_BODY_CHARS] + " [...]"
        return json.dumps({"note_id": note_id, "title": meta.title, "year": getattr(meta, "year", None),
                           "status": str(meta.status) if getattr(meta, "status", None) else None,
                           "body": body, "claims": claims}, ensure_ascii=False, default=str)

    def list_analyzers(self) -> str:
        """List the registered analyzers that can re-verify claims.

        Returns a JSON list with each analyzer's registry name, a one-line summary and the metrics an
        expectation may reference. Only these names can be bound to a claim.
        """
        return json.dumps([{"name": name, "summary": getattr(cls, "summary", ""),
                            "metrics": dict(getattr(cls, "metrics", {}))}
                           for name, cls in self.kb.analyzers().items()], ensure_ascii=False)

    def read_evidence(self, claim_key: str) -> str:
        """Read the evidence recorded for one claim, newest first.

        Each record has the run id, the verdict (supported / contradicted / inconclusive and why), the
        metrics, and whether it is stale. An empty list means the claim was never verified.
        """
        self.cite("claim", claim_key)
        records = self.kb.evidence(claim_key)
        for record in records:
            self.cite("run", record.run_id)
        if not records:
            return f"no evidence recorded for {claim_key}; queue_verification can queue a run"
        return json.dumps([{"run_id": r.run_id, "analyzer": r.analyzer,
                            "verdict": r.verdict.kind.value if r.verdict else None,
                            "reason": r.verdict.reason if r.verdict else None,
                            "metrics": r.metrics, "stale": r.stale, "stale_reason": r.stale_reason}
                           for r in records], ensure_ascii=False, default=str)

    def queue_verification(self, claim_key: str, device: str = "cpu") -> str:
        """Queue a verification run for one claim that is bound to an analyzer.

        This only puts a run on the queue; a worker executes it later. Returns the queued run ids, or why
        the claim was skipped. Do not call it for claims without an analyzer.
        """
        self.cite("claim", claim_key)
        queued, skipped = self.kb.verify([claim_key], device=device)
        for run in queued:
            self.cite("run", run.id)
        return json.dumps({"queued": [{"run_id": r.id, "analyzer": r.analyzer, "status": r.status.value}
                                      for r in queued],
                           "skipped": [{"claim_key": k, "reason": why} for k, why in skipped]})


TOOL_ARGS: dict[str, type[BaseModel]] = {
    "search_notes": SearchNotesArgs,
    "read_note": ReadNoteArgs,
    "list_analyzers": ListAnalyzersArgs,
    "read_evidence": ReadEvidenceArgs,
    "queue_verification": QueueVerificationArgs,
}


def _guarded(func: Callable[..., str]) -> Callable[..., str]:
    """Turn lookup failures into an error string the model can act on."""

    def call(**kwargs: Any) -> str:
        try:
            return func(**kwargs)
        except (NoteError, KeyError, ValueError) as exc:
            return f"error: {exc}"

    call.__name__ = func.__name__
    call.__doc__ = func.__doc__
    return call


def build_tools(kb: KnowledgeBase, names: list[str] | None = None) -> ToolBox:
    """The tool registry over ``kb`` (all tools, or those named)."""
    box = ToolBox(kb)
    for name, args in TOOL_ARGS.items():
        if names is not None and name not in names:
            continue
        method = getattr(box, name)
        box.tools[name] = StructuredTool.from_function(
            func=_guarded(method), name=name, description=(method.__doc__ or "").strip(), args_schema=args,
            handle_validation_error=_validation_message,
        )
    return box
