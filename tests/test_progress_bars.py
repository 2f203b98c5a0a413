"""Progress bars that also show progress in a log (``analyzers.progress_bars.LoggedProgress``)."""

from __future__ import annotations

import io

from rich.console import Console
from rich.markup import escape

from analyzers.progress_bars import LoggedProgress


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _bars(terminal: bool) -> tuple[LoggedProgress, io.StringIO, Clock]:
    out, clock = io.StringIO(), Clock()
    console = Console(file=out, force_terminal=terminal, width=100)
    # transient: the bar's own last drawing, which rich writes when it stops, is left out of the output
    bars = LoggedProgress(console=console, every=60, gap=5, clock=clock, auto_refresh=False, transient=True)
    return bars, out, clock


def _lines(out: io.StringIO) -> list[str]:
    """The descriptions of the plain lines: 'SHARE ELAPSED  DESCRIPTION'."""
    return [line.rsplit("  ", 1)[-1] for line in out.getvalue().splitlines() if line.strip()]


def test_a_log_gets_a_line_at_the_start_on_each_change_at_a_heartbeat_and_at_the_end() -> None:
    bars, out, clock = _bars(terminal=False)
    with bars:
        task = bars.add_task("starting", total=1.0)
        clock.now = 1
        bars.update(task, completed=0.1, description="training")  # changed, but within 5 s of the last line
        clock.now = 6
        bars.update(task, completed=0.2, description="training")  # 5 s on: the change is told
        clock.now = 30
        bars.update(task, completed=0.3, description="training")  # nothing new, 24 s on: quiet
        clock.now = 67
        bars.update(task, completed=0.4, description="training")  # a minute of silence: a heartbeat
        clock.now = 68
        bars.update(task, completed=1.0, description="done")  # finished: told at once
        clock.now = 200
        bars.update(task, completed=1.0, description="done")  # and only once
    assert _lines(out) == ["starting", "training", "training", "done"], out.getvalue()
    assert "40.0%" in out.getvalue() and "100.0%" in out.getvalue()


def test_a_line_shows_user_text_as_written_and_markup_rendered_away() -> None:
    bars, out, _ = _bars(terminal=False)
    with bars:
        bars.add_task(f"[bold]note[/] {escape('[red]not markup[/red]')}", total=None)
    assert _lines(out) == ["note [red]not markup[/red]"]


def test_a_terminal_gets_the_bar_alone() -> None:
    bars, out, clock = _bars(terminal=True)
    with bars:
        task = bars.add_task("starting", total=1.0)
        clock.now = 100
        bars.update(task, completed=1.0, description="done")
    # Drawn in place: no plain line of its own ('  0.0%  ... starting' as a line by itself).
    assert not any(line.strip().endswith("starting") for line in out.getvalue().splitlines()), out.getvalue()


def test_a_disabled_bar_writes_nothing() -> None:
    out = io.StringIO()
    with LoggedProgress(console=Console(file=out, force_terminal=False), disable=True) as bars:
        bars.update(bars.add_task("quiet", total=1.0), completed=1.0)
    assert out.getvalue() == ""
