"""The one pseudo-Langevin step, for one chain (n,) or many (R, n), and its capture for a GPU.

``langevin_update`` is the step of both samplers in ``dynamics`` (kick/2, RATTLE, thermostat, drift + SHAKE,
new gradient with the Fixman term, kick/2 + RATTLE): ``PseudoLangevin`` calls it on one chain's (n,) tensors,
``ReplicaPseudoLangevin`` on (R, n) tensors, R chains of one weight shape, whatever their model's start or
temperature. What differs is only how a dot product over a chain's weights is taken (its ``Reduction``): per
row of a batch (``PER_CHAIN``), or over one vector, per constraint group when it has several (``OneChain``);
each keeps the summation its sampler always had, so both give the numbers they gave before they shared the
step. The step reads its random inputs (the thermostat's normal draws and the minibatch indices) as arguments
instead of drawing them, and never reads a tensor's value on the host: no ``.item()``, no Python branch on a
tensor, so a GPU runs it without one synchronisation. A SHAKE failure is counted per chain (``bad``) and read
by the caller every so many steps.

``AdvanceGroups`` is one step of every group of chains at once: a group is R chains of one weight shape, and
an experiment has one per model (the attention model's starts x temperatures, the feed-forward baseline's);
their shapes differ, so each group keeps its own vmapped call, and the groups share this one callable.
``StepRunner`` runs it three ways (``STEP_CAPTURES``):

* ``none``: eagerly (every device; the CPU's only mode);
* ``graph``: captured once in one ``torch.cuda.CUDAGraph`` over static buffers (each group's state, noise and
  minibatch indices), replayed every step: one launch for the whole step of every group, the low-rank mass
  products (``MassMatrix``, O(k n) each) inside it;
* ``compile``: ``torch.compile(mode="reduce-overhead")`` of the same callable (CUDA graphs by way of
  Inductor).

The capture is only a wrapper: the function captured is the one the CPU tests compare with the per-chain
sampler and with each group stepped alone (tests/test_langevin_batched_step.py,
tests/test_langevin_chain_groups.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from analyzers.langevin.mass_matrix import MassMatrix

# w (R, n), minibatch indices (R, batch) or None (full batch) -> (losses (R,), gradients (R, n))
IndexedGradFn = Callable[[torch.Tensor, torch.Tensor | None], tuple[torch.Tensor, torch.Tensor]]
STEP_CAPTURES = ("auto", "none", "graph", "compile")
# one group's (w, p, grad, loss, M^-1 w, SHAKE failures) after a step
StepOutputs = tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]


def resolve_capture(capture: str, device: torch.device | str) -> str:
    """``auto``: a CUDA graph on CUDA, eager elsewhere; ``graph``/``compile`` fall back to eager off CUDA (a
    CUDA graph needs a CUDA device; ``compile`` is meant for its ``reduce-overhead`` graphs)."""
    if capture not in STEP_CAPTURES:
        raise ValueError(f"step_capture must be one of {', '.join(STEP_CAPTURES)}, got {capture!r}")
    on_cuda = torch.device(device).type == "cuda"
    if capture == "auto":
        return "graph" if on_cuda else "none"
    return capture if on_cuda else "none"


class Reduction:
    """Dot products over each chain's weights, for R chains (R, n): one per row, (R, 1)."""

    def dot(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """x . y per chain: (R, 1)."""
        return (x * y).sum(-1, keepdim=True)  # (R, 1)

    def spread(self, values: torch.Tensor) -> torch.Tensor:
        """Per-chain values, broadcastable onto the weights."""
        return values

    def failures(self, discriminant: torch.Tensor) -> torch.Tensor:
        """The SHAKE failures of this step per chain: (R,) long."""
        return (discriminant[:, 0] < 0).long()

    def no_failures(self, w: torch.Tensor) -> torch.Tensor:
        return torch.zeros(len(w), dtype=torch.long, device=w.device)


PER_CHAIN = Reduction()


class OneChain(Reduction):
    """One chain's weights (n,), with one norm constraint or one per group (``groups`` (n,) long, group
    ids)."""

    def __init__(self, groups: torch.Tensor | None = None) -> None:
        self.groups = groups
        self.num_groups = 1 if groups is None else int(groups.max()) + 1

    def dot(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """x . y per constraint group: () for one group, (G,) for several."""
        if self.groups is None:
            return x @ y
        return torch.zeros(self.num_groups, dtype=x.dtype, device=x.device).index_add_(0, self.groups, x * y)

    def spread(self, values: torch.Tensor) -> torch.Tensor:
        """Per-group values onto the weights (identity for one group)."""
        return values if self.groups is None else values[self.groups]

    def failures(self, discriminant: torch.Tensor) -> torch.Tensor:
        """The SHAKE failures of this step, all groups together: () long."""
        return (discriminant < 0).long().sum()

    def no_failures(self, w: torch.Tensor) -> torch.Tensor:
        return torch.zeros((), dtype=torch.long, device=w.device)


@dataclass
class StepConstants:
    """What a step reads but never writes (until the masses are set again)."""

    mass: MassMatrix  # batched: (R, n), (R, k, n), (R, k), (R,); one chain: (n,), (k, n), (k,), ()
    temperature: torch.Tensor | float  # (R, 1); one chain: a number
    q: torch.Tensor  # (R, 1) the squared norm each chain keeps; one chain: () or (G,) per group
    noise_factor: torch.Tensor  # (R, n) the added noise's amplitude before the mass
    dt: float
    c1: float
    constrained: bool
    fixman: bool
    reduction: Reduction = PER_CHAIN


def chain_dot(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """x . y per chain: (R, 1)."""
    return PER_CHAIN.dot(x, y)


def rattle(
    p: torch.Tensor, w: torch.Tensor, inverse_w: torch.Tensor, reduction: Reduction = PER_CHAIN
) -> torch.Tensor:
    """p less its component that would leave the sphere: w . M^-1 p = 0 per chain (per group)."""
    return p - reduction.spread(reduction.dot(inverse_w, p) / reduction.dot(inverse_w, w)) * w


def shake(
    w_free: torch.Tensor, direction: torch.Tensor, q: torch.Tensor, reduction: Reduction = PER_CHAIN
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(w_free + lambda M^-1 w_old on |.|^2 = q, lambda spread onto the weights, this step's failures): lambda
    the smallest-|lambda| root of a lambda^2 + b lambda + c = 0; a negative discriminant counts as a failure
    (and gives lambda from its clamped root)."""
    a = reduction.dot(direction, direction)
    b = 2.0 * reduction.dot(w_free, direction)
    c = reduction.dot(w_free, w_free) - q
    discriminant = b * b - 4.0 * a * c  # (R, 1)
    sign = torch.where(b >= 0, 1.0, -1.0).to(b)
    big = -0.5 * (b + sign * discriminant.clamp(min=0.0).sqrt())
    lam = torch.where(big != 0, c / big, torch.zeros_like(c))  # c / big is always the smaller root
    lam = reduction.spread(lam)
    return w_free + lam * direction, lam, reduction.failures(discriminant)


def langevin_update(
    w: torch.Tensor,
    p: torch.Tensor,
    grad: torch.Tensor,
    inverse_w: torch.Tensor,
    constants: StepConstants,
    noise: torch.Tensor,
    index: torch.Tensor | None,
    gradient: IndexedGradFn,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """One step of R chains (or of one): (w, p, grad, loss, M^-1 w, SHAKE failures) after it, from the state
    before it, ``noise`` (R, n) standard normal draws and the minibatch ``index`` (R, batch) (None: the full
    batch, or a gradient that draws its own minibatch)."""
    k, dt, mass, reduction = constants, constants.dt, constants.mass, constants.reduction
    p = p - 0.5 * dt * grad
    if k.constrained:
        p = rattle(p, w, inverse_w, reduction)
    p = k.c1 * p + mass.added_noise(k.noise_factor * noise)
    if k.constrained:
        p = rattle(p, w, inverse_w, reduction)
    w_free = w + dt * mass.inverse(p)
    if k.constrained:
        w_new, lam, bad = shake(w_free, inverse_w, k.q, reduction)
        p = p + lam * w / dt  # the constraint impulse: p = M (w_new - w_old) / dt
    else:
        w_new, bad = w_free, reduction.no_failures(w)
    inverse_new = mass.inverse(w_new)
    loss, grad_new = gradient(w_new, index)
    if k.constrained and k.fixman:
        grad_new = grad_new + fixman_force(k.temperature, w_new, inverse_new, reduction)
    p = p - 0.5 * dt * grad_new
    if k.constrained:
        p = rattle(p, w_new, inverse_new, reduction)
    return w_new, p, grad_new, loss, inverse_new, bad


def fixman_force(temperature: torch.Tensor | float, w: torch.Tensor, inverse_w: torch.Tensor,
                 reduction: Reduction = PER_CHAIN) -> torch.Tensor:
    """The gradient of the Fixman term (T/2) log(w^T M^-1 w): T M^-1 w / (w^T M^-1 w)."""
    return temperature * inverse_w / reduction.spread(reduction.dot(w, inverse_w))


@dataclass
class ChainState:
    """The tensors a step carries from one to the next (static buffers while a graph is captured)."""

    w: torch.Tensor  # (R, n)
    p: torch.Tensor  # (R, n)
    grad: torch.Tensor  # (R, n)
    loss: torch.Tensor  # (R,)
    inverse_w: torch.Tensor  # (R, n) M^-1 w
    bad_steps: torch.Tensor  # (R,) long, SHAKE failures so far

    def tensors(self) -> list[torch.Tensor]:
        return [self.w, self.p, self.grad, self.loss, self.inverse_w, self.bad_steps]


class AdvanceGroups:
    """One step of every group: ``langevin_update`` of each group's state in turn, in one call. A group is R
    chains of one weight shape (one model's starts x temperatures); groups of different shapes (the attention
    model and the feed-forward baseline) cannot share one vmapped call, but they can share this one. It is the
    one function ``StepRunner``'s three modes run: called as is (``none``), recorded once into a single CUDA
    graph (``graph``: one replay advances every group), or compiled (``compile``)."""

    def __init__(self, gradients: Sequence[IndexedGradFn]) -> None:
        if not gradients:
            raise ValueError("no chain groups to advance")
        self.gradients = tuple(gradients)  # one per group: its minibatch losses and gradients

    def __call__(self, states: Sequence[Sequence[torch.Tensor]], constants: Sequence[StepConstants],
                 noises: Sequence[torch.Tensor], indices: Sequence[torch.Tensor | None]) -> list[StepOutputs]:
        """Per group, from its (w, p, grad, M^-1 w), constants, noise and minibatch indices: its (w, p, grad,
        loss, M^-1 w, SHAKE failures) after the step."""
        return [
            langevin_update(w, p, grad, inverse_w, group_constants, noise, index, gradient)
            for (w, p, grad, inverse_w), group_constants, noise, index, gradient
            in zip(states, constants, noises, indices, self.gradients, strict=True)
        ]  # fmt: skip


class StepRunner:
    """Advances one ``ChainState`` per group by ``AdvanceGroups``, eagerly, from one CUDA graph or compiled
    (see the module docstring). The graph and the compiled function hold the states' tensors: a group that
    replaces a tensor of its state builds new constants (``ReplicaPseudoLangevin`` does), and a step with
    constants or states other than those captured captures again."""

    def __init__(self, gradients: Sequence[IndexedGradFn], capture: str = "none", warmup: int = 2) -> None:
        self.advance = AdvanceGroups(gradients)
        self.capture = capture
        self.warmup = warmup
        self._graph: Any = None
        self._static: dict[str, Any] = {}
        self._compiled: Any = None
        self.captures = 0  # how many times a graph was captured (a test reads it)
        self.replays = 0  # graph replays: one per step of every group together

    def step(self, states: Sequence[ChainState], constants: Sequence[StepConstants],
             noises: Sequence[torch.Tensor], indices: Sequence[torch.Tensor | None]) -> None:
        """One step of every chain of every group; ``states`` hold the result (their tensors replaced eagerly,
        written in place by the graph or the compiled function)."""
        if self.capture == "graph":
            self._replay(states, constants, noises, indices)
            return
        if self.capture == "compile":
            if self._compiled is None:
                self._compiled = torch.compile(self.advance, mode="reduce-overhead", dynamic=False)
            # its outputs live in the graph's pool, overwritten by the next call: copied into the states
            self._write(states, self._compiled(_carried(states), constants, noises, indices))
            return
        for state, (w, p, grad, loss, inverse_w, bad) in zip(
            states, self.advance(_carried(states), constants, noises, indices), strict=True
        ):
            state.w, state.p, state.grad, state.loss, state.inverse_w = w, p, grad, loss, inverse_w
            state.bad_steps = state.bad_steps + bad

    @staticmethod
    def _write(states: Sequence[ChainState], outputs: Sequence[StepOutputs]) -> None:
        for state, (w, p, grad, loss, inverse_w, bad) in zip(states, outputs, strict=True):
            for target, value in zip(state.tensors()[:5], (w, p, grad, loss, inverse_w), strict=True):
                target.copy_(value)
            state.bad_steps.add_(bad)

    def _in_place(self, states: Sequence[ChainState], constants: Sequence[StepConstants],
                  noises: Sequence[torch.Tensor], indices: Sequence[torch.Tensor | None]) -> None:
        """The step written into the states' own tensors: what the CUDA graph records."""
        self._write(states, self.advance(_carried(states), constants, noises, indices))

    def _replay(self, states: Sequence[ChainState], constants: Sequence[StepConstants],
                noises: Sequence[torch.Tensor], indices: Sequence[torch.Tensor | None]) -> None:
        static = self._static
        if (
            self._graph is None
            or not _same(static.get("states", ()), states)
            or not _same(static.get("constants", ()), constants)
        ):
            self._capture(states, constants, noises, indices)
            static = self._static
        for buffer, noise in zip(static["noises"], noises, strict=True):
            buffer.copy_(noise)
        for buffer, index in zip(static["indices"], indices, strict=True):
            if buffer is not None and index is not None:
                buffer.copy_(index)
        self._graph.replay()
        self.replays += 1

    def _capture(self, states: Sequence[ChainState], constants: Sequence[StepConstants],
                 noises: Sequence[torch.Tensor], indices: Sequence[torch.Tensor | None]) -> None:
        """Every group's step recorded into one graph over static buffers (each group's state, noise and
        minibatch indices), after warm-up steps that are then undone."""
        static_noises = [noise.clone() for noise in noises]
        static_indices = [None if index is None else index.clone() for index in indices]
        saved = [[tensor.clone() for tensor in state.tensors()] for state in states]
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):  # warm-up off the default stream, as CUDA graph capture requires
            for _ in range(self.warmup):
                self._in_place(states, constants, static_noises, static_indices)
        torch.cuda.current_stream().wait_stream(stream)
        for state, values in zip(states, saved, strict=True):
            for tensor, value in zip(state.tensors(), values, strict=True):
                tensor.copy_(value)  # the warm-up steps are undone: capturing runs nothing
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            self._in_place(states, constants, static_noises, static_indices)
        self._graph = graph
        self._static = {"states": list(states), "constants": list(constants), "noises": static_noises,
                        "indices": static_indices}  # fmt: skip
        self.captures += 1


def _carried(states: Sequence[ChainState]) -> list[tuple[torch.Tensor, ...]]:
    """What a step reads of each group's state: (w, p, grad, M^-1 w)."""
    return [(state.w, state.p, state.grad, state.inverse_w) for state in states]


def _same(held: Sequence[object], given: Sequence[object]) -> bool:
    """The very objects a graph was captured over (not equal ones: a graph holds their tensors)."""
    return len(held) == len(given) and all(a is b for a, b in zip(held, given, strict=True))
