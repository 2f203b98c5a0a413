"""Pydantic models for everything kb stores: notes, claims, runs, evidence and verdicts.

These models are the single source of truth for validation. The index (``kb.index.database``), the CLI, the app
and the agents all speak them; ``kb schema`` exports each one as JSON Schema for editors.
"""

from pydantic import BaseModel

from schemas.bundle import BUNDLE_SCHEMA_VERSION, BundledRun, BundleFile, BundleManifest
from schemas.claim import (
    AnalyzerBinding,
    Claim,
    ClaimKind,
    ClaimScale,
    ClaimSource,
    Expectation,
    Operator,
    PaperValue,
)
from schemas.note import Author, Decision, PaperNote, Publication, Status, Urls
from schemas.run import (
    EvidenceRecord,
    EvidenceScale,
    Provenance,
    RunRecord,
    RunStatus,
    Verdict,
    VerdictKind,
)

__all__ = [
    "BUNDLE_SCHEMA_VERSION",
    "AnalyzerBinding",
    "BundleFile",
    "BundleManifest",
    "BundledRun",
    "Author",
    "Claim",
    "ClaimKind",
    "ClaimScale",
    "ClaimSource",
    "Decision",
    "EvidenceRecord",
    "EvidenceScale",
    "Expectation",
    "Operator",
    "PaperValue",
    "PaperNote",
    "Provenance",
    "Publication",
    "RunRecord",
    "RunStatus",
    "Status",
    "Urls",
    "Verdict",
    "VerdictKind",
]

#: Every model ``kb schema`` exports, by the file stem it is written under.
EXPORTED_MODELS: dict[str, type[BaseModel]] = {
    "paper_note": PaperNote,
    "claim": Claim,
    "run": RunRecord,
    "evidence": EvidenceRecord,
    "verdict": Verdict,
    "provenance": Provenance,
    "evidence_bundle": BundleManifest,
}
