"""The optimizer of a step, as the program a pipeline runs on its stages.

A PipeshardParallel step is cut in two where it takes its gradient with alpa_cpp.grad: the loss,
which the pipeline splits into stages, and the rest of the step, which updates the state from
the gradients (optax's update and apply_updates, a TrainState's apply_gradients). The rest is
traced on its own, the gradient call returning given values (pipeline.injecting_gradients), and
lowered by JAX as

    apply(W..., G..., S...) -> (W'..., S'...)

over the loss's weights W, their gradients G and the other values S the step carries (optax's
moments and count, the TrainState's step). The C++ side splits it by weight
(autodiff/update_program.h) and runs each weight's part on the stage that holds it.

What the step returns must be its new state (the carried arguments' structures, found among its
outputs) and, optionally, the loss itself; the new state must come from the gradients and the
state alone, not from the batch or the loss's value.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional, Sequence

import jax
import jax.numpy as jnp
from jax.extend import core as jex_core
from jax.interpreters import partial_eval as pe

from alpa_cpp.host_arrays import leaf_shape_and_dtype
from alpa_cpp.pipeline import injecting_gradients


@dataclasses.dataclass
class LoweredUpdate:
    text: str  # HLO of apply(W..., G..., S...) -> (W'..., S'...)
    state_leaves: list[int]  # the step's leaf of each S_j
    next_leaf: dict[int, int]  # carried step leaf -> the output leaf with its next value
    loss_outputs: list[int]  # output leaves that are the loss
    out_tree: Any  # the step's output structure


def _output_subtrees(out: Any) -> list[tuple[Any, int]]:
    """Where a new state may sit in the step's outputs: the whole output, or one element of a
    tuple or list, each with its first leaf's index."""
    candidates = [(out, 0)]
    if isinstance(out, (tuple, list)):
        start = 0
        for element in out:
            candidates.append((element, start))
            start += len(jax.tree_util.tree_leaves(element))
    return candidates


def _match_new_state(fn_name: str, args: tuple, carried_argnums: Sequence[int], out: Any,
                     arg_offsets: list[int]) -> dict[int, int]:
    """For each leaf of the carried arguments, the output leaf holding its next value: each
    carried argument's structure found among the outputs (the step returns its new state)."""
    next_leaf: dict[int, int] = {}
    used: set[int] = set()
    candidates = _output_subtrees(out)
    for a in carried_argnums:
        structure = jax.tree_util.tree_structure(args[a])
        found = next((k for k, (tree, _) in enumerate(candidates)
                      if k not in used and jax.tree_util.tree_structure(tree) == structure), None)
        if found is None:
            raise ValueError(
                f"PipeshardParallel: {fn_name} does not return its argument {a}'s new value (no "
                "output has that argument's structure); a pipelined step returns its new state, "
                "e.g. `return state.apply_gradients(grads=grads), loss`")
        used.add(found)
        if found == 0:  # the whole output: nothing else may match
            used.update(range(len(candidates)))
        start = candidates[found][1]
        for k in range(structure.num_leaves):
            next_leaf[arg_offsets[a] + k] = start + k
    return next_leaf


def lower_update(fn, abstract_args: tuple, batch_argnums: Sequence[int],
                 weight_leaves: Sequence[Optional[int]], loss_aval) -> LoweredUpdate:
    """The step's code after its gradient as an update program, for weights that are the step's
    leaves `weight_leaves` (None: a weight that is no leaf of the step)."""
    name = fn.__name__
    if any(leaf is None for leaf in weight_leaves):
        raise ValueError(
            f"PipeshardParallel: {name} differentiates values that are not its arguments' "
            "leaves (computed in the step); to run it, differentiate the parameters as the step "
            "receives them, e.g. alpa_cpp.value_and_grad(loss_fn)(state.params)")
    leaves, treedef = jax.tree_util.tree_flatten(abstract_args)
    arg_offsets, start = [], 0
    for arg in abstract_args:
        arg_offsets.append(start)
        start += len(jax.tree_util.tree_leaves(arg))
    carried_argnums = [a for a in range(len(abstract_args)) if a not in batch_argnums]
    carried = [i for a in carried_argnums
               for i in range(arg_offsets[a],
                              arg_offsets[a] + len(jax.tree_util.tree_leaves(abstract_args[a])))]
    weights = list(weight_leaves)
    if any(w not in carried for w in weights):
        raise ValueError(f"PipeshardParallel: {name} differentiates a leaf of its batch")
    states = [i for i in carried if i not in weights]

    leaf_avals = [jax.ShapeDtypeStruct(*leaf_shape_and_dtype(x)) for x in leaves]
    grad_avals = [leaf_avals[w] for w in weights]

    def step_after_gradient(step_leaves, gradients, loss):
        with injecting_gradients(loss, list(gradients)):
            return fn(*jax.tree_util.tree_unflatten(treedef, step_leaves))

    closed, out_shape = jax.make_jaxpr(step_after_gradient, return_shape=True)(
        leaf_avals, grad_avals, loss_aval)
    out_leaves, out_tree = jax.tree_util.tree_flatten(out_shape)
    next_leaf = _match_new_state(name, abstract_args, carried_argnums, out_shape, arg_offsets)

    jaxpr = closed.jaxpr
    loss_var = jaxpr.invars[len(leaves) + len(weights)]
    state_outputs = set(next_leaf.values())
    loss_outputs = []
    for o, var in enumerate(jaxpr.outvars):
        if o in state_outputs:
            continue
        if var is not loss_var:
            raise ValueError(
                f"PipeshardParallel: output leaf {o} of {name} is neither its new state nor the "
                "loss; a pipelined step returns those (compute other metrics outside it)")
        loss_outputs.append(o)
    _, used = pe.dce_jaxpr(jaxpr, [o in state_outputs for o in range(len(out_leaves))])
    read = [i for i in range(len(leaves)) if used[i] and i not in carried]
    if read or used[len(leaves) + len(weights)]:
        raise ValueError(
            f"PipeshardParallel: the new state of {name} reads "
            f"{'its batch' if read else 'the loss value'} outside the loss; a pipeline updates "
            "each stage's state from its gradients and state alone")

    run = jex_core.jaxpr_as_fun(closed)

    def update(weight_values, gradients, state_values):
        step_leaves = [jnp.zeros(a.shape, a.dtype) for a in leaf_avals]  # the unread batch
        for i, value in zip(weights + states, list(weight_values) + list(state_values)):
            step_leaves[i] = value
        outs = run(*step_leaves, *gradients, jnp.zeros(loss_aval.shape, loss_aval.dtype))
        return ([outs[next_leaf[w]] for w in weights], [outs[next_leaf[s]] for s in states])

    lowered = jax.jit(update, keep_unused=True).lower(
        [leaf_avals[w] for w in weights], grad_avals, [leaf_avals[s] for s in states])
    return LoweredUpdate(lowered.as_text(dialect="hlo"), states, next_leaf, loss_outputs,
                         out_tree)
