"""Notes: the user's files. Reading, validating and writing notes (``files``), byte-minimal edits (``edits``),
the one lock per note (``locks``), the files a note names inside the vault (``sources``), a claim's grounding
in its source text (``grounding``) and a claim's analyzer binding checked against the registry
(``bindings``)."""
