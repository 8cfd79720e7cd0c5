"""The Flax models and optax train steps the Python tests run, as a user writes them. The GPT
and its train step are examples/jax/gpt.py's, so the tests run the example's code."""

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax.training import train_state

from gpt import GPT, train_step as lm_train_step  # examples/jax (conftest.py)

LEARNING_RATE = 1e-3


class MLP(nn.Module):
    hidden: int = 64
    outputs: int = 8

    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Dense(self.hidden)(x))
        x = nn.relu(nn.Dense(self.hidden)(x))
        return nn.Dense(self.outputs)(x)


def mse_train_step(state, batch):
    def loss_fn(params):
        return jnp.mean((state.apply_fn(params, batch["x"]) - batch["y"]) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(state.params)
    return state.apply_gradients(grads=grads), loss


def mlp_state_and_batches(steps, batch=32, features=16, seed=0):
    model = MLP()
    keys = jax.random.split(jax.random.PRNGKey(seed), 3)
    x = jax.random.normal(keys[0], (steps, batch, features))
    y = jax.random.normal(keys[1], (steps, batch, model.outputs))
    params = model.init(keys[2], x[0])
    state = train_state.TrainState.create(apply_fn=model.apply, params=params,
                                          tx=optax.adam(LEARNING_RATE))
    return state, [{"x": x[i], "y": y[i]} for i in range(steps)]


# A GPT that trains in seconds: 4 layers, hidden 32, 4 heads, 16 tokens, 64 words.
SMALL_GPT = {"vocab": 64, "hidden": 32, "heads": 4, "layers": 4, "seq": 16}


def gpt_state_and_batches(steps, batch=8, seed=0, scan=False):
    model = GPT(**SMALL_GPT, scan=scan)
    keys = jax.random.split(jax.random.PRNGKey(seed), 2)
    ids = jax.random.randint(keys[0], (steps, batch, model.seq + 1), 0, model.vocab)
    params = model.init(keys[1], ids[0, :, :-1])
    state = train_state.TrainState.create(apply_fn=model.apply, params=params,
                                          tx=optax.adam(LEARNING_RATE))
    return state, [{"ids": ids[i, :, :-1], "labels": ids[i, :, 1:]} for i in range(steps)]
