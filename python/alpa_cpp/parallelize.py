"""alpa_cpp.parallelize: Alpa's decorator, over our planner and runtime instead of a forked XLA.

    @alpa_cpp.parallelize(method=alpa_cpp.DataParallel(), cluster="local:4")
    def train_step(state, batch):
        loss, grads = jax.value_and_grad(loss_fn)(state.params, batch)
        return state.apply_gradients(grads=grads), loss

    for batch in batches:
        state, loss = train_step(state, batch)

The first call lowers the step with JAX (`jax.jit(step, donate_argnums=...).lower(...)`, as HLO
text), plans it with the method on the cluster's devices, partitions it and runs it on in-process
devices. The donated arguments are the state the step carries (their input_output_alias in the
HLO); the others are the batch. The carried outputs come back as DistributedArrays that stay on
the devices: handing them to the next call moves nothing. A call whose arguments differ in
structure, shape or dtype from the last plan's is planned again, with a warning.
"""

from __future__ import annotations

import functools
import json
import os
import warnings
from typing import Any, Callable, Optional, Sequence, Union

import jax
import numpy as np

from alpa_cpp import _core
from alpa_cpp._core import Cluster
from alpa_cpp.debug_info import write_debug_files
from alpa_cpp.distributed_array import DistributedArray, DonatedArrayError
from alpa_cpp.host_arrays import from_host, host_value, leaf_shape_and_dtype
from alpa_cpp.methods import Method, PipeshardParallel, ShardParallel
from alpa_cpp.pipeshard import PipeshardExecutable
from alpa_cpp.plan import Plan

DEFAULT_CLUSTER = "local:4"


def _signature(leaves: Sequence[Any], treedef) -> tuple:
    """What a plan depends on: the pytree structure and every leaf's shape and dtype."""
    return treedef, tuple((shape, str(dtype))
                          for shape, dtype in map(leaf_shape_and_dtype, leaves))


