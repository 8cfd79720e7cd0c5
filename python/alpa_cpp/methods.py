"""The parallel methods, named as Alpa names them (alpa.ShardParallel, alpa.DataParallel, ...).

Each says how `parallelize` plans a train step: which strategies the ILP may choose and what is
pinned. They map onto the C++ methods (sharding/parallel_methods.h):

    ShardParallel      shard   every operator's sharding chosen by the ILP (Alpa's intra-op pass)
    DataParallel       data    the batch split along mesh axis 0, the state replicated
    Zero2Parallel      zero2   as data, the optimizer state split too (ZeRO stage 2)
    Zero3Parallel      zero3   as zero2, the weights split too (ZeRO stage 3)
    PipeshardParallel  pipeshard  stages over sub-meshes, each auto-sharded: planned and run from
                                  Python (alpa_cpp.grad marks the loss to cut)
"""

from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING, Optional, Sequence, Union

if TYPE_CHECKING:
    from alpa_cpp.plan import Plan


@dataclasses.dataclass(frozen=True)
class ShardParallel:
    """Auto-sharding on one mesh of every device.

    mesh_shape: the logical mesh, e.g. (2, 2); None tries (N) and every (a, N/a) and keeps the
        fastest plan by the cost model, as Alpa's intra-op pass does.
    batch_axis: the mesh axis the batch is split along (Alpa's force_batch_dim_to_mesh_dim);
        None leaves it to the ILP.
    memory_budget_bytes: the per-device memory a plan may use; None takes the cluster's.
    """

    mesh_shape: Optional[Sequence[int]] = None
    batch_axis: Optional[int] = None
    memory_budget_bytes: Optional[int] = None

    method_name = "shard"


@dataclasses.dataclass(frozen=True)
class _BatchSplit:
    """The data-parallel family: the batch split over the 1-D mesh of every device."""

    memory_budget_bytes: Optional[int] = None

    mesh_shape = None
    batch_axis = None


@dataclasses.dataclass(frozen=True)
class DataParallel(_BatchSplit):
    """The batch split over every device, weights and optimizer state replicated."""

    method_name = "data"


@dataclasses.dataclass(frozen=True)
class Zero2Parallel(_BatchSplit):
    """Data parallel with the optimizer state split over the devices (ZeRO stage 2)."""

    method_name = "zero2"


@dataclasses.dataclass(frozen=True)
class Zero3Parallel(_BatchSplit):
    """Data parallel with the optimizer state and the weights split (ZeRO stage 3)."""

    method_name = "zero3"


@dataclasses.dataclass(frozen=True)
class AutoLayerOption:
    """Layers found by clustering the loss's operators (Alpa's automatic layer construction)
    instead of its mark_pipeline_boundary() markers.

    layer_num: how many layers; remat_layer: recompute each layer's activations in the
        backward pass.
    """

    layer_num: int
    remat_layer: bool = False


@dataclasses.dataclass(frozen=True)
class PipeshardParallel:
    """Pipeline stages over sub-meshes, each stage auto-sharded (Alpa's PipeshardParallel).

    The step must take its loss's gradient with alpa_cpp.grad or alpa_cpp.value_and_grad: the
    stages are cut in the loss before differentiation (pipeline.py).

    num_micro_batches: the batch is split into this many micro-batches along dimension 0.
    layer_option: None (the loss's mark_pipeline_boundary() markers) or AutoLayerOption.
    pipeline_schedule: "1f1b", "gpipe", "interleaved-1f1b", or "auto" (1F1B and GPipe, the faster
        kept).
    optimizer: the optimizer the update is priced with ("sgd", "adam", "adamw", "adafactor")
        when the step's own (its optax update, which the plan prices and the stages run
        otherwise) cannot run in a pipeline; such a step plans but does not run.
    memory_budget_bytes: each device's memory to plan in; None takes the cluster's.
    logical_space, submesh_space: the stage meshes searched, as `alpa plan`'s flags.
    plan: a saved pipelined plan to run instead of searching (an alpa_cpp.Plan, or the path of
        a document from Plan.save or `alpa plan -o`): its stages, sub-meshes, logical meshes and
        schedule re-costed for this step and cluster, as `alpa run --plan` takes them. It must
        have been made for the same loss (the step's name, its layers, the micro-batch) and
        cluster; a plan made for another is a ValueError naming what differs.
    """

    num_micro_batches: int = 1
    layer_option: Optional[AutoLayerOption] = None
    pipeline_schedule: str = "auto"
    optimizer: str = "adam"
    memory_budget_bytes: Optional[int] = None
    logical_space: str = "single-node"
    submesh_space: str = "power-of-two"
    plan: Optional[Union["Plan", str, os.PathLike]] = None

    method_name = "pipeshard"


Method = ShardParallel | DataParallel | Zero2Parallel | Zero3Parallel | PipeshardParallel
