"""The analyzer contract: a name, typed parameters, a typed result, declared metrics, resource needs.

An analyzer reproduces claims. It is a class with ``name`` (e.g. ``depth.probe``), a pydantic
``Params`` model, a pydantic ``Result`` model whose ``metric(...)`` fields are the ``metrics`` a claim's
expectation may reference, ``resources`` and named ``scales`` (parameter presets). ``compute`` names the
heavy function (``"analyzers.depth.compute:probe"``) that ``run(params, ctx)`` imports when a run starts:
it writes artifacts into ``ctx.out_dir`` and returns a ``Result``. Analyzers register with ``@register``
(see ``analyzers.registry``); ``analyzers/README.md`` gives the package shape every analyzer follows.
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import json
import math
import sys
from abc import ABC
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import PydanticUndefined

from analyzers.files import json_safe
from schemas.run import EvidenceScale


def torch_gpu_build() -> bool:
    """Whether the installed torch is a CUDA (or ROCm) build, read from its ``version.py`` without importing
    torch: a CPU build answers at once. False without torch; True when torch is imported already (it answers
    then)."""
    spec = importlib.util.find_spec("torch") if "torch" not in sys.modules else None
    if spec is None:
        return "torch" in sys.modules
    folders = list(spec.submodule_search_locations or [])
    return gpu_build_of(Path(folders[0]) / "version.py") if folders else True


def gpu_build_of(version_file: Path) -> bool:
    """Whether torch's ``version.py`` names a CUDA or ROCm version (``cuda = '12.4'``; a CPU build has
    ``cuda = None`` and ``hip = None``). True when the file cannot be read as such: torch is asked then."""
    try:
        tree = ast.parse(version_file.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return True
    built: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            if isinstance(target, ast.Name) and target.id in ("cuda", "hip"):
                try:
                    built[target.id] = ast.literal_eval(node.value)
                except (TypeError, ValueError):
                    return True
    return "cuda" not in built or built.get("cuda") is not None or built.get("hip") is not None


@functools.cache
def cuda_available() -> bool:
    """``torch.cuda.is_available()``, without importing torch where the build has no GPU support: importing it
    takes seconds (more under load), which every page showing a CUDA-bound claim's card paid on a CPU machine.
    Once per process: devices do not come and go under a running process."""
    if not torch_gpu_build():
        return False
    import torch

    return bool(torch.cuda.is_available())


class GpuNeed(StrEnum):
    """Whether an analyzer needs a GPU."""

    none = "none"
    recommended = "recommended"
    required = "required"


class Resources(BaseModel):
    """What a run needs from the machine."""

    gpu: GpuNeed = Field(default=GpuNeed.none, description="GPU need at the default scale.")
    memory_gb: float = Field(default=1.0, ge=0, description="Rough peak host memory at the default scale.")


def operator_only(default: Any = None, *, description: str, **kwargs: Any) -> Any:
    """A ``Params`` field that widens what kb trusts: only the person running kb may set it, never a note.

    Remote model code, folders and files outside the KB home, anything that reads or writes arbitrary
    paths: a note is shared data (a team server, git, a synced folder), so whoever can write one must not
    be able to make the machine that re-verifies it run code or touch its files. Such fields come from CLI
    flags and settings; a note that sets one is invalid (see ``AnalyzerParams.operator_only_fields``).
    """
    return Field(default, description=description, json_schema_extra={"operator_only": True}, **kwargs)


def looks_like_path(value: str, *, syntax_only: bool = False) -> bool:
    """Whether a parameter value names a local file or folder: written as a path (absolute, home- or
    dot-relative, a '..' step) or, unless ``syntax_only``, existing here."""
    if value.startswith(("/", "~", "./", "../", "\\")) or ".." in Path(value).parts:
        return True
    if syntax_only:
        return False
    try:
        return Path(value).expanduser().exists()
    except OSError:
        return False


class AnalyzerParams(BaseModel):
    """Parameters every analyzer takes; analyzers subclass this with their own fields."""

    model_config = ConfigDict(extra="forbid")

    @classmethod
    def note_errors(cls, params: dict[str, Any]) -> dict[str, str]:
        """What is wrong with parameters a note gives, by field: settings that widen trust, for a start.

        Analyzers extend it (``super().note_errors(params)``) for values a note may not use, e.g. a model
        given as a local folder rather than a hub id or an imported name.
        """
        return {name: "only the person running kb may set this (a CLI flag or a setting), never a note: it "
                      "would let a shared note run code or touch files outside the KB home"
                for name in params if name in cls.operator_only_fields()}

    @classmethod
    def note_fields(cls) -> list[str]:
        """The parameters a note may set, in declaration order: all but the operator's (``operator_only``) and
        the device, which the person running kb chooses per run (``kb verify --device``, a scale preset)."""
        return [
            name for name in cls.model_fields if name not in cls.operator_only_fields() and name != "device"
        ]

    @classmethod
    def operator_only_fields(cls) -> frozenset[str]:
        """Names of the fields declared with ``operator_only``: a note may not set them."""
        return frozenset(
            name for name, info in cls.model_fields.items()
            if isinstance(info.json_schema_extra, dict) and info.json_schema_extra.get("operator_only")
        )

    device: str = Field(default="cpu", description="Torch device: 'cpu', 'cuda' or 'cuda:N'.")
    seed: int = Field(default=0, description="Random seed.")


#: Half-width in standard errors of a large-sample comparison (about 95 % for a normal estimate): what
#: analyzers use to tie locations (which temperature or depth is best). A value's interval against a claim's
#: threshold uses the t quantile for its units instead (``interval_quantile``).
Z_RESOLVED = 2.0

#: Two-sided coverage of every interval built from a standard error (``interval_quantile``).
CONFIDENCE = 0.95
#: Fewest independent units (sequences, seeds, chains, snapshots, ...) a standard error may rest on: with
#: fewer, the spread itself is unknown (t(1) = 12.7), so the value is unresolved, whatever its interval would
#: say.
MIN_UNITS = 3


def interval_quantile(units: int | None, dof: int | None = None, comparisons: int = 1) -> float | None:
    """How many standard errors each side of a value its ``CONFIDENCE`` interval spans: the t quantile for
    ``dof`` degrees of freedom (default ``units - 1``), from ``scipy.stats``; None where ``units`` is unknown
    or under ``MIN_UNITS`` (nothing is resolved). The one rule analyzers (a precondition's margin) and
    ``kb.evidence.verdicts`` (a value's interval) both use. ``comparisons``: the number of intervals one
    decision needs all of (the best of k needs k - 1), each at ``CONFIDENCE`` Bonferroni-corrected so that the
    decision keeps it."""
    from scipy import stats

    if units is None or units < MIN_UNITS:
        return None
    freedom = units - 1 if dof is None else dof
    if freedom < 1:
        return None
    return float(stats.t.ppf(1 - (1 - CONFIDENCE) / (2 * max(comparisons, 1)), freedom))


def stderr_interval(value: float, stderr: float | None, units: int | None, dof: int | None = None
                    ) -> tuple[float, float] | None:
    """A value's ``CONFIDENCE`` interval from its standard error: value +- ``interval_quantile(units, dof)`` x
    stderr; None where it resolves nothing (no standard error, or too few units). The one interval
    ``kb.evidence.verdicts`` reads and the analyzers' power simulations judge by."""
    quantile = interval_quantile(units, dof)
    if quantile is None or stderr is None or not math.isfinite(stderr) or not math.isfinite(value):
        return None
    return value - quantile * stderr, value + quantile * stderr


def extreme_interval(parts: list[tuple[float, float | None, int | None]], largest: bool = False
                     ) -> tuple[float, float] | None:
    """The ``CONFIDENCE`` interval of the smallest (``largest``) of several values, each ``(value, stderr,
    units)``: every part's interval Bonferroni-corrected over the parts so that all hold at once, then the
    smallest (largest) low and high. "Every part above t" is resolved only where every part's low is past t;
    one part whose high is below t refutes it, at ``CONFIDENCE`` whichever part it is. None where any part
    resolves nothing: a part is never left out."""
    bounds = []
    for value, stderr, units in parts:
        quantile = interval_quantile(units, comparisons=len(parts))
        if quantile is None or stderr is None or not math.isfinite(stderr) or not math.isfinite(value):
            return None
        bounds.append((value - quantile * stderr, value + quantile * stderr))
    if not bounds:
        return None
    pick = max if largest else min
    return pick(low for low, _ in bounds), pick(high for _, high in bounds)


def too_few_units(units: int | None, source: str) -> str:
    """Why a standard error over ``units`` of ``source`` resolves nothing, in one line."""
    what = source or "units"
    if units is None:
        return f"its standard error states no number of {what}: an interval needs their count (t quantile)"
    return f"only {units} {what} behind its standard error, fewer than {MIN_UNITS}: unresolved at any value"


#: Where a metric's uncertainty comes from (``metric(uncertainty=...)``).
UNCERTAINTY_SOURCES = ("seeds", "snapshots", "sequences", "permutations", "references", "locations", "pairs")


class Precondition(BaseModel):
    """One thing a metric's value rests on, and whether it held in this run."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(
        description="What was checked: learned, equilibrated, converged, thermalized, beats chance, "
        "resolved, valid, ..."
    )
    passed: bool | None = Field(
        description="True: it held; False: it failed; None: unresolved (the check could "
        "not tell), which settles nothing either."
    )
    detail: str = Field(default="", description="One line with the numbers: what was measured against what.")


class MetricCheck(BaseModel):
    """What one metric path's value is worth: its uncertainty and the preconditions it rests on.

    A number's uncertainty is a standard error (``stderr``), an interval (``interval``: [low, high], e.g. the
    temperatures that tie with the best one), or none because it is ``exact`` by construction (a parameter
    count). A true/false value carries its interval as 0/1 bounds: [1, 1] resolved true, [0, 0] resolved
    false, [0, 1] not resolved. ``derived_from`` names the metric paths it was computed from: their
    preconditions are this one's too (``kb.evidence.verdicts`` follows them transitively).
    """

    model_config = ConfigDict(extra="forbid")

    stderr: float | None = Field(default=None, ge=0, description="Standard error of the value.")
    interval: tuple[float, float] | None = Field(default=None, description="[low, high] bounding the value.")
    exact: bool = Field(default=False, description="No uncertainty by construction (a count, a setting).")
    source: str = Field(
        default="", description="Where the uncertainty comes from (seeds, snapshots, sequences)."
    )
    units: int | None = Field(
        default=None,
        ge=0,
        description="How many independent units of ``source`` the "
        "standard error rests on; its interval uses the t quantile for ``dof`` (default "
        "units - 1) degrees of freedom, and fewer than MIN_UNITS resolve nothing.",
    )
    dof: int | None = Field(default=None, ge=0, description="Degrees of freedom when not units - 1 (a slope "
                            "over k points: k - 2).")
    note: str = Field(default="", description="How the uncertainty was found, in one line (shown with it).")
    preconditions: list[Precondition] = Field(default_factory=list, description="What the value rests on.")
    derived_from: list[str] = Field(
        default_factory=list, description="Metric paths this value was computed from."
    )

    @model_validator(mode="after")
    def _interval_ordered(self) -> MetricCheck:
        if self.interval is not None and not self.interval[0] <= self.interval[1]:
            raise ValueError(f"interval {list(self.interval)} must have low <= high")
        return self


def truth_interval(resolved_true: bool, resolved_false: bool) -> tuple[float, float]:
    """The 0/1 interval of a true/false metric: [1, 1] resolved true, [0, 0] resolved false, else [0, 1]."""
    return (1.0, 1.0) if resolved_true else (0.0, 0.0) if resolved_false else (0.0, 1.0)


class InvalidResult(ValueError):
    """A result holds a value its model does not allow (a wrong type): the run fails with what and where."""


class AnalyzerResult(BaseModel):
    """Fields every result carries; analyzers subclass this with their metrics."""

    model_config = ConfigDict(extra="forbid")

    scale: EvidenceScale = Field(description="Scale the analyzer actually ran at.")
    artifacts: list[str] = Field(default_factory=list, description="Files written, relative to out_dir.")
    provenance: dict[str, Any] = Field(
        default_factory=dict, description="Model id, revision, weight hash, data hash, dtype, ..."
    )
    notes: list[str] = Field(
        default_factory=list, description="Caveats a reader must see (defaults chosen, ...)."
    )
    checks: dict[str, MetricCheck] = Field(
        default_factory=dict,
        description="Per metric path (``peak_temperature.transformer``, ``test_error_by_temperature.2``): "
        "its uncertainty and the preconditions it rests on. kb.evidence.verdicts decides a claim only when "
        "every precondition of the path (of every prefix of it, and of what it derives from) passed and its "
        "interval lies on one side of the claim's threshold. Metrics declared exact get their check without "
        "the builder writing it.",
    )
    untestable: dict[str, str] = Field(
        default_factory=dict,
        description="Before ``checks``: metrics this run could not vouch for, with why. Still read (as a "
        "failed precondition) so that stored evidence reads the same; new results state preconditions in "
        "``checks``.",
    )

    @model_validator(mode="after")
    def _exact_metrics_checked(self) -> AnalyzerResult:
        for name, declared in metric_declarations(type(self)).items():
            if declared.exact and name not in self.checks:
                self.checks[name] = MetricCheck(exact=True, source="exact")
        return self


def metric(
    default: Any = PydanticUndefined,
    *,
    description: str,
    uncertainty: str | None = None,
    exact: bool = False,
    rests_on: tuple[str, ...] = (),
    **kwargs: Any,
) -> Any:
    """A ``Result`` field a claim may bind to: ``Analyzer.metrics`` is derived from these fields.

    The description is what the CLI, the app's claims editor and the agents show for the metric, so it is
    declared once, beside the value it describes. ``uncertainty`` says where the value's error bar comes from
    (one of ``UNCERTAINTY_SOURCES``) and ``exact`` that it has none by construction (a parameter count); every
    metric declares one of the two (the contract test checks it). ``rests_on`` names the preconditions the
    result builder checks for it (learned, equilibrated, ...), written down where the metric is.
    """
    extra: dict[str, Any] = {
        "metric": True,
        "uncertainty": uncertainty,
        "exact": exact,
        "rests_on": list(rests_on),
    }
    return Field(default, description=description, json_schema_extra=extra, **kwargs)


@dataclass(frozen=True)
class MetricDeclaration:
    """What a ``metric(...)`` field declares besides its description."""

    description: str
    uncertainty: str | None
    exact: bool
    rests_on: tuple[str, ...]


def metric_declarations(result: type[BaseModel]) -> dict[str, MetricDeclaration]:
    """The ``metric(...)`` fields of a result model and what each declares, in declaration order."""
    found = {}
    for name, info in result.model_fields.items():
        extra = info.json_schema_extra
        if isinstance(extra, dict) and extra.get("metric"):
            rests, source = extra.get("rests_on"), extra.get("uncertainty")
            found[name] = MetricDeclaration(
                info.description or "", source if isinstance(source, str) else None, bool(extra.get("exact")),
                tuple(str(r) for r in rests) if isinstance(rests, list) else ())
    return found


def metrics_of(result: type[BaseModel]) -> dict[str, str]:
    """The ``metric(...)`` fields of a result model, with their descriptions, in declaration order."""
    return {name: declared.description for name, declared in metric_declarations(result).items()}


def _leaves(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    """Every (dotted path, leaf value) under ``value``."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, f"{path}.{key}")
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _leaves(item, f"{path}.{index}")
    else:
        yield path, value


def result_record(result: AnalyzerResult) -> dict[str, Any]:
    """The result as strict JSON data (what ``metrics.json`` and the evidence hold), checked.

    A value of a type its model does not allow raises ``InvalidResult`` naming the field and the value: the
    run fails. A metric value that is None, NaN or infinite is not computable: it is written as null and its
    path gets a failed ``valid`` precondition, so a claim on it reads inconclusive, never refuted.
    """
    try:
        type(result).model_validate(result.model_dump())
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise InvalidResult(f"invalid result: {where}, {first.get('input')!r} ({first['msg']})") from None
    data = result.model_dump(mode="python")
    checks: dict[str, Any] = data.setdefault("checks", {})
    for name in metric_declarations(type(result)):
        for path, leaf in _leaves(data.get(name), name):
            if leaf is None or (isinstance(leaf, float) and not math.isfinite(leaf)):
                check = checks.setdefault(path, MetricCheck().model_dump())
                check["preconditions"].append(
                    Precondition(
                        name="valid",
                        passed=False,
                        detail=f"{path} has no value ({leaf!r}): not computable in this run",
                    ).model_dump()
                )
    strict = json_safe(data)
    json.dumps(strict, allow_nan=False, default=str)  # strict JSON or a loud failure here, not in a reader
    return json.loads(json.dumps(strict, default=str))


class NotRunnable(Exception):
    """The analyzer cannot run here (no GPU, weights unavailable offline, scale too large); says why."""


class Cancelled(Exception):
    """The run was cancelled while the analyzer was working."""


@dataclass
class RunContext:
    """What a running analyzer gets from whoever runs it (CLI, worker, test)."""

    out_dir: Path
    # A folder under the KB home where an analyzer may keep what outlives one run (downloaded structures,
    # trained reference models), given by whoever runs it: analyzers read no settings or environment of kb.
    cache_dir: Path | None = None
    # True when the person running kb said there is no network: loaders fail fast with what to do instead.
    offline: bool = False
    progress: Callable[[float, str], None] = lambda fraction, message: None
    is_cancelled: Callable[[], bool] = lambda: False
    # The longest an analyzer should go without a progress report, in seconds: long loops report at least
    # this often, with the time left (``analyzers.progress.Reporter``). The worker sets it from the settings.
    report_every: float = 30.0
    # A folder for the run's latest checkpoint. The worker fills it from the artifact store before the run
    # (a run killed on one node resumes on another) and uploads it whenever the analyzer calls
    # ``checkpoint_saved``. None where nobody keeps checkpoints (a plain ``kb run``).
    checkpoint_dir: Path | None = None
    on_checkpoint: Callable[[], None] = lambda: None
    # Told when the run enters a named stage (``enter_stage``): kb times each stage, weighs its progress bar
    # by the stages' estimates and stores their durations, so a first-use cost is never read as the run's own.
    on_stage: Callable[[str, float], None] = lambda name, until: None

    def enter_stage(self, name: str, until: float = 1.0) -> None:
        """Say the run now works on stage ``name`` (``analyzers.progress.first_use_stage(...)`` for a one-off
        cost such as training a built-in model, ``MAIN_STAGE`` for the run's own work), and that the stage
        ends when the run's reported fraction reaches ``until``."""
        self.on_stage(name, until)

    def within(self, start: float, end: float) -> RunContext:
        """This context with its progress (and stage ends) mapped into ``start``..``end`` of the run's: one
        part of a run (one model of a family) reports 0..1 and the run's bar moves only forward."""
        span = end - start
        outer_progress, outer_stage = self.progress, self.on_stage
        return replace(
            self,
            progress=lambda fraction, message: outer_progress(start + span * fraction, message),
            on_stage=lambda name, until: outer_stage(name, start + span * until),
        )

    def checkpoint_saved(self) -> None:
        """Say that ``checkpoint_dir`` now holds a complete checkpoint; the worker makes it durable.

        Write each checkpoint file atomically (a temporary name, then ``os.replace``) before calling this.
        """
        self.on_checkpoint()

    def report(self, fraction: float, message: str = "") -> None:
        """Report progress (0..1) and stop with ``Cancelled`` if the run was cancelled."""
        if self.is_cancelled():
            raise Cancelled(message or "cancelled")
        self.progress(max(0.0, min(1.0, fraction)), message)


P = TypeVar("P", bound=AnalyzerParams)
R = TypeVar("R", bound=AnalyzerResult)


class Analyzer(ABC, Generic[P, R]):
    """Base class of every analyzer. Subclasses set the class attributes and implement ``run``."""

    name: ClassVar[str]
    summary: ClassVar[str]
    version: ClassVar[str] = "1"
    Params: ClassVar[type[AnalyzerParams]]
    Result: ClassVar[type[AnalyzerResult]]
    # Derived from the Result's ``metric(...)`` fields (see ``__init_subclass__``); nested paths under a
    # metric (``layers.20.kl_to_final``) are valid too.
    metrics: ClassVar[dict[str, str]] = {}
    # "module:function" of the heavy work, imported when a run starts so that registering stays cheap; the
    # function is called as ``function(analyzer, params, ctx)`` and returns the Result.
    compute: ClassVar[str] = ""
    resources: ClassVar[Resources] = Resources()
    scales: ClassVar[dict[str, dict[str, Any]]] = {}
    # Fields besides the seed that say how or where a run happens, not what it measures (cache folders,
    # worker counts): ``scale_name`` keeps a preset's name whatever their values.
    scale_ignored_fields: ClassVar[frozenset[str]] = frozenset()
    # Seconds a run at each preset took on the reference machine (2 CPU cores, a fresh cache), as measured: kb
    # orders its queue quick first and says how long each run will take from these, scaled by this machine's
    # measured speed, until runs of the same preset have been timed here (``kb.evidence.estimates``).
    expected_seconds: ClassVar[dict[str, float]] = {}
    # The heavy libraries its compute imports (keys of ``analyzers.progress.LIBRARIES``): whoever runs it
    # loads those its process lacks first, each as a first-use stage, so an estimate can count them and a
    # run's own time (what the estimates learn from) leaves them out.
    libraries: ClassVar[tuple[str, ...]] = ()
    # Rough GPU hours a run at each GPU preset takes on one H100-class GPU: what ``kb verify`` and the app say
    # a claim settled only at that preset would cost (``kb.notes.bindings.settling``).
    gpu_hours: ClassVar[dict[str, float]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        result = cls.__dict__.get("Result")
        if result is not None and "metrics" not in cls.__dict__ and metrics_of(result):
            cls.metrics = metrics_of(result)

    def params_for(self, params: dict[str, Any] | None = None, scale: str | None = None) -> P:
        """Validate parameters, starting from a named scale preset when one is given."""
        merged: dict[str, Any] = {}
        if scale is not None:
            if scale not in self.scales:
                raise ValueError(
                    f"analyzer {self.name!r} has no scale {scale!r}; known: {sorted(self.scales)}"
                )
            merged.update(self.scales[scale])
        merged.update(params or {})
        return self.Params.model_validate(merged)  # type: ignore[return-value]

    def scale_name(self, params: AnalyzerParams) -> str:
        """The name of the preset in ``scales`` that ``params`` equals, else ``'custom'``.

        Every field is compared with the preset's validated parameters except the seed and the fields in
        ``scale_ignored_fields``, so a seed spread at the 'small' scale is still 'small'. The first matching
        preset wins, in the order ``scales`` lists them.
        """
        ignored = {"seed", *self.scale_ignored_fields}
        given = params.model_dump(exclude=ignored)
        for name in self.scales:
            if self.params_for(scale=name).model_dump(exclude=ignored) == given:
                return name
        return "custom"

    def cached_stages(self, params: P) -> frozenset[str]:
        """The cached stages a run builds, each named by what it depends on, where runs of several claims (of
        this analyzer or others) build the same ones: a later run whose stages earlier runs all build reuses
        their work and takes a fraction of its time alone (``kb.evidence.estimates``, the demo's plan).
        Default: none."""
        return frozenset()

    def first_use(self, params: P, cache_dir: Path) -> list[tuple[str, float]]:
        """The one-off costs a run on ``params`` would pay here before its own work, because ``cache_dir``
        lacks what they build (a built-in model to train, weights to download): each as (stage name, seconds
        on the reference machine). The run enters these stages by the same names (``RunContext.enter_stage``);
        kb adds them to its estimate as their own stages. Default: none."""
        return []

    def preflight(self, params: P) -> None:
        """Raise ``NotRunnable`` (saying why) when this machine cannot run these parameters.

        The worker calls it before ``run``; analyzers extend it for their own limits (weights only
        on the hub, a scale too large for the memory here) and call ``super().preflight(params)``.
        """
        if params.device.startswith("cuda"):
            if not cuda_available():
                raise NotRunnable(
                    f"device {params.device!r} asked for, but CUDA is not available on this machine"
                )
        elif self.resources.gpu is GpuNeed.required:
            raise NotRunnable(
                f"{self.name} needs a GPU: re-verify with --device cuda on a machine that has one"
            )

    def run(self, params: P, ctx: RunContext) -> R:
        """Do the work (``compute``); write artifacts under ``ctx.out_dir``; return the typed result."""
        if not self.compute:
            raise NotImplementedError(
                f"{type(self).__name__} names no compute function and does not override run"
            )
        module_name, _, function = self.compute.partition(":")
        result: R = getattr(importlib.import_module(module_name), function)(self, params, ctx)
        return result
