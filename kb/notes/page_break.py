"""The character between the pages of a source text taken from a PDF, in a module of its own: kb add's PDF
reader (kb.papers.pdf_affiliations, in its child process) needs it without importing the notes' models and
settings (``kb.notes.grounding`` imports pydantic: 0.2 s of CPU at every PDF's read)."""

PAGE_BREAK = "\f"
