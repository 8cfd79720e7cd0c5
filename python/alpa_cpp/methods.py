"""The parallel methods, named as Alpa names them (alpa.ShardParallel, alpa.DataParallel, ...).

Each says how `parallelize` plans a train step: which strategies the ILP may choose and what is
pinned. They map onto the C++ methods (sharding/parallel_methods.h):

    ShardParallel      shard   every operator's sharding chosen by the ILP (Alpa's intra-op pass)
    DataParallel       data    the batch split along mesh axis 0, the state replicated
    Zero2Parallel      zero2   as data, the optimizer state split too (ZeRO stage 2)
    Zero3Parallel      zero3   as zero2, the weights split too (ZeRO stage 3)
    PipeshardParallel          stages over sub-meshes: planned by `alpa plan`, not run from Python yet
"""

from __future__ import annotations

import dataclasses
from typing import Optional, Sequence


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
class PipeshardParallel:
    """Pipeline stages over sub-meshes, each stage auto-sharded (Alpa's PipeshardParallel).

    Not run from Python yet: a whole train step dumped by JAX carries no layers, and the stage
    programs are cut from the loss before differentiation. `alpa plan loss.hlo --weights params
    --auto-layers N` plans one from the loss function's HLO (examples/import/README.md).
    """

    num_micro_batches: int = 1
    layer_option: Optional[object] = None
    stage_option: Optional[object] = None

    method_name = "pipeshard"


Method = ShardParallel | DataParallel | Zero2Parallel | Zero3Parallel | PipeshardParallel
