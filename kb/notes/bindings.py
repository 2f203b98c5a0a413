"""Check a claim's analyzer binding against the registry when the note is read, not when it runs.

A binding names an analyzer, a scale, parameters and an expectation over one of the analyzer's metrics.
Each can be wrong in a way that would only show at ``kb verify`` (an unknown metric wastes a whole run), or
be dangerous (a parameter that widens what kb trusts): ``binding_problems`` finds them all, each with the
field it is about (``analyzer.params.max_sequences``) and what is allowed, so the note is invalid with
one line naming the file, the line and the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import ValidationError

from kb.settings import NoteLimits
from schemas import AnalyzerBinding, Claim, Expectation


def _known_metric(metric: str, declared: dict[str, str], result_fields: set[str]) -> bool:
    """Whether a dotted metric path can exist in the analyzer's result.

    A declared metric matches exactly or as a prefix (``layers`` covers ``layers.20.kl_to_final``); any
    path starting with a field of the Result model can exist too (per-layer dictionaries are open-ended).
    """
    head = metric.split(".", 1)[0]
    return (metric in declared or head in result_fields
            or any(metric.startswith(f"{name}.") for name in declared))


class Bound(Protocol):
    """What the binding check reads of a claim: a note's claim, or one the drafter proposes."""

    @property
    def analyzer(self) -> AnalyzerBinding | None: ...

    @property
    def expect(self) -> Expectation | None: ...


def binding_problems(claim: Bound, *, limits: NoteLimits | None = None,
                     analyzers: Mapping[str, Any] | None = None) -> list[tuple[str, str]]:
    """Problems of one claim's binding as (field relative to the claim, what is wrong and what is allowed):
    the one binding check, which notes, the drafter, the app and ``kb verify`` all ask. ``limits``: what a
    note may ask of this machine (the operator's settings; default ``NoteLimits()``); ``analyzers``: the
    registry's by default."""
    from analyzers import registry

    binding = claim.analyzer
    if binding is None:
        return []
    limits = NoteLimits() if limits is None else limits
    cap = limits.max_seeds
    if binding.seeds is not None and len(binding.seeds) > cap:
        return [("analyzer.seeds", f"{len(binding.seeds):,} seeds, over the limit of {cap} runs per claim "
                                   "(setting max_seeds_per_claim, KB_MAX_SEEDS_PER_CLAIM); list fewer seeds")]
    analyzers = registry.load_all() if analyzers is None else analyzers
    if binding.name not in analyzers:
        return [
            ("analyzer.name", f"unknown analyzer {binding.name!r}; known: {', '.join(sorted(analyzers))}")
        ]
    analyzer = analyzers[binding.name]()
    problems: list[tuple[str, str]] = []
    if binding.scale is not None and binding.scale not in analyzer.scales:
        problems.append(("analyzer.scale", f"{binding.name} has no scale {binding.scale!r}; known: "
                                           f"{', '.join(analyzer.scales) or 'none'}"))
    if binding.settled_by is not None and binding.settled_by not in analyzer.scales:
        problems.append(("analyzer.settled_by", f"{binding.name} has no scale {binding.settled_by!r}; known: "
                                                f"{', '.join(analyzer.scales) or 'none'}"))
    refused = {**analyzer.Params.note_errors(binding.params), **resource_problems(binding.params, limits)}
    problems += [(f"analyzer.params.{name}", why) for name, why in refused.items()]
    if not refused and not problems:
        problems += params_problems(analyzer, binding.params, binding.scale)
    if claim.expect is not None:
        fields = set(analyzer.Result.model_fields)
        if not _known_metric(claim.expect.metric, analyzer.metrics, fields):
            problems.append(
                (
                    "expect.metric",
                    f"{binding.name} does not produce {claim.expect.metric!r}; its "
                    f"metrics: {', '.join(sorted(analyzer.metrics) or sorted(fields))}",
                )
            )
    return problems


_THREAD_FIELDS = frozenset({"threads", "num_threads", "workers", "num_workers", "processes"})


def resource_problems(params: dict[str, Any], limits: NoteLimits) -> dict[str, str]:
    """What a note asks of the machine beyond what the operator allows (``limits``), by parameter: more
    threads than ``limits.threads``, a device (the operator's choice: ``kb verify --device``), whole numbers
    past ``limits.max_integer``. The person running kb sets larger values with ``--set`` or the settings."""
    found: dict[str, str] = {}
    for name, value in params.items():
        if name == "device":
            found[name] = (
                "the device is chosen by the person running kb (kb verify --device, a scale preset), "
                "never by a note: remove it"
            )
        elif isinstance(value, bool) or not isinstance(value, int):
            continue
        elif name in _THREAD_FIELDS and value > limits.threads:
            found[name] = (f"{value:,} is more than the {limits.threads} a note may ask for here (setting "
                           "max_note_threads, KB_MAX_NOTE_THREADS; default: this machine's CPU cores)")
        elif abs(value) > limits.max_integer:
            found[name] = (
                f"{value:,} is over the {limits.max_integer:,} a note may set (setting max_note_integer, "
                f"KB_MAX_NOTE_INTEGER); the person running kb can set more with --set {name}=..."
            )
    return found


def params_problems(analyzer: Any, params: dict[str, Any], scale: str | None) -> list[tuple[str, str]]:
    """The analyzer's own validation of the parameters (on top of the scale preset), field by field, as
    (``analyzer.params.<field>`` or ``analyzer.params``, what is wrong)."""
    allowed = sorted(analyzer.Params.note_fields())
    try:
        analyzer.params_for(params, scale=scale)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            name = ".".join(str(part) for part in error["loc"])
            if error["type"] == "extra_forbidden":
                problems.append((f"analyzer.params.{name}", f"{analyzer.name} takes no parameter {name!r}; "
                                                            f"allowed: {', '.join(allowed)}"))
            else:
                problems.append((f"analyzer.params.{name}", error["msg"]))
        return problems
    except ValueError as exc:
        return [("analyzer.params", str(exc))]
    return []


