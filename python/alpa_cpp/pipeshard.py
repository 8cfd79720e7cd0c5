"""PipeshardParallel from Python: a train step planned for a pipeline, and run.

Planning traces the step once with its batch at the micro-batch size (batch / num_micro_batches
along dimension 0), keeps the loss `alpa_cpp.grad` was given (pipeline.py), lowers it on its
own with its layer markers. The step's code after its gradient (its optax update) is lowered
on its own too, as the stages' optimizer (update_program.py). The loss is planned with that
optimizer as `alpa plan LOSS.hlo --weights 0-K --update-program UPDATE.hlo --method pipeshard
--micro-batches M` does: the same texts give the same plan (given a saved plan, its stages are
re-costed instead, as `alpa run --plan` takes them). The loss's parameters are the
differentiated arguments' leaves (the weights) and then what else it reads: the step's batch
first, then any other traced value it closes over.

The first call compiles the plan and runs it on in-process devices, one per device of the
cluster: each call runs the batch's micro-batches through the stages in the plan's schedule and
returns the step's outputs, its new state as DistributedArrays that stay on the stages' devices
and its loss (the mean of the micro-batches').
"""

from __future__ import annotations

import dataclasses
import os
import re
from typing import Any, Optional, Sequence, Union

import jax
import numpy as np

from alpa_cpp import _core
from alpa_cpp.debug_info import write_debug_files
from alpa_cpp.distributed_array import DistributedArray, DonatedArrayError
from alpa_cpp.host_arrays import from_host, host_value, leaf_shape_and_dtype
from alpa_cpp.methods import AutoLayerOption, PipeshardParallel
from alpa_cpp.pipeline import boundary_count, marked_loss, recording_losses
from alpa_cpp.plan import Plan
from alpa_cpp.update_program import LoweredUpdate, lower_update


