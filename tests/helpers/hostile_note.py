"""A note whose every field holds Markdown images, links, raw HTML, bare URLs and backticks that point at a
host nothing listens on: what the app must show as text (AppTest and Chromium tests share it)."""

from __future__ import annotations

import textwrap

HOST = "127.0.0.1:9"  # nothing listens there: a request would fail, but the note must not even make one
HOSTILE = (f"![i](http://{HOST}/i.png) [l](http://{HOST}/l) <img src=http://{HOST}/h.png> "
           f"`tick` www.track.example http://{HOST}/bare")
# Streamlit's shortcodes for an icon, an emoji and its logo: a claim must not wear kb's own icons. The body is the
# user's Markdown and keeps them (it is rendered as Markdown on purpose), so only one-line fields carry them.
SHORTCODES = ":material/verified: :smile: :streamlit:"


def hostile_note(paper_id: str, op: str, value: int) -> str:
    h = HOSTILE
    return textwrap.dedent(f"""\
        ---
        paper_id: "{paper_id}"
        title: "{paper_id} {h} {SHORTCODES}"
        authors:
          - name: "{h}"
        institutions: ["{h}"]
        topic: "{h}"
        analyst: "{h}"
        tags: ["{h}"]
        publication:
          venue: "{h}"
          year: 2024
        claims:
          - id: c
            statement: "{h} {SHORTCODES}"
            kind: quantitative
            source:
              quote: "{h}"
              section: "{h}"
            analyzer:
              name: noop
              params:
                value: 3
            expect:
              metric: value
              op: "{op}"
              value: {value}
            paper_values:
              - value: 3
                where: "{h}"
                note: "{h}"
        ---
        # Body {h}

        <script>alert(1)</script> ![body](http://{HOST}/body.png)
        """)