@dataclass(frozen=True)
class Settling:
    """Which preset would settle a claim, whether it runs here, and what it costs: the one rule every surface
    (``kb verify``, ``kb demo``, ``kb evidence``, the app) asks."""

    preset: str | None  # the preset whose evidence settles the claim (None: no analyzer bound)
    bound: str | None  # the preset the claim runs at (a proxy when it differs from ``preset``)
    runnable_here: bool
    why_not: str | None = None  # why ``preset`` cannot run here
    gpu_hours: float | None = None  # rough cost of one run at ``preset`` on one H100-class GPU
    what: str = ""  # what the preset runs (models, depths)
    analyzer: str | None = None  # the bound analyzer (None: none, or one kb does not have)

    @property
    def proxy(self) -> bool:
        """The bound preset only runs a smaller proxy of the claim."""
        return self.preset is not None and self.bound != self.preset

    def cost_text(self) -> str | None:
        """The one figure of what a run at ``preset`` costs: 'about 475 GPU-hours on one H100-class GPU'."""
        return (
            None
            if self.gpu_hours is None
            else f"about {_hours(self.gpu_hours)} GPU-hours on one H100-class GPU"
        )

    def text(self) -> str:
        """One line: where the claim is settled and, if not here, what that takes (the cost said once: not
        again when the reason it cannot run here already names the same figure)."""
        if self.analyzer is None:
            return "no analyzer measures this claim: only its quote is checked against the source"
        if self.preset is None:  # bound without a scale: the analyzer's default parameters decide
            where = "which runs here" if self.runnable_here else f"not runnable here ({self.why_not})"
            return f"settled by '{self.analyzer}' at its default parameters, {where}"
        what = f" ({self.what})" if self.what else ""
        cost = f", {self.cost_text()}" if self.gpu_hours is not None else ""
        if self.gpu_hours is not None and f"{_hours(self.gpu_hours)} hours" in (self.why_not or ""):
            cost = ""
        if self.runnable_here:
            lead = f"'{self.bound}' is a proxy; " if self.proxy else ""
            return f"{lead}settled at '{self.preset}'{what}, which runs here{cost}"
        lead = f"'{self.bound}' runs a proxy here; " if self.proxy else ""
        return f"{lead}settled only at '{self.preset}'{what}: not runnable here ({self.why_not}){cost}"


#: Preset parameters that say what a run measures, shown in ``Settling.text`` (in this order).
_SHOWN = ("model", "models", "depths", "parameter_budget", "device")


def settling(claim: Claim, preset: str | None = None) -> Settling:
    """Where ``claim`` is settled: ``preset`` when given (the one a tension's plan names), else its binding's
    ``settled_by`` preset, else its bound scale; whether this machine can run it (the analyzer's own
    ``preflight``) and the analyzer's rough GPU hours for it."""
    from analyzers import registry
    from analyzers.base import NotRunnable

    binding = claim.analyzer
    analyzers = registry.load_all()
    if binding is None or binding.name not in analyzers:
        return Settling(None, None, runnable_here=False)
    analyzer = analyzers[binding.name]()
    preset = preset or binding.settled_by or binding.scale
    shown = analyzer.scales.get(preset or "", {})
    what = ", ".join(f"{key} {_short(shown[key])}" for key in _SHOWN if key in shown)
    try:
        analyzer.preflight(analyzer.params_for(binding.params, scale=preset))
    except NotRunnable as exc:
        return Settling(preset, binding.scale, False, str(exc), analyzer.gpu_hours.get(preset or ""), what,
                        binding.name)
    except ValueError as exc:  # parameters the analyzer refuses: said by ``binding_problems``
        return Settling(preset, binding.scale, False, str(exc).splitlines()[0], None, what, binding.name)
    return Settling(
        preset, binding.scale, True, None, analyzer.gpu_hours.get(preset or ""), what, binding.name
    )


def _hours(hours: float) -> str:
    """'0.2', '3', '475', '1,200': as the analyzers' own messages write hours."""
    return f"{hours:g}" if hours < 10 else f"{hours:,.0f}"


def _short(value: Any) -> str:
    if isinstance(value, list):
        return f"{value[0]}..{value[-1]} ({len(value)})" if len(value) > 3 else "/".join(map(str, value))
    return f"{value:g}" if isinstance(value, float) else str(value)


#: Claim states that settle a claim: every other state's reason also says where it would be settled.
_SETTLED = {"supported", "refuted"}


def reason_line(
    claim: Claim | None, reason: str | None, state: str | None, *, with_settling: bool = True
) -> str:
    """A claim's reason in one line, as the demo's verdict table and the app's claim cards show it: the
    verdict's reason (its interval beside the claim's threshold, the metric path not repeated inside the
    threshold), then, for a claim that what ran here does not settle, where it would be settled and what that
    costs (unless ``with_settling`` is False: the claim card shows those as fields of their own)."""
    text = " ".join((reason or "").split())
    if claim is not None and claim.expect is not None:
        text = text.replace(f"'{claim.expect.metric} ", "'")
    if with_settling and claim is not None and claim.analyzer is not None and state not in _SETTLED:
        found = settling(claim)
        if found.proxy or not found.runnable_here:
            text = f"{text}; {found.text()}" if text else found.text()
    return text
