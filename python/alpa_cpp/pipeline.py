"""Layers and pipelines from JAX: `mark_pipeline_boundary`, `grad` and `value_and_grad`.

Alpa cuts a pipelined step into stages in the forward pass, before differentiation, so the
loss's gradient must be taken by `alpa_cpp.grad` (or `value_and_grad`) rather than `jax.grad`:

    def train_step(state, batch):
        def loss_fn(params):
            h = layer_1(params, batch["x"])
            alpa_cpp.mark_pipeline_boundary()
            return loss_of(layer_2(params, h), batch["y"])
        grads = alpa_cpp.grad(loss_fn)(state.params)
        return state.apply_gradients(grads=grads)

Outside PipeshardParallel both are `jax.grad` / `jax.value_and_grad`, and a boundary lowers to
nothing. Under PipeshardParallel, planning traces the step once at the micro-batch size and
keeps the loss `grad` was given, as a jaxpr; the loss is then lowered on its own with an end
marker at each boundary: the custom-call Alpa's own layer construction writes,

    %t = (f32[8,32], ...) tuple(%h, ...)
    %m = (f32[8,32], ...) custom-call(%t), custom_call_target="pipeline_marker",
         backend_config="end 0"
    %h.1 = f32[8,32] get-tuple-element(%m), index=0

over every value of the layers before it that a later one reads, which the C++ side reads as
its layer markers (pipeline/layer_marking.h). Without boundaries, an AutoLayerOption clusters
the loss into layers instead (Alpa's automatic layer construction).
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from typing import Any, Callable, Optional, Sequence, Union

import jax
from jax.extend import core as jex_core
from jax.interpreters import ad, batching, mlir
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

# mark_pipeline_boundary(): no values, only a place in the loss's equations.
_boundary_p = jex_core.Primitive("alpa_pipeline_boundary")
_boundary_p.multiple_results = True
_boundary_p.def_impl(lambda: [])
_boundary_p.def_abstract_eval(lambda: [])
ad.primitive_jvps[_boundary_p] = lambda primals, tangents: ([], [])
batching.primitive_batchers[_boundary_p] = lambda args, dims: ([], [])
mlir.register_lowering(_boundary_p, lambda ctx: [])

# The end marker of a layer: the identity on the values that leave it.
_marker_p = jex_core.Primitive("pipeline_marker")
_marker_p.multiple_results = True
_marker_p.def_impl(lambda *values, layer: values)
_marker_p.def_abstract_eval(lambda *values, layer: values)


def _lower_marker(ctx, *values, layer: int):
    # One tuple in, one tuple out, read by get-tuple-element: Alpa's format, whatever the count.
    types = [value.type for value in values]
    packed = stablehlo.TupleOp(list(values)).result
    marker = stablehlo.CustomCallOp(
        [ir.TupleType.get_tuple(types)], [packed],
        call_target_name=ir.StringAttr.get("pipeline_marker"),
        has_side_effect=ir.BoolAttr.get(True),
        backend_config=ir.StringAttr.get(f"end {layer}"))
    return [stablehlo.GetTupleElementOp(marker.result, i).result for i in range(len(values))]


mlir.register_lowering(_marker_p, _lower_marker)


def mark_pipeline_boundary() -> None:
    """Ends a layer of the loss here (Alpa's mark_pipeline_boundary): the stages of a
    PipeshardParallel plan are cut between layers."""
    _boundary_p.bind()


@dataclasses.dataclass
class RecordedLoss:
    """The loss a step differentiated with alpa_cpp.grad, as traced at the micro-batch size."""

    jaxpr: Any  # ClosedJaxpr; its consts may be the step's tracers (the batch)
    argnums: tuple[int, ...]
    args: tuple  # the arguments grad was called with (tracers of the step's trace)


class _Recorder(threading.local):
    def __init__(self):
        self.losses: Optional[list[RecordedLoss]] = None
        # (loss, flat gradients) that grad and value_and_grad return instead of differentiating.
        self.injected: Optional[tuple[Any, list]] = None


_recorder = _Recorder()


@contextlib.contextmanager
def recording_losses():
    """While active, alpa_cpp.grad / value_and_grad record the loss they are given."""
    saved, _recorder.losses = _recorder.losses, []
    try:
        yield _recorder.losses
    finally:
        _recorder.losses = saved


@contextlib.contextmanager
def injecting_gradients(loss: Any, gradients: list):
    """While active, alpa_cpp.grad / value_and_grad return `gradients` (the flat leaves of the
    differentiated arguments' gradients, arguments in ascending order) and `loss` without
    differentiating: tracing the step then gives its code after the gradient alone, the
    optimizer a pipeline runs on its stages."""
    saved, _recorder.injected = _recorder.injected, (loss, gradients)
    try:
        yield
    finally:
        _recorder.injected = saved


def _injected(argnums: Union[int, Sequence[int]], has_aux: bool, args: tuple):
    """The injected (loss, gradients) shaped as jax.value_and_grad returns them."""
    if has_aux:
        raise ValueError(
            "PipeshardParallel runs a step's optimizer apart from its loss, so the loss's "
            "auxiliary outputs (has_aux=True) are not available to the rest of the step; "
            "return the loss alone from the function alpa_cpp differentiates")
    loss, flat = _recorder.injected
    positions = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    trees, start = {}, 0
    for position in sorted(positions):
        treedef = jax.tree_util.tree_structure(args[position])
        trees[position] = jax.tree_util.tree_unflatten(
            treedef, flat[start:start + treedef.num_leaves])
        start += treedef.num_leaves
    grads = trees[argnums] if isinstance(argnums, int) else tuple(trees[p] for p in positions)
    return loss, grads


def _record(fun: Callable, argnums: Union[int, Sequence[int]], args: tuple) -> None:
    if _recorder.losses is None:
        return
    argnums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    _recorder.losses.append(RecordedLoss(jax.make_jaxpr(fun)(*args), argnums, args))


def value_and_grad(fun: Callable, argnums: Union[int, Sequence[int]] = 0, has_aux: bool = False,
                   **kwargs) -> Callable:
    """jax.value_and_grad, whose loss PipeshardParallel cuts into stages (Alpa's
    alpa.value_and_grad)."""
    differentiated = jax.value_and_grad(fun, argnums=argnums, has_aux=has_aux, **kwargs)

    def wrapped(*args):
        if _recorder.injected is not None:
            return _injected(argnums, has_aux, args)
        _record(fun, argnums, args)
        return differentiated(*args)

    return wrapped


def grad(fun: Callable, argnums: Union[int, Sequence[int]] = 0, has_aux: bool = False,
         **kwargs) -> Callable:
    """jax.grad, whose loss PipeshardParallel cuts into stages (Alpa's alpa.grad)."""
    differentiated = jax.grad(fun, argnums=argnums, has_aux=has_aux, **kwargs)

    def wrapped(*args):
        if _recorder.injected is not None:
            return _injected(argnums, has_aux, args)[1]
        _record(fun, argnums, args)
        return differentiated(*args)

    return wrapped


def _has_nested_boundary(jaxpr) -> bool:
    for sub in jex_core.subjaxprs(jaxpr):
        if any(eqn.primitive is _boundary_p for eqn in sub.eqns) or _has_nested_boundary(sub):
            return True
    return False


def boundary_count(jaxpr) -> int:
    """The boundaries at the top level of `jaxpr`. A boundary inside a nested jit, remat or
    scan cannot cut the loss (its values are not the loss's): an error naming what to do."""
    if _has_nested_boundary(jaxpr):
        raise ValueError(
            "mark_pipeline_boundary() inside a nested jax.jit, remat, scan or custom "
            "derivative of the loss: the stages are cut at the loss's own level; call it "
            "between the layers in the loss function itself")
    return sum(eqn.primitive is _boundary_p for eqn in jaxpr.eqns)


def marked_loss(jaxpr, consts: dict, weight_vars: list, input_vars: list) -> Callable:
    """The loss of `jaxpr` as a function of (weights, inputs), its value only, with an end
    marker at each boundary over the values defined before it that a later equation or the
    loss reads. `consts` gives the constvars that stay constants (the others are inputs)."""
    loss_var = jaxpr.outvars[0]
    last_use: dict = {}
    for index, eqn in enumerate(jaxpr.eqns):
        for var in eqn.invars:
            if not isinstance(var, jex_core.Literal):
                last_use[var] = index
    if not isinstance(loss_var, jex_core.Literal):
        last_use[loss_var] = len(jaxpr.eqns)

    def loss(weights, inputs):
        env = dict(consts)
        env.update(zip(weight_vars, weights))
        env.update(zip(input_vars, inputs))

        def read(var):
            return var.val if isinstance(var, jex_core.Literal) else env[var]

        defined: list = []  # by the equations so far, in order
        layer = 0
        for index, eqn in enumerate(jaxpr.eqns):
            if eqn.primitive is _boundary_p:
                crossing = [var for var in defined if last_use.get(var, -1) > index]
                if crossing:
                    marked = _marker_p.bind(*[env[var] for var in crossing], layer=layer)
                    env.update(zip(crossing, marked))
                    layer += 1
                continue
            params = eqn.primitive.get_bind_params(eqn.params)  # as jax.core.eval_jaxpr binds
            with eqn.ctx.manager:
                outs = eqn.primitive.bind(*map(read, eqn.invars), **params)
            if not eqn.primitive.multiple_results:
                outs = [outs]
            for var, value in zip(eqn.outvars, outs):
                if not isinstance(var, jex_core.DropVar):
                    env[var] = value
                    defined.append(var)
        return read(loss_var)

    return loss
