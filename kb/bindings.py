"""Check a claim's analyzer binding against the registry when the note is read, not when it runs.

A binding names an analyzer, a scale, parameters and an expectation over one of the analyzer's metrics.
Each can be wrong in a way that would only show at ``kb verify`` (an unknown metric wastes a whole run), or
be dangerous (a parameter that widens what kb trusts): ``binding_problems`` finds them all, each with the
field it is about (``analyzer.params.max_sequences``) and what is allowed, so the note is invalid with
one line naming the file, the line and the field.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from schemas import Claim


def _known_metric(metric: str, declared: dict[str, str], result_fields: set[str]) -> bool:
    """Whether a dotted metric path can exist in the analyzer's result.

    A declared metric matches exactly or as a prefix (``layers`` covers ``layers.20.kl_to_final``); any
    path starting with a field of the Result model can exist too (per-layer dictionaries are open-ended).
    """
    head = metric.split(".", 1)[0]
    return (metric in declared or head in result_fields
            or any(metric.startswith(f"{name}.") for name in declared))


def binding_problems(claim: Claim) -> list[tuple[str, str]]:
    """Problems of one claim's binding as (field relative to the claim, what is wrong and what is allowed)."""
    from analyzers import registry

    binding = claim.analyzer
    if binding is None:
        return []
    analyzers = registry.load_all()
    if binding.name not in analyzers:
        return [("analyzer.name", f"unknown analyzer {binding.name!r}; known: {', '.join(sorted(analyzers))}")]
    analyzer = analyzers[binding.name]()
    problems: list[tuple[str, str]] = []
    if binding.scale is not None and binding.scale not in analyzer.scales:
        problems.append(("analyzer.scale", f"{binding.name} has no scale {binding.scale!r}; known: "
                                           f"{', '.join(analyzer.scales) or 'none'}"))
    refused = analyzer.Params.note_errors(binding.params)
    problems += [(f"analyzer.params.{name}", why) for name, why in refused.items()]
    if not refused and not problems:
        problems += _params_problems(analyzer, binding.params, binding.scale)
    if claim.expect is not None:
        fields = set(analyzer.Result.model_fields)
        if not _known_metric(claim.expect.metric, analyzer.metrics, fields):
            problems.append(("expect.metric", f"{binding.name} does not produce {claim.expect.metric!r}; its "
                                              f"metrics: {', '.join(sorted(analyzer.metrics) or sorted(fields))}"))
    return problems


def _params_problems(analyzer: Any, params: dict[str, Any], scale: str | None) -> list[tuple[str, str]]:
    """The analyzer's own validation of the parameters (on top of the scale preset), field by field."""
    allowed = sorted(set(analyzer.Params.model_fields) - analyzer.Params.operator_only_fields() - {"device"})
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