def _micro_batch(leaf: Any, num_micro_batches: int, where: str) -> jax.ShapeDtypeStruct:
    shape = tuple(leaf.shape)
    if not shape or shape[0] % num_micro_batches != 0:
        raise ValueError(
            f"PipeshardParallel(num_micro_batches={num_micro_batches}): the batch leaf {where} "
            f"of shape {shape} does not split into {num_micro_batches} micro-batches along "
            "dimension 0; give a batch that is a multiple of the micro-batch count")
    return jax.ShapeDtypeStruct((shape[0] // num_micro_batches,) + shape[1:], leaf.dtype)


def _saved_plan(plan: Union[None, Plan, str, os.PathLike]) -> tuple[Optional[str], str]:
    """PipeshardParallel(plan=...) as the planner takes it: the document's JSON text (None for
    no plan) and what to call it in errors."""
    if plan is None:
        return None, ""
    if isinstance(plan, Plan):
        return plan.to_json(), "PipeshardParallel(plan=...)"
    if isinstance(plan, (str, os.PathLike)):
        try:
            with open(plan, encoding="utf-8") as saved:
                return saved.read(), os.fspath(plan)
        except OSError as error:
            raise ValueError(f"PipeshardParallel(plan={os.fspath(plan)!r}): {error.strerror}; "
                             "give the path of a plan saved with Plan.save or alpa plan -o") \
                from error
    raise ValueError(f"PipeshardParallel(plan={plan!r}): give an alpa_cpp.Plan or the path of a "
                     "saved plan document")


def _trace_loss(fn, abstract_args: tuple, batch_argnums: Sequence[int]):
    """The one loss `fn` differentiates with alpa_cpp.grad, the step's leaves (tracers) and
    its batch's."""
    step_tracers: list = []
    batch_tracers: list = []

    def step(*args):
        step_tracers.extend(jax.tree_util.tree_leaves(args))
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
    return losses[0], step_tracers, batch_tracers


@dataclasses.dataclass
class LoweredLoss:
    text: str  # HLO, with its layer markers
    # The step's leaf each parameter of the loss is, None where it is none (a value computed in
    # the step): the weights, which lead the parameters, then the inputs.
    weight_leaves: list[Optional[int]]
    input_leaves: list[Optional[int]]
    aval: Any  # the loss value's


def lower_loss(fn, abstract_args: tuple, batch_argnums: Sequence[int],
               auto_layers: bool) -> LoweredLoss:
    """The step's loss with its layer markers. Without `auto_layers` the loss must mark its
    layers."""
    recorded, step_tracers, batch_tracers = _trace_loss(fn, abstract_args, batch_argnums)
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

    def step_leaf(value) -> Optional[int]:
        return next((i for i, x in enumerate(step_tracers) if value is x), None)

    weight_vars: list = []
    weight_leaves: list = []
    inputs: list = []  # (batch position, order, var, step leaf)
    invars = iter(jaxpr.invars)
    for position, arg in enumerate(recorded.args):
        for leaf in jax.tree_util.tree_leaves(arg):
            var = next(invars)
            if position in recorded.argnums:
                weight_vars.append(var)
                weight_leaves.append(step_leaf(leaf))
            else:
                inputs.append((batch_position(leaf), len(inputs), var, step_leaf(leaf)))
    consts = {}
    for var, value in zip(jaxpr.constvars, closed.consts):
        if isinstance(value, jax.core.Tracer):  # a value of the step: an input of the loss
            inputs.append((batch_position(value), len(inputs), var, step_leaf(value)))
        else:
            consts[var] = value
    inputs.sort(key=lambda entry: entry[:2])
    input_vars = [entry[2] for entry in inputs]
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
    return LoweredLoss(lowered.as_text(dialect="hlo"), weight_leaves,
                       [entry[3] for entry in inputs], jaxpr.outvars[0].aval)


class PipeshardExecutable:
    """A PipeshardParallel plan of a step: `plan` (stages, meshes, schedule), `explain()`,
    `get_last_dp_result()`, the loss it planned (`get_hlo_text()`), `dump_debug_info(folder)`;
    called with the step's arguments, it runs the step (the first call compiles the stages with
    the step's optimizer)."""

    def __init__(self, fn, abstract_args: tuple, batch_argnums: Sequence[int],
                 method: PipeshardParallel, cluster: _core.Cluster):
        self.method = method
        self.cluster = cluster
        if not isinstance(method.num_micro_batches, int) or method.num_micro_batches < 1:
            raise ValueError(f"PipeshardParallel(num_micro_batches={method.num_micro_batches!r}): "
                             "it must be a positive integer")
        saved_json, saved_source = _saved_plan(method.plan)
        micro = list(abstract_args)
        for i in batch_argnums:
            micro[i] = jax.tree_util.tree_map_with_path(
                lambda path, leaf: _micro_batch(leaf, method.num_micro_batches,
                                                f"{i}{jax.tree_util.keystr(path)}"),
                abstract_args[i])
        layers = method.layer_option
        self._loss = lower_loss(fn, tuple(micro), batch_argnums,
                                auto_layers=isinstance(layers, AutoLayerOption))
        self.loss_text = self._loss.text
        self.name = fn.__name__
        self._fn = fn
        self._abstract_args = abstract_args
        self._batch_argnums = tuple(batch_argnums)
        self._leaf_types = [leaf_shape_and_dtype(leaf)  # (shape, dtype) of each step leaf
                            for leaf in jax.tree_util.tree_leaves(abstract_args)]
        # The step's own optimizer, which the plan prices and the stages run. A step whose
        # optimizer a pipeline cannot run is planned with `method.optimizer` instead, and says
        # why when it is called.
        self._update: Optional[LoweredUpdate] = None
        self._update_error: Optional[str] = None
        self._lower_update()
        self._planned = _core.plan_pipeline(
            self.loss_text, self.name, f"0-{len(self._loss.weight_leaves) - 1}", cluster,
            num_micro_batches=method.num_micro_batches, schedule=method.pipeline_schedule,
            auto_layers=layers.layer_num if isinstance(layers, AutoLayerOption) else None,
            remat=isinstance(layers, AutoLayerOption) and layers.remat_layer,
            optimizer=method.optimizer,
            update_text=None if self._update is None else self._update.text,
            memory_budget_bytes=method.memory_budget_bytes,
            logical_space=method.logical_space, submesh_space=method.submesh_space,
            saved_plan=saved_json, saved_plan_source=saved_source)
        self.plan = Plan(self._planned.document, self._planned.text,
                         self._planned.timeline_svg)
        self._core: Optional[_core.PipelineExecutable] = None
        self._carried_leaves: list[int] = []  # the step's leaf of each carried value, in order
        self._placed = False  # whether the devices hold the carried values
        self._generation = 0  # counts the steps and placements: which values the devices hold
        self._fetched: tuple[int, list[np.ndarray]] = (-1, [])

    def _lower_update(self) -> None:
        """The step's code after its gradient as the stages' optimizer (update_program.py),
        split by weight; or why a pipeline cannot run it."""
        try:
            update = lower_update(self._fn, self._abstract_args, self._batch_argnums,
                                  self._loss.weight_leaves, self._loss.aval)
        except ValueError as error:
            self._update_error = str(error)
            return
        try:
            _core.split_update_program(update.text, len(self._loss.weight_leaves))
        except ValueError as error:
            self._update_error = (f"PipeshardParallel: {error}"
                                  f"{self._legend(str(error), update.state_leaves)}")
            return
        self._update = update

    def _legend(self, message: str, state_leaves: Sequence[int]) -> str:
        """What the weights and states a C++ message numbers are in the step's arguments."""
        paths = [jax.tree_util.keystr(path) for path, _ in
                 jax.tree_util.tree_flatten_with_path(self._abstract_args)[0]]
        named = {f"weight {i}": paths[leaf] for i, leaf in enumerate(self._loss.weight_leaves)}
        named.update({f"state {j}": paths[leaf] for j, leaf in enumerate(state_leaves)})
        said: dict[str, None] = {}  # in the order the message says them
        for kind, first, second in re.findall(r"\b(weight|state)s? (\d+)(?: and (\d+))?",
                                              message):
            said.update(dict.fromkeys(f"{kind} {n}" for n in (first, second) if n))
        lines = [f"  {key} is the argument leaf {named[key]}" for key in said if key in named]
        return "\n" + "\n".join(lines) if lines else ""

    # --- running -------------------------------------------------------------------------------

    def compile(self) -> None:
        """Builds every stage's programs with the step's optimizer (the first call does this)."""
        if self._core is not None:
            return
        if self._update_error is not None:
            raise ValueError(self._update_error)
        missing = [k for k, leaf in enumerate(self._loss.input_leaves) if leaf is None]
        if missing:
            raise ValueError(
                f"PipeshardParallel: the loss of {self.name} reads {len(missing)} value(s) "
                "computed in the step outside it (not leaves of its arguments); to run it, "
                "compute them inside the loss function or pass them in the batch")
        self._core = self._planned.compile()
        states = self._update.state_leaves
        self._carried_leaves = list(self._loss.weight_leaves)
        for owned in self._core.weight_states:
            self._carried_leaves.extend(states[j] for j in owned)
        self._carried_leaves.extend(states[j] for j in self._core.shared_states)

    def __call__(self, leaves):
        self.compile()
        carried = [leaves[i] for i in self._carried_leaves]
        if not (self._placed and all(
                isinstance(x, DistributedArray) and x.is_from(self, self._generation)
                and x.index == k for k, x in enumerate(carried))):
            values = [host_value(x, self._leaf_types[i][1])
                      for x, i in zip(carried, self._carried_leaves)]
            self._placed = False
            self._generation += 1
            self._core.place(values)
            self._placed = True
        batch = [host_value(leaves[i], self._leaf_types[i][1]) for i in self._loss.input_leaves]
        try:
            loss = self._core.step(batch)
        except Exception:
            self._placed = False  # the devices' values are lost with the step
            raise
        self._generation += 1
        out_info = self._update.out_tree
        outputs: list[Any] = [None] * out_info.num_leaves
        placement = self._core.carried_placement
        for k, leaf in enumerate(self._carried_leaves):
            stage, layout = placement[k]
            outputs[self._update.next_leaf[leaf]] = DistributedArray(
                self, self._generation, k, self._leaf_types[leaf][0], self._leaf_types[leaf][1],
                f"stage {stage} {layout}")
        for o in self._update.loss_outputs:
            outputs[o] = np.asarray(loss, dtype=self._loss.aval.dtype)
        return jax.tree_util.tree_unflatten(out_info, outputs)

    def fetch_carried(self, generation: int) -> list[np.ndarray]:
        """Every carried value of step `generation`, whole (fetched once a step)."""
        if generation != self._generation or not self._placed:
            raise DonatedArrayError()
        if self._fetched[0] != generation:
            whole = self._core.fetch()
            self._fetched = (generation, [from_host(v, self._leaf_types[leaf][1])
                                          for v, leaf in zip(whole, self._carried_leaves)])
        return self._fetched[1]

    def memory_report(self) -> dict:
        """Peak bytes: each stage's predicted by the planner, and each device's measured in the
        last step (empty before the first)."""
        return {"predicted_peak_bytes_per_stage": [s["peak_memory_bytes"]
                                                   for s in self.plan.stages],
                "measured_peak_bytes_per_device":
                [] if self._core is None else self._core.peak_memory_bytes}

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
        """As HLO text: "loss", the loss the plan cuts into stages with its layer markers, or
        "update", the step's optimizer, which the plan prices and the stages run."""
        if stage == "loss":
            return self.loss_text
        if stage == "update":
            if self._update is None:
                raise ValueError(self._update_error)
            return self._update.text
        raise ValueError(f"get_hlo_text: a PipeshardParallel executable has the 'loss' and "
                         f"'update' stages, not '{stage}'")

    def dump_debug_info(self, folder: Union[str, os.PathLike]) -> list[str]:
        """Writes the loss (HLO), the step's optimizer (HLO, when a pipeline can run it), the
        plan document and its HTML report into `folder`."""
        files = {f"{self.name}.loss.hlo": self.loss_text}
        if self._update is not None:
            files[f"{self.name}.update.hlo"] = self._update.text
        files[f"{self.name}.plan.json"] = self.plan.to_json() + "\n"
        files[f"{self.name}.plan.html"] = self.plan.report_html()
        return write_debug_files(folder, files)