class Executable:
    """One plan of a parallelized step, for one argument signature (Alpa's executable).

    Answers what Alpa's performance-tuning guide asks of it: `get_total_allocation_size()`,
    `get_hlo_text()`, `dump_debug_info(folder)`; `plan` is the plan document (alpa_cpp.Plan) and
    `explain()` says why; set `record_trace` to time every device's instructions in each step
    (`get_trace()`).
    """

    def __init__(self, fn_name: str, lowered, method: Method, cluster: Cluster):
        self.method = method
        self.cluster = cluster
        self.lowered_text = lowered.as_text(dialect="hlo")
        self.module = _core.Module(self.lowered_text, fn_name)
        self._in_dtypes = [np.dtype(info.dtype) for info in jax.tree_util.tree_leaves(
            lowered.args_info)]
        self._out_tree = lowered.out_tree
        self._out_info = jax.tree_util.tree_leaves(lowered.out_info)
        self.core = _core.parallelize_step(
            self.module, cluster, method.method_name,
            mesh_shape=list(method.mesh_shape or []),
            batch_axis=-1 if method.batch_axis is None else method.batch_axis,
            memory_budget_bytes=method.memory_budget_bytes, model_name=fn_name)
        self.plan = Plan(self.core.plan_document, self.core.plan_text)
        # Whether each step records every device's timeline (get_trace, dump_debug_info).
        self.record_trace = False
        self._traced = False  # whether the last step was
        self._state: Optional[_core.DeviceValues] = None
        self._generation = 0  # of the carried values in _state
        self._fetched: tuple[int, list[np.ndarray]] = (-1, [])

    # --- running -------------------------------------------------------------------------------

    def __call__(self, leaves: Sequence[Any]):
        state = self._carried_state(leaves)
        fresh = [host_value(leaves[p], self._in_dtypes[p]) for p in self.core.fresh_parameters]
        try:
            results = self.core.step(state, fresh, trace=self.record_trace)
        except Exception:
            if state is self._state and state.empty:  # handed to the devices, lost with the step
                self._state = None
            raise
        self._state = state
        self._generation += 1
        self._traced = self.record_trace
        outputs: list[Any] = [None] * len(self._out_info)
        shardings = self.core.parameter_shardings
        for index, (parameter, leaf) in enumerate(zip(self.core.carried_parameters,
                                                      self.core.carried_leaves)):
            info = self._out_info[leaf]
            outputs[leaf] = DistributedArray(self, self._generation, index, info.shape,
                                             info.dtype, shardings[parameter])
        for value, leaf in zip(results, self.core.fresh_leaves):
            outputs[leaf] = from_host(value, np.dtype(self._out_info[leaf].dtype))
        return jax.tree_util.tree_unflatten(self._out_tree, outputs)

    def _carried_state(self, leaves: Sequence[Any]) -> _core.DeviceValues:
        """The devices' carried values: the last step's when the call hands its outputs back
        (nothing moves), else the given values split over the devices."""
        carried = [leaves[p] for p in self.core.carried_parameters]
        if self._state is not None and all(
                isinstance(x, DistributedArray) and x.is_from(self, self._generation)
                and x.index == i for i, x in enumerate(carried)):
            return self._state
        values = [host_value(x, self._in_dtypes[p])
                  for x, p in zip(carried, self.core.carried_parameters)]
        return self.core.place(values)

    def fetch_carried(self, generation: int) -> list[np.ndarray]:
        """Every carried value of step `generation`, whole (fetched once a step)."""
        if generation != self._generation or self._state is None:
            raise DonatedArrayError()
        if self._fetched[0] != generation:
            whole = self.core.fetch(self._state)
            dtypes = [np.dtype(self._out_info[leaf].dtype) for leaf in self.core.carried_leaves]
            self._fetched = (generation, [from_host(v, d) for v, d in zip(whole, dtypes)])
        return self._fetched[1]

    # --- what Alpa's executable answers ------------------------------------------------------

    @property
    def mesh_shape(self) -> list[int]:
        return self.core.mesh_shape

    @property
    def predicted_step_seconds(self) -> float:
        return self.core.predicted_step_seconds

    def get_total_allocation_size(self) -> int:
        """The memory model's peak bytes per device for the plan (memory_report() adds the
        measured peak)."""
        return self.core.predicted_peak_memory_bytes

    def memory_report(self) -> dict:
        """Per-device peak bytes: predicted by the memory model, and measured over the steps run
        so far (0 before the first)."""
        return {"predicted_peak_bytes_per_device": self.core.predicted_peak_memory_bytes,
                "measured_peak_bytes_per_device": self.core.peak_memory_bytes}

    def get_hlo_text(self, stage: str = "partitioned") -> str:
        """The step as HLO text: "lowered" (what JAX gave us) or "partitioned" (what every
        device runs: local shapes and collectives)."""
        if stage == "lowered":
            return self.lowered_text
        if stage == "partitioned":
            return self.core.program_text()
        raise ValueError(f"get_hlo_text: unknown stage '{stage}'; use 'lowered' or 'partitioned'")

    def get_trace(self) -> Optional[str]:
        """The last step's timeline as Chrome trace JSON (chrome://tracing, Perfetto: one row per
        device, one event per instruction), when it ran with `record_trace` set; else None."""
        return self.core.last_trace_json() if self._traced else None

    def explain(self) -> str:
        """Why the plan is what it is (`alpa explain`): the step time split into compute,
        communication and resharding, the peak memory and where it is, the collectives."""
        return self.plan.explain()

    def plan_summary(self) -> dict:
        """The plan in short, as plain data: method, cluster, mesh, each parameter's layout, the
        predicted and measured figures (`plan.document` has every instruction's sharding)."""
        return {
            "method": self.method.method_name,
            "cluster": self.cluster.spec_text,
            "mesh_shape": self.core.mesh_shape,
            "parameters": [{"name": name, "shape": shape, "sharding": sharding}
                           for (name, shape), sharding in zip(self.module.parameters,
                                                              self.core.parameter_shardings)],
            "carried_parameters": self.core.carried_parameters,
            "predicted_step_seconds": self.core.predicted_step_seconds,
            **self.memory_report(),
            "compile_time_s": self.core.compile_time_s,
            "passed_over": self.core.passed_over,
        }

    def dump_debug_info(self, folder: Union[str, os.PathLike]) -> list[str]:
        """Writes into `folder` the HLO before and after partitioning, the plan document (what
        `alpa explain` reads) and its summary with the measured figures, the ILP the plan solved
        (IOPDDL JSON: `alpa solve FILE` solves it again) and, when the last step was traced
        (`record_trace`), its timeline; returns the paths written."""
        name = self.module.name
        files = {
            f"{name}.lowered.hlo": self.lowered_text,
            f"{name}.partitioned.hlo": self.core.program_text(),
            f"{name}.plan.json": self.plan.to_json() + "\n",
            f"{name}.summary.json": json.dumps(self.plan_summary(), indent=2) + "\n",
            f"{name}.ilp.json": self.core.ilp_problem_json(),
        }
        trace = self.get_trace()
        if trace is not None:
            files[f"{name}.trace.json"] = trace
        return write_debug_files(folder, files)


