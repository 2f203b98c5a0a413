"""An evidence bundle: chosen runs' evidence as plain files, to carry from one KB home to another.

A bundle is a folder (or a ``.tar.gz`` of one) holding ``manifest.json`` (``BundleManifest``) and, per run,
``runs/<run id>/attempt-<n>.json``: the run's outcome record in the artifact store's own format
(``kb.queue.records``), checked on import by the store's record checker. Beside it lie the run's files:
figures (``files/<name>.png``), JSON artifacts (``files/<name>.json``) and its text files (the log, FASTA)
inside one JSON object (``texts.json``), so that a bundle holds JSON and PNG only. Checkpoints travel only
when asked (``checkpoints/``) and are never read on import.

A bundle carries data, never a verdict: the importing kb judges the metrics with its own rule.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from schemas.run import RUN_ID_PATTERN

#: The bundle format this kb writes and the newest it reads; a bundle of a newer one is refused.
BUNDLE_SCHEMA_VERSION = 1


def _relative_path(value: str) -> str:
    """A path inside the bundle: relative, '/'-separated, no '..', no empty or hidden parts."""
    parts = value.split("/")
    if value.startswith("/") or "\\" in value or any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"{value!r} is not a relative path inside the bundle")
    return value


RelativePath = Annotated[str, Field(max_length=500), AfterValidator(_relative_path)]
FileRole = Literal["record", "texts", "artifact", "checkpoint"]


class BundleFile(BaseModel):
    """One file of a bundle, with what it is and its checksum."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    path: RelativePath = Field(description="Path inside the bundle, e.g. 'runs/<run id>/files/plot.png'.")
    role: FileRole = Field(description="'record' (the run's outcome record), 'texts' (its text files as one "
                           "JSON object), 'artifact' (a PNG or JSON file of the run) or 'checkpoint'.")
    artifact: RelativePath | None = Field(default=None, description="For an artifact or checkpoint: its path "
                                          "in the run's output folder (the name the store keeps it under).")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="SHA-256 of the file's bytes.")
    size: int = Field(ge=0, description="Size of the file in bytes.")


class BundledRun(BaseModel):
    """One run in a bundle: what it verified and its files."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    run_id: str = Field(pattern=f"^{RUN_ID_PATTERN}$", description="The run's id (kept on import).")
    claim_key: str | None = Field(default=None, max_length=2000,
                                  description="'<note id>#<claim id>' it bears on.")
    analyzer: str = Field(min_length=1, max_length=200, description="Registry name of the analyzer.")
    files: list[BundleFile] = Field(min_length=1, description="Its record first, then its other files.")


class BundleManifest(BaseModel):
    """``manifest.json``: what a bundle holds, who wrote it, and the checksum of every file."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    schema_version: int = Field(ge=1, description="Bundle format version (BUNDLE_SCHEMA_VERSION when "
                                "written).")
    kb_version: str = Field(max_length=100, description="Version of the kb that wrote the bundle.")
    git_commit: str | None = Field(default=None, max_length=100, description="Commit of that kb, when known.")
    created_at: dt.datetime = Field(description="When the bundle was written (UTC).")
    runs: list[BundledRun] = Field(min_length=1, description="The runs it carries.")
