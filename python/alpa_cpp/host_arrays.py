"""Values crossing between Python and the devices: NumPy arrays of the step's dtypes."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np


def leaf_shape_and_dtype(leaf: Any) -> tuple[tuple, np.dtype]:
    """A step argument's shape and dtype as JAX lowers it: without x64, int64 and Python ints
    are int32, floats float32. A DistributedArray's without fetching it."""
    if hasattr(leaf, "shape") and hasattr(leaf, "dtype"):
        shape, dtype = leaf.shape, leaf.dtype
    else:
        shape, dtype = np.shape(leaf), np.result_type(leaf)
    return tuple(shape), np.dtype(jax.dtypes.canonicalize_dtype(dtype))


def host_value(leaf: Any, dtype: np.dtype) -> np.ndarray:
    """`leaf` as a C-contiguous NumPy array of `dtype`; bfloat16 as its uint16 bits."""
    value = np.asarray(leaf, dtype=dtype, order="C")
    if dtype.name == "bfloat16":
        value = value.view(np.uint16)
    return value


def from_host(value: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A result as the step's output dtype (bfloat16 comes across as uint16 bits), read-only."""
    if value.dtype != dtype:
        value = value.view(dtype)
    value.flags.writeable = False
    return value
