"""The frontmatter of a paper note, in the user's own format (see the seed note).

Every known field is typed; fields kb does not know (``is_zheng_shuangjia_paper``, ...) are kept as
they are (``extra='allow'``) so a round trip never drops them.
"""

from __future__ import annotations

import datetime as dt
from enum import StrEnum
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from schemas.claim import Claim


def _parse_date(value: Any) -> Any:
    """Accept YAML dates (unquoted) and ISO strings (quoted) alike."""
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value.strip())
        except ValueError as exc:
            raise ValueError(f"expected a date as YYYY-MM-DD, got {value!r}") from exc
    return value


NoteDate = Annotated[dt.date, BeforeValidator(_parse_date)]


def _not_a_bool(value: Any) -> Any:
    """YAML's true/false are numbers 1 and 0 to Python; a score or a year given as yes/no is a mistake."""
    if isinstance(value, bool):
        raise ValueError(f"expected a whole number, got the yes/no value {str(value).lower()}")
    return value


# A citation key as BibTeX, biber and pandoc ('@key') all read it: no spaces, commas, braces or quotes.
CITEKEY_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_:.+\-]{0,99}$"
CiteKey = Annotated[str, Field(pattern=CITEKEY_PATTERN)]

Year = Annotated[int, Field(ge=1900, le=2100), BeforeValidator(_not_a_bool)]
OneToFive = Annotated[int, Field(ge=1, le=5), BeforeValidator(_not_a_bool)]


class Status(StrEnum):
    """Where the note is in the reading workflow."""

    inbox = "inbox"
    to_read = "to_read"
    reading = "reading"
    analyzed = "analyzed"
    reviewed = "reviewed"
    archived = "archived"


class Decision(StrEnum):
    """The analyst's decision about the paper (upper case in the user's notes)."""

    ACCEPT = "ACCEPT"
    REJECT = "REJECT"
    MAYBE = "MAYBE"
    PENDING = "PENDING"


class FieldSource(StrEnum):
    """Where a field of a note made by ``kb add`` came from (the note's ``field_sources``)."""

    CROSSREF = "crossref"
    ARXIV = "arxiv"
    OPENALEX = "openalex"
    GROBID = "grobid"  # the PDF's header as a GROBID service read it (the setting grobid_url)
    LAYOUT = "layout"  # read from the PDF itself (its text, layout, links or metadata)
    # from the PDF by a learned model where no layout rule read it (the setting learned_year): to be checked
    LAYOUT_LEARNED = "layout-learned"
    BIBTEX = "bibtex"
    ZOTERO = "zotero"  # a CSL-JSON export


class Author(BaseModel):
    """One author and the affiliation given in the note."""

    model_config = ConfigDict(defer_build=True, extra="allow")

    name: str = Field(min_length=1, description="Full name as printed on the paper.")
    affiliation: str | None = Field(default=None, description="Affiliation, 'Unknown' when not known.")
    family: str | None = Field(default=None, description=(
        "Family name, particle included ('van der Waals'), only where the name alone does not tell it "
        "('Karimi Mamaghan'): citations split the name there."))


class Publication(BaseModel):
    """Where and when the paper appeared."""

    model_config = ConfigDict(defer_build=True, extra="allow")

    venue: str | None = Field(default=None, description="Journal, conference or 'arXiv'.")
    year: Year | None = Field(default=None, description="Publication year.")
    arxiv_id: str | None = Field(default=None, description="arXiv identifier without prefix, e.g. '2602.21750'.")
    doi: str | None = Field(default=None, description="DOI, when the paper has one.")


class Urls(BaseModel):
    """Links to the paper, its PDF and its code."""

    model_config = ConfigDict(defer_build=True, extra="allow")

    paper_url: str | None = Field(default=None, description="Landing page of the paper.")
    pdf_url: str | None = Field(default=None, description="Direct PDF link.")
    code_url: str | None = Field(default=None, description="Code repository.")


class PaperNote(BaseModel):
    """Frontmatter of one paper note. Unknown fields are kept verbatim."""

    model_config = ConfigDict(defer_build=True, extra="allow", use_enum_values=False)

    paper_id: str = Field(min_length=1, description="Stable paper identifier, e.g. 'arxiv:2602.21750'.")
    title: str = Field(min_length=1, description="Paper title.")
    authors: list[Author] = Field(default_factory=list, description="Authors with affiliations.")
    institutions: list[str] = Field(default_factory=list, description="Institutions involved.")
    publication: Publication | None = Field(default=None, description="Venue, year and identifiers.")
    urls: Urls | None = Field(default=None, description="Paper, PDF and code links.")
    direction: str | None = Field(default=None, description="Research direction, e.g. 'biomed'.")
    topic: str | None = Field(default=None, description="Topic, e.g. 'protein-language-models'.")
    tags: list[str] = Field(default_factory=list, description="Free tags, lower-case with dashes.")
    journal_tier: OneToFive | None = Field(default=None, description="Venue tier, 1 (top) to 5.")
    quality_score: OneToFive | None = Field(default=None, description="Analyst's score, 1 to 5.")
    status: Status | None = Field(default=None, description="Reading workflow status.")
    decision: Decision | None = Field(default=None, description="ACCEPT, REJECT, MAYBE or PENDING.")
    decision_date: NoteDate | None = Field(default=None, description="Date of the decision (YYYY-MM-DD).")
    analyst: str | None = Field(default=None, description="Who wrote the analysis.")
    analysis_date: NoteDate | None = Field(default=None, description="Date of the analysis (YYYY-MM-DD).")
    source_file: str | None = Field(
        default=None, description="Source text (abstract/full text) beside the note, for grounding checks."
    )
    field_sources: dict[str, FieldSource] | None = Field(
        default=None, description="Where each field 'kb add' filled came from (title: crossref, affiliations: "
        "layout, ...): a record looked up online, the PDF's layout, or the BibTeX/Zotero file.",
    )
    citekey: CiteKey | None = Field(default=None, description=(
        "Citation key for BibTeX/CSL-JSON exports, unique in the library; kb proposes one (family name + year) "
        "at the first export and never rewrites it."))
    claims: list[Claim] = Field(default_factory=list, description="Checkable claims the note makes.")

    @field_validator("tags")
    @classmethod
    def _tags_are_clean(cls, tags: list[str]) -> list[str]:
        for tag in tags:
            if not tag.strip():
                raise ValueError("tags must not be empty strings")
        return tags

    @model_validator(mode="after")
    def _claim_ids_unique(self) -> PaperNote:
        seen: set[str] = set()
        for claim in self.claims:
            if claim.id in seen:
                raise ValueError(f"duplicate claim id {claim.id!r}: claim ids must be unique within a note")
            seen.add(claim.id)
        return self

    @property
    def year(self) -> int | None:
        """Publication year, when the note gives one."""
        return self.publication.year if self.publication else None

    @property
    def extra_fields(self) -> dict[str, Any]:
        """Fields the user added that kb does not know; kept on every round trip."""
        return dict(self.model_extra or {})
