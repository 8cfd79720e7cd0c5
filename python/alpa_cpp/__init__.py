"""Alpa C++ from Python: plan and run a JAX train step over a mesh of devices.

    import alpa_cpp

    @alpa_cpp.parallelize(method=alpa_cpp.ShardParallel())
    def train_step(state, batch): ...

The planner (Alpa's ILP over every operator's sharding), the SPMD partitioner and the runtime are
the C++ ones (`alpa_cpp._core`); JAX only lowers the function to HLO text. No forked jaxlib.
"""

from alpa_cpp import _core
from alpa_cpp.distributed_array import DistributedArray, DonatedArrayError
from alpa_cpp.methods import (AutoLayerOption, DataParallel, PipeshardParallel, ShardParallel,
                              Zero2Parallel, Zero3Parallel)
from alpa_cpp.parallelize import Executable, ParallelizedFunction, parallelize
from alpa_cpp.pipeline import grad, mark_pipeline_boundary, value_and_grad
from alpa_cpp.pipeshard import PipeshardExecutable
from alpa_cpp.plan import Plan

__version__ = _core.version()

Module = _core.Module
Cluster = _core.Cluster  # "local:4", a preset such as "p3.16xlarge:2x8", or a cluster JSON file


__all__ = [
    "AutoLayerOption", "Cluster", "DataParallel", "DistributedArray", "DonatedArrayError",
    "Executable", "Module", "ParallelizedFunction", "PipeshardExecutable", "PipeshardParallel",
    "Plan", "ShardParallel", "Zero2Parallel", "Zero3Parallel", "grad",
    "mark_pipeline_boundary", "parallelize", "value_and_grad", "__version__",
]
