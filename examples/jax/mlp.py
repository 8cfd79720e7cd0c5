"""Train a Flax MLP with alpa_cpp.parallelize, the way Alpa's README showed it.

    .venv/bin/python examples/jax/mlp.py          (after scripts/setup.sh and a build; see
                                                   python/README.md for PYTHONPATH or pip install)
"""

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax.training import train_state

import alpa_cpp


class MLP(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Dense(256)(x))
        x = nn.relu(nn.Dense(256)(x))
        return nn.Dense(16)(x)


# The only change to a JAX training loop: the decorator.
@alpa_cpp.parallelize(method=alpa_cpp.ShardParallel(), cluster="local:4")
def train_step(state, batch):
    def loss_fn(params):
        return jnp.mean((state.apply_fn(params, batch["x"]) - batch["y"]) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(state.params)
    return state.apply_gradients(grads=grads), loss


def main():
    key_x, key_w, key_init = jax.random.split(jax.random.PRNGKey(0), 3)
    x = jax.random.normal(key_x, (128, 64))
    batch = {"x": x, "y": jnp.tanh(x @ jax.random.normal(key_w, (64, 16)))}
    model = MLP()
    state = train_state.TrainState.create(apply_fn=model.apply,
                                          params=model.init(key_init, batch["x"]),
                                          tx=optax.adam(1e-3))
    for step in range(20):
        state, loss = train_step(state, batch)
        if step % 5 == 0:
            print(f"step {step:2d}  loss {float(loss):.6f}")
    executable = train_step.get_executable(state, batch)
    print(f"mesh {executable.mesh_shape}, predicted peak per device "
          f"{executable.get_total_allocation_size() / 2**20:.2f} MiB, measured "
          f"{executable.memory_report()['measured_peak_bytes_per_device'] / 2**20:.2f} MiB")


if __name__ == "__main__":
    main()
