"""What a claim's evidence is about, as hashes: the parameters of a run and the binding a note writes.

Kept apart from the queue (``kb.queue.store``) and the index (``kb.index.indexing``) because both need them:
the index records each claim's binding hash, a run records the hash it was queued under, and evidence whose
hash no longer matches its claim's is stale (``kb.evidence.claim_states.stale_reason``).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from schemas import Claim


def params_hash(params: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON of validated parameters (defines what evidence is about)."""
    return hashlib.sha256(json.dumps(params, sort_keys=True, default=str).encode()).hexdigest()


def binding_hash(claim: Claim) -> str | None:
    """Hash of a claim's analyzer binding (name, scale, parameters, seeds) as the note writes it.

    Evidence records the hash it was made under; when the note's binding changes, that evidence is
    stale. Changes of the analyzer's own defaults are caught by its version instead.
    """
    if claim.analyzer is None:
        return None
    return params_hash(claim.analyzer.model_dump(mode="json"))[:16]
