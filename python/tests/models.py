"""The Flax models and optax train steps the Python tests run, as a user writes them."""

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax.training import train_state

LEARNING_RATE = 1e-3


class MLP(nn.Module):
    hidden: int = 64
    outputs: int = 8

    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Dense(self.hidden)(x))
        x = nn.relu(nn.Dense(self.hidden)(x))
        return nn.Dense(self.outputs)(x)


class Block(nn.Module):
    hidden: int
    heads: int

    @nn.compact
    def __call__(self, x):
        mask = nn.make_causal_mask(jnp.ones(x.shape[:2]))
        x = x + nn.MultiHeadDotProductAttention(num_heads=self.heads, deterministic=True)(nn.LayerNorm()(x),
                                                                           mask=mask)
        h = nn.Dense(4 * self.hidden)(nn.LayerNorm()(x))
        return x + nn.Dense(self.hidden)(nn.gelu(h))


class GPT(nn.Module):
    """A GPT-style causal language model: token and position embeddings, pre-norm blocks."""

    vocab: int = 64
    hidden: int = 32
    heads: int = 4
    layers: int = 4
    seq: int = 16

    @nn.compact
    def __call__(self, ids):
        x = nn.Embed(self.vocab, self.hidden)(ids)
        x = x + self.param("pos", nn.initializers.normal(0.02), (self.seq, self.hidden))
        for _ in range(self.layers):
            x = Block(self.hidden, self.heads)(x)
        return nn.Dense(self.vocab)(nn.LayerNorm()(x))


def mse_train_step(state, batch):
    def loss_fn(params):
        return jnp.mean((state.apply_fn(params, batch["x"]) - batch["y"]) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(state.params)
    return state.apply_gradients(grads=grads), loss


def lm_train_step(state, batch):
    def loss_fn(params):
        logits = state.apply_fn(params, batch["ids"])
        return optax.softmax_cross_entropy_with_integer_labels(logits, batch["labels"]).mean()

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


def gpt_state_and_batches(steps, batch=8, seed=0, **config):
    model = GPT(**config)
    keys = jax.random.split(jax.random.PRNGKey(seed), 2)
    ids = jax.random.randint(keys[0], (steps, batch, model.seq + 1), 0, model.vocab)
    params = model.init(keys[1], ids[0, :, :-1])
    state = train_state.TrainState.create(apply_fn=model.apply, params=params,
                                          tx=optax.adam(LEARNING_RATE))
    return state, [{"ids": ids[i, :, :-1], "labels": ids[i, :, 1:]} for i in range(steps)]