class ParallelizedFunction:
    """A train step parallelized with a method on a cluster; call it as the function."""

    def __init__(self, fn: Callable, method: Method, cluster: Union[str, Cluster],
                 donate_argnums: Union[str, Sequence[int]], batch_argnums: Sequence[int]):
        if not hasattr(method, "method_name"):
            raise TypeError(f"parallelize: method must be one of alpa_cpp's methods "
                            f"(ShardParallel, DataParallel, Zero2Parallel, Zero3Parallel, "
                            f"PipeshardParallel), got {method!r}")
        self.fn = fn
        self.method = method
        self.cluster = cluster if isinstance(cluster, Cluster) else Cluster(cluster)
        self.donate_argnums = donate_argnums
        self.batch_argnums = tuple(batch_argnums)
        self._executable: Optional[Executable] = None
        self._signature = None
        functools.update_wrapper(self, fn)

    def _donated(self, num_args: int) -> tuple[int, ...]:
        if self.donate_argnums == "auto":  # Alpa's: every argument but the batch
            return tuple(i for i in range(num_args) if i not in self.batch_argnums)
        return tuple(self.donate_argnums)

    def get_executable(self, *args) -> Union[Executable, PipeshardExecutable]:
        """The plan for these arguments, made on first use (nothing runs); the arguments may be
        jax.ShapeDtypeStructs, so nothing is allocated."""
        return self._executable_for(*jax.tree_util.tree_flatten(args))

    def __call__(self, *args):
        leaves, treedef = jax.tree_util.tree_flatten(args)
        return self._executable_for(leaves, treedef)(leaves)

    def _executable_for(self, leaves: list, treedef) -> Union[Executable, PipeshardExecutable]:
        signature = _signature(leaves, treedef)
        if self._executable is not None and signature == self._signature:
            return self._executable
        if self._executable is not None:
            warnings.warn(f"alpa_cpp.parallelize: the arguments of {self.fn.__name__} changed "
                          "(pytree structure, shape or dtype): planning it again",
                          stacklevel=3)
        abstract = jax.tree_util.tree_unflatten(treedef, [
            jax.ShapeDtypeStruct(x.shape, x.dtype) if isinstance(x, DistributedArray) else x
            for x in leaves])
        if isinstance(self.method, PipeshardParallel):
            self._executable = PipeshardExecutable(self.fn, abstract, self.batch_argnums,
                                                   self.method, self.cluster)
        else:
            lowered = jax.jit(self.fn, donate_argnums=self._donated(len(abstract)),
                              keep_unused=True).lower(*abstract)
            self._executable = Executable(self.fn.__name__, lowered, self.method, self.cluster)
        self._signature = signature
        return self._executable


def parallelize(fn: Optional[Callable] = None, *, method: Method = ShardParallel(),
                cluster: Union[str, Cluster] = DEFAULT_CLUSTER,
                donate_argnums: Union[str, Sequence[int]] = "auto",
                batch_argnums: Sequence[int] = (1,)):
    """Parallelizes a train step, as `alpa.parallelize` did.

    method: ShardParallel (default), DataParallel, Zero2Parallel, Zero3Parallel, or
        PipeshardParallel (a pipeline: the loss differentiated with alpa_cpp.grad cut into
        stages, the step's own optimizer run on each stage's weights).
    cluster: where it runs: "local:N" (N in-process devices, the default local:4) or a
        Cluster. Planning for another cluster ("p3.16xlarge:2x8") works with get_executable.
    donate_argnums: the arguments the step updates and returns (its state); "auto" (Alpa's
        default) donates every argument not in batch_argnums.
    batch_argnums: the arguments that are the batch.
    """
    def decorate(function: Callable) -> ParallelizedFunction:
        return ParallelizedFunction(function, method, cluster, donate_argnums, batch_argnums)

    return decorate(fn) if fn is not None else decorate
