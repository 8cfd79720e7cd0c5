"""JAX's with_sharding_constraint reaches the plan as a pin: the "Sharding" custom-call it lowers
to runs as the value itself, and its sharding= is the layout the plan keeps there."""

import os

# Four CPU devices for JAX's mesh; set before JAX starts its backend (this file runs alone).
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"

import jax  # pylint: disable=wrong-import-position
import numpy as np  # pylint: disable=wrong-import-position
from jax.sharding import Mesh, NamedSharding, PartitionSpec  # pylint: disable=wrong-import-position

import alpa_cpp  # pylint: disable=wrong-import-position
import models  # pylint: disable=wrong-import-position


def test_a_sharding_constraint_is_kept_and_trains_as_jax_does():
    mesh = Mesh(np.array(jax.devices()[:4]), ("devices",))
    # Columns, not the rows the planner splits a batch by when left alone.
    split_columns = NamedSharding(mesh, PartitionSpec(None, "devices"))

    def step(state, batch):
        batch = jax.lax.with_sharding_constraint(batch, split_columns)
        return models.mse_train_step(state, batch)

    state, batches = models.mlp_state_and_batches(3)
    want_state, want_losses = state, []
    for batch in batches:
        want_state, loss = jax.jit(step)(want_state, batch)
        want_losses.append(float(loss))
    parallel = alpa_cpp.parallelize(step, method=alpa_cpp.ShardParallel(mesh_shape=(4,)))
    got_state, got_losses = state, []
    for batch in batches:
        got_state, loss = parallel(got_state, batch)
        got_losses.append(float(loss))
    np.testing.assert_allclose(got_losses, want_losses, rtol=1e-4)
    program = parallel.get_executable(got_state, batches[0]).get_hlo_text()
    # The constrained values are split by columns on every device: x [32,16] becomes [32,4].
    assert "f32[32,4]" in program
