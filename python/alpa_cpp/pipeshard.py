"""PipeshardParallel from Python: a train step's loss planned for a pipeline.

Planning traces the step once with its batch at the micro-batch size (batch / num_micro_batches
along dimension 0), keeps the loss `alpa_cpp.grad` was given (pipeline.py), lowers it on its
own with its layer markers and plans it as `alpa plan LOSS.hlo --weights 0-K --method pipeshard
--micro-batches M` does: the same loss text gives the same plan. The loss's parameters are the
differentiated arguments' leaves (the weights) and then what else it reads: the step's batch
first, then any other traced value it closes over.

Running a pipelined plan from Python is not built yet: the C++ pipeline runtime trains a loss
with its own optimizers, while a JAX step carries its optimizer (optax) in its own code.
"""

from __future__ import annotations

import os
from typing import Any, Sequence, Union

import jax

from alpa_cpp import _core
from alpa_cpp.debug_info import write_debug_files
from alpa_cpp.methods import AutoLayerOption, PipeshardParallel
from alpa_cpp.pipeline import boundary_count, marked_loss, recording_losses
from alpa_cpp.plan import Plan


def _micro_batch(leaf: Any, num_micro_batches: int, where: str) -> jax.ShapeDtypeStruct:
    shape = tuple(leaf.shape)
    if not shape or shape[0] % num_micro_batches != 0:
        raise ValueError(
            f"PipeshardParallel(num_micro_batches={num_micro_batches}): the batch leaf {where} "
            f"of shape {shape} does not split into {num_micro_batches} micro-batches along "
            "dimension 0; give a batch that is a multiple of the micro-batch count")
    return jax.ShapeDtypeStruct((shape[0] // num_micro_batches,) + shape[1:], leaf.dtype)


def _trace_loss(fn, abstract_args: tuple, batch_argnums: Sequence[int]):
    """The one loss `fn` differentiates with alpa_cpp.grad, and the step's batch tracers."""
    batch_tracers: list = []

    def step(*args):
        for i in batch_argnums:
            batch_tracers.extend(jax.tree_util.tree_leaves(args[i]))
        return fn(*args)

    with recording_losses() as losses:
        jax.make_jaxpr(step)(*abstract_args)
    if not losses:
        raise ValueError(
            f"PipeshardParallel: {fn.__name__} takes no gradient with alpa_cpp.grad or "
            "alpa_cpp.value_and_grad; the stages are cut in the loss before differentiation, "
            "so use those in place of jax.grad / jax.value_and_grad (as with Alpa)")
    if len(losses) > 1:
        raise ValueError(
            f"PipeshardParallel: {fn.__name__} takes {len(losses)} gradients with alpa_cpp.grad; "
            "a pipeline cuts one loss into stages")
    return losses[0], batch_tracers


def lower_loss(fn, abstract_args: tuple, batch_argnums: Sequence[int],
               auto_layers: bool) -> tuple[str, int]:
    """The step's loss as HLO text with its layer markers, and how many weights lead its
    parameters. Without `auto_layers` the loss must mark its layers."""
    recorded, batch_tracers = _trace_loss(fn, abstract_args, batch_argnums)
    closed = recorded.jaxpr
    jaxpr = closed.jaxpr
    if boundary_count(jaxpr) == 0 and not auto_layers:
        raise ValueError(
            f"PipeshardParallel: the loss {fn.__name__} differentiates has no "
            "mark_pipeline_boundary(), so there is nothing to cut into stages; call "
            "alpa_cpp.mark_pipeline_boundary() between its layers, or give "
            "layer_option=AutoLayerOption(layer_num=N)")

    def batch_position(value) -> int:
        return next((i for i, b in enumerate(batch_tracers) if value is b), len(batch_tracers))

    weight_vars: list = []
    inputs: list = []  # (batch position, order, var)
    invars = iter(jaxpr.invars)
    for position, arg in enumerate(recorded.args):
        for leaf in jax.tree_util.tree_leaves(arg):
            var = next(invars)
            if position in recorded.argnums:
                weight_vars.append(var)
            else:
                inputs.append((batch_position(leaf), len(inputs), var))
    consts = {}
    for var, value in zip(jaxpr.constvars, closed.consts):
        if isinstance(value, jax.core.Tracer):  # a value of the step: an input of the loss
            inputs.append((batch_position(value), len(inputs), var))
        else:
            consts[var] = value
    input_vars = [var for _, _, var in sorted(inputs, key=lambda entry: entry[:2])]
    if not weight_vars:
        raise ValueError("PipeshardParallel: the loss's differentiated arguments hold no arrays")
    if not input_vars:
        raise ValueError("PipeshardParallel: the loss reads no batch; a pipeline splits the "
                         "batch into micro-batches")

    def abstract(var):
        return jax.ShapeDtypeStruct(var.aval.shape, var.aval.dtype)

    loss = marked_loss(jaxpr, consts, weight_vars, input_vars)
    lowered = jax.jit(loss, keep_unused=True).lower([abstract(v) for v in weight_vars],
                                                    [abstract(v) for v in input_vars])
    return lowered.as_text(dialect="hlo"), len(weight_vars)


class PipeshardExecutable:
    """A PipeshardParallel plan of a step: `plan` (stages, meshes, schedule), `explain()`,
    `get_last_dp_result()`, the loss it planned (`get_hlo_text()`), `dump_debug_info(folder)`."""

    def __init__(self, fn, abstract_args: tuple, batch_argnums: Sequence[int],
                 method: PipeshardParallel, cluster: _core.Cluster):
        self.method = method
        self.cluster = cluster
        if not isinstance(method.num_micro_batches, int) or method.num_micro_batches < 1:
            raise ValueError(f"PipeshardParallel(num_micro_batches={method.num_micro_batches!r}): "
                             "it must be a positive integer")
        micro = list(abstract_args)
        for i in batch_argnums:
            micro[i] = jax.tree_util.tree_map_with_path(
                lambda path, leaf: _micro_batch(leaf, method.num_micro_batches,
                                                f"{i}{jax.tree_util.keystr(path)}"),
                abstract_args[i])
        layers = method.layer_option
        self.loss_text, num_weights = lower_loss(fn, tuple(micro), batch_argnums,
                                                 auto_layers=isinstance(layers, AutoLayerOption))
        self.name = fn.__name__
        document, text, timeline = _core.plan_pipeline(
            self.loss_text, self.name, f"0-{num_weights - 1}", cluster,
            num_micro_batches=method.num_micro_batches, schedule=method.pipeline_schedule,
            auto_layers=layers.layer_num if isinstance(layers, AutoLayerOption) else None,
            remat=isinstance(layers, AutoLayerOption) and layers.remat_layer,
            optimizer=method.optimizer, memory_budget_bytes=method.memory_budget_bytes,
            logical_space=method.logical_space, submesh_space=method.submesh_space)
        self.plan = Plan(document, text, timeline)

    def __call__(self, leaves):
        raise NotImplementedError(
            "PipeshardParallel plans from Python (get_executable(...).plan, explain()) but does "
            "not run yet: the C++ pipeline runtime trains with its own optimizers, and this "
            "step's optimizer is JAX code. Run the step with ShardParallel, DataParallel or "
            "Zero3Parallel meanwhile")

    def explain(self) -> str:
        return self.plan.explain()

    def get_last_dp_result(self) -> dict:
        """The stage construction's result, under the names of Alpa's get_last_dp_result: the
        chosen stages' layers ("forward_stage_layer_ids"), "submesh_shapes",
        "logical_mesh_shapes" and "autosharding_option_dicts", and "candidates": every stage
        list the planner simulated (the stage DP's, each in 2 chunks under interleaved 1F1B,
        and the uniform grid's), with the DP's objective and the simulated step time, or why
        it does not fit (the plan document's "stage_dp")."""
        stages = self.plan.stages
        return {
            "forward_stage_layer_ids": [list(range(s["layers"][0], s["layers"][1] + 1))
                                        for s in stages],
            "submesh_shapes": [tuple(s["submesh"]) for s in stages],
            "logical_mesh_shapes": [tuple(s["logical_mesh"]) for s in stages],
            "autosharding_option_dicts": [
                {} if s["force_batch_dim_to_mesh_dim"] is None
                else {"force_batch_dim_to_mesh_dim": s["force_batch_dim_to_mesh_dim"]}
                for s in stages],
            "candidates": self.plan.document["stage_dp"]["candidates"],
        }

    def get_hlo_text(self, stage: str = "loss") -> str:
        """The loss the plan cuts into stages, with its layer markers, as HLO text."""
        if stage != "loss":
            raise ValueError(f"get_hlo_text: a PipeshardParallel executable has the 'loss' "
                             f"stage only, not '{stage}'")
        return self.loss_text

    def dump_debug_info(self, folder: Union[str, os.PathLike]) -> list[str]:
        """Writes the loss (HLO), the plan document and its HTML report into `folder`."""
        return write_debug_files(folder, {f"{self.name}.loss.hlo": self.loss_text,
                                          f"{self.name}.plan.json": self.plan.to_json() + "\n",
                                          f"{self.name}.plan.html": self.plan.report_html()})
