"""DistributedArray: a value a parallelized step carries to the next, kept split on the devices.

As Alpa's DistributedArray: the step's outputs that the next step reads (the weights and the
optimizer state, donated to it) stay on the devices between calls, and come back whole only when
asked (`get()`, `np.asarray(x)`). Passing them to the next call of the same step moves nothing.
Once a later step has consumed them, they are gone, as JAX's donated arrays are.
"""

from __future__ import annotations

from typing import Any, Protocol, Sequence

import numpy as np


class DonatedArrayError(RuntimeError):
    """A DistributedArray read after a later step consumed it."""

    def __init__(self):
        super().__init__(
            "this DistributedArray was donated to a later step of its function, which replaced "
            "its values on the devices (or they were lost when a step failed); use the values "
            "that step returned")


class CarriedValues(Protocol):
    """What holds the values on the devices (the executable)."""

    def fetch_carried(self, generation: int) -> Sequence[np.ndarray]:
        """Every carried value of step `generation`, whole; DonatedArrayError when a later
        step has consumed them."""


class DistributedArray:
    """One carried value of a parallelized step, split over its executable's devices."""

    __slots__ = ("_owner", "_generation", "_index", "shape", "dtype", "sharding")

    def __init__(self, owner: CarriedValues, generation: int, index: int, shape: tuple,
                 dtype: np.dtype, sharding: str):
        self._owner = owner
        self._generation = generation
        self._index = index
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.sharding = sharding  # its layout over the mesh: "[R,S0]", dimension 1 split on axis 0

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def is_from(self, owner: CarriedValues, generation: int) -> bool:
        """Whether it is one of the values `owner`'s step `generation` returned."""
        return self._owner is owner and self._generation == generation

    @property
    def index(self) -> int:
        return self._index

    def get(self) -> np.ndarray:
        """The whole value, assembled from the devices' tiles (read-only)."""
        return self._owner.fetch_carried(self._generation)[self._index]

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        value = self.get()
        if dtype is not None and np.dtype(dtype) != value.dtype:
            return value.astype(dtype)
        return np.array(value) if copy else value

    def __int__(self) -> int:
        return int(self.get())

    def __float__(self) -> float:
        return float(self.get())

    def __jax_array__(self):
        import jax.numpy as jnp  # pylint: disable=import-outside-toplevel

        return jnp.asarray(self.get())

    def __repr__(self) -> str:
        return (f"DistributedArray(shape={self.shape}, dtype={self.dtype.name}, "
                f"sharding={self.sharding})")
