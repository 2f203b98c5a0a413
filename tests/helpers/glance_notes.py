"""Notes for the app's "at a glance" tests (``test_app_glance.py``, ``test_browser_glance.py``), bound to the
test-only ``test.report`` analyzer (``tests/helpers/report_analyzer.py``) and to ``noop``.

``GLANCE_NOTE``: three claims whose results share two caveats (one has a third of its own), one of which draws a
plot, and a claim about a 650M-parameter model that cannot run here. ``quick_note``: claims that each take a few
seconds, for a demo one can watch.
"""

from __future__ import annotations

import json
import os
import textwrap

#: Where the processes a test starts find ``test.report`` (and ``noop``, as conftest.py registers it).
ANALYZER_MODULES = "tests.noop_analyzer,tests.helpers.report_analyzer"

SHARED = ["Chains from ES and OT did not meet: not equilibrated.", "The default structure is 1UBI, not 2ABD."]
OWN = "Attention was compared with contacts at 8 Å."

GLANCE_NOTE = textwrap.dedent(f"""\
    ---
    paper_id: "test:glance"
    title: "A note whose claims share their caveats"
    claims:
      - id: first
        statement: "The value is above two."
        analyzer: {{name: test.report, params: {{value: 3, plot: true, caveats: {json.dumps(SHARED)}}}}}
        expect: {{metric: value, op: ">", value: 2}}
      - id: second
        statement: "The value is below four."
        analyzer: {{name: test.report, params: {{value: 3, caveats: {json.dumps(SHARED)}}}}}
        expect: {{metric: value, op: "<", value: 4}}
      - id: third
        statement: "The value is at least three."
        analyzer: {{name: test.report, params: {{value: 3, caveats: {json.dumps([*SHARED, OWN])}}}}}
        expect: {{metric: value, op: ">=", value: 3}}
      - id: big-model
        statement: "At 650M parameters only a GPU shows it."
        analyzer: {{name: noop, params: {{not_runnable: "needs a GPU: re-verify with --device cuda"}}}}
        expect: {{metric: value, op: ">", value: 2}}
        scale: {{parameters: 650000000, data: UniRef50}}
    ---
    body
    """)


def quick_note(claims: int, seconds: float) -> str:
    """A note of ``claims`` claims, each verified by a ``test.report`` run of ``seconds`` (values 1, 2, ...)."""
    lines = ["---", 'paper_id: "test:quick"', 'title: "Quick claims, verified while you watch"', "claims:"]
    for n in range(1, claims + 1):
        lines += [f"  - id: quick-{n}", f'    statement: "The value is at least {n}."',
                  f"    analyzer: {{name: test.report, params: {{value: {n}, seconds: {seconds}}}}}",
                  f'    expect: {{metric: value, op: ">=", value: {n}}}']
    return "\n".join([*lines, "---", "body", ""])


def analyzer_env() -> dict[str, str]:
    """The environment for a ``kb`` process that runs ``test.report``."""
    return {**os.environ, "KB_ANALYZER_MODULES": ANALYZER_MODULES}
