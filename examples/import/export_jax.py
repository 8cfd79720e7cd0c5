#!/usr/bin/env python3
"""Lowers two Flax models' loss functions to HLO text, as a JAX user would hand them to alpa.

    python3 -m venv /tmp/jax && /tmp/jax/bin/pip install "jax[cpu]" flax
    /tmp/jax/bin/python examples/import/export_jax.py examples/import

Writes jax_mlp.hlo (an MLP regressor's mean squared error) and jax_gpt.hlo (a GPT-style causal
language model's cross-entropy). Each loss takes (params, batch...): JAX names each entry
parameter after its argument and pytree path, so `--weights params` picks the weights:

    alpa run examples/import/jax_gpt.hlo --weights params --cluster local:4 --check
"""
import os
import sys

import jax
import jax.numpy as jnp
import flax.linen as nn


class Mlp(nn.Module):
    width: int = 32
    depth: int = 3
    outputs: int = 8

    @nn.compact
    def __call__(self, x):
        for _ in range(self.depth):
            x = nn.relu(nn.Dense(self.width)(x))
        return nn.Dense(self.outputs)(x)


class Block(nn.Module):
    hidden: int
    heads: int

    @nn.compact
    def __call__(self, x):
        seq = x.shape[1]
        mask = nn.make_causal_mask(jnp.ones((x.shape[0], seq)))
        y = nn.LayerNorm()(x)
        x = x + nn.SelfAttention(num_heads=self.heads)(y, mask=mask)
        y = nn.LayerNorm()(x)
        y = nn.Dense(4 * self.hidden)(y)
        return x + nn.Dense(self.hidden)(nn.gelu(y))


class Gpt(nn.Module):
    vocab: int = 64
    hidden: int = 32
    heads: int = 4
    layers: int = 2
    seq: int = 16

    @nn.compact
    def __call__(self, tokens):
        embed = nn.Embed(self.vocab, self.hidden)
        position = self.param("position", nn.initializers.normal(0.02), (self.seq, self.hidden))
        x = embed(tokens) + position
        for _ in range(self.layers):
            x = Block(self.hidden, self.heads)(x)
        return embed.attend(nn.LayerNorm()(x))


def write(directory, name, loss, *args):
    text = jax.jit(loss).lower(*args).as_text(dialect="hlo")
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        f.write(text)
    print(f"wrote {path}")


def main():
    directory = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(__file__)
    key = jax.random.PRNGKey(0)

    mlp = Mlp()
    x, y = jnp.ones((8, 32)), jnp.ones((8, 8))
    mlp_params = mlp.init(key, x)

    def mlp_loss(params, x, y):
        return jnp.mean((mlp.apply(params, x) - y) ** 2)

    write(directory, "jax_mlp.hlo", mlp_loss, mlp_params, x, y)

    gpt = Gpt()
    tokens = jnp.zeros((4, 16), jnp.int32)
    gpt_params = gpt.init(key, tokens)

    def gpt_loss(params, tokens, labels):
        logits = gpt.apply(params, tokens)
        log_probs = jax.nn.log_softmax(logits)
        picked = jnp.take_along_axis(log_probs, labels[..., None], axis=-1)
        return -jnp.mean(picked)

    write(directory, "jax_gpt.hlo", gpt_loss, gpt_params, tokens, tokens)


if __name__ == "__main__":
    main()
