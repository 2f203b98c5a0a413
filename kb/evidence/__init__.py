"""Evidence and what it makes of claims: the one verdict rule (``verdicts``), a claim's state
(``claim_states``), tensions between notes (``tensions``), run-time estimates (``estimates``), a result's
plotted axes (``curves``), the content-addressed artifact store (``artifact_store``) and the library view
(``library``)."""
