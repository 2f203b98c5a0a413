"""Adding papers: what a PDF (``pdf_layout``, reading with the other ``pdf_*`` modules), a BibTeX file or a
Zotero export says about a paper and the note written from it (``add``), and looking a paper up online by its
identifier (``lookups``)."""
