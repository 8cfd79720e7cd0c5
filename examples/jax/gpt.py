"""Train a small Flax GPT with alpa_cpp.parallelize on 4 in-process devices, with ZeRO-3 and as a
pipeline, then plan the same step for 16 V100s without running it, on one mesh and as a
pipeline.

    .venv/bin/python examples/jax/gpt.py
"""

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax.training import train_state

import alpa_cpp


class Block(nn.Module):
    hidden: int
    heads: int

    @nn.compact
    def __call__(self, x):
        mask = nn.make_causal_mask(jnp.ones(x.shape[:2]))
        x = x + nn.MultiHeadDotProductAttention(num_heads=self.heads, deterministic=True)(nn.LayerNorm()(x),
                                                                           mask=mask)
        return x + nn.Dense(self.hidden)(nn.gelu(nn.Dense(4 * self.hidden)(nn.LayerNorm()(x))))


class ScannedBlock(nn.Module):
    """A Block as nn.scan calls it: (carry, input) -> (carry, output)."""
    hidden: int
    heads: int

    @nn.compact
    def __call__(self, x, _):
        return Block(self.hidden, self.heads)(x), None


class GPT(nn.Module):
    vocab: int = 256
    hidden: int = 64
    heads: int = 4
    layers: int = 4
    seq: int = 32
    # The blocks as one nn.scan over stacked weights (a `while` loop in the HLO), as MaxText and
    # most current JAX code write a layer stack; alpa_cpp unrolls it into its layers.
    scan: bool = False

    @nn.compact
    def __call__(self, ids):
        x = nn.Embed(self.vocab, self.hidden)(ids)
        x = x + self.param("pos", nn.initializers.normal(0.02), (self.seq, self.hidden))
        if self.scan:
            stack = nn.scan(ScannedBlock, variable_axes={"params": 0},
                            split_rngs={"params": True}, length=self.layers)
            x, _ = stack(self.hidden, self.heads)(x, None)
        else:
            for i in range(self.layers):
                x = Block(self.hidden, self.heads)(x)
                if i + 1 < self.layers:
                    alpa_cpp.mark_pipeline_boundary()  # where a pipeline may cut; else nothing
        return nn.Dense(self.vocab)(nn.LayerNorm()(x))


def train_step(state, batch):
    def loss_fn(params):
        logits = state.apply_fn(params, batch["ids"])
        return optax.softmax_cross_entropy_with_integer_labels(logits, batch["labels"]).mean()

    # jax.value_and_grad, except that PipeshardParallel cuts this loss into stages.
    loss, grads = alpa_cpp.value_and_grad(loss_fn)(state.params)
    return state.apply_gradients(grads=grads), loss


def main():
    model = GPT()
    ids = jax.random.randint(jax.random.PRNGKey(0), (16, model.seq + 1), 0, model.vocab)
    batch = {"ids": ids[:, :-1], "labels": ids[:, 1:]}
    start = train_state.TrainState.create(apply_fn=model.apply,
                                          params=model.init(jax.random.PRNGKey(1), batch["ids"]),
                                          tx=optax.adamw(1e-3))

    # ZeRO-3 on 4 in-process devices, and PipeshardParallel on them: the planner chooses the
    # stages (cut at the boundaries, or one stage where that is fastest, as for this small model
    # on 4 CPU devices: its plan is printed below), 4 micro-batches a step, the step's AdamW run
    # by each stage on its weights.
    sharded = alpa_cpp.parallelize(train_step, method=alpa_cpp.Zero3Parallel(), cluster="local:4")
    pipelined = alpa_cpp.parallelize(
        train_step, method=alpa_cpp.PipeshardParallel(num_micro_batches=4), cluster="local:4")
    state, pipelined_state = start, start
    for i in range(10):
        state, loss = sharded(state, batch)
        pipelined_state, pipelined_loss = pipelined(pipelined_state, batch)
        print(f"step {i}  loss {float(loss):.4f} (ZeRO-3), {float(pipelined_loss):.4f} (pipeline)")
    print(pipelined.get_executable(pipelined_state, batch).plan.text)

    # Planning only: the same step for 2 hosts of 8 V100s, from shapes alone.
    abstract = jax.tree_util.tree_map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype),
                                      (state, batch))
    planned = alpa_cpp.parallelize(train_step, cluster="p3.16xlarge:2x8")
    executable = planned.get_executable(*abstract)
    print(f"p3.16xlarge:2x8: mesh {executable.mesh_shape}, "
          f"{executable.predicted_step_seconds * 1e3:.2f} ms a step predicted, "
          f"{executable.get_total_allocation_size() / 2**20:.1f} MiB per device")

    # A pipeline of the same step: stages cut at the boundaries, each on a sub-mesh.
    pipelined = alpa_cpp.parallelize(
        train_step, method=alpa_cpp.PipeshardParallel(num_micro_batches=4),
        cluster="p3.16xlarge:2x8")
    print(pipelined.get_executable(*abstract).plan.explain())


if __name__ == "__main__":
    main()
