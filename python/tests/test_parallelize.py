"""alpa_cpp.parallelize on Flax/optax train steps: ten steps on 4 in-process devices give JAX's
own losses and parameters (JAX on one CPU device), under each single-stage method and, for the
GPT, a pipeline."""

import functools

import flax.linen
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from flax.training import train_state

import alpa_cpp
import models

STEPS = 10
RELATIVE = 1e-4  # of the loss
# Of each parameter array's largest magnitude after the ten Adam steps. Our matmuls (oneDNN) and
# JAX's sum in different orders, and Adam's m / sqrt(v) scales a weight's rounding up where its
# gradient is small: on an AMD EPYC with AVX-512 oneDNN's AVX-512 kernels left the scanned GPT's
# first Dense kernel 1.13e-4 of its largest apart from JAX's under ShardParallel (its AVX2
# kernels, ONEDNN_MAX_CPU_ISA=AVX2, 1e-4 or less), so the bound is twice the losses'.
PARAMETER_RELATIVE = 2e-4
LEARNING_RATE = models.LEARNING_RATE

# Attention's key bias has no gradient: softmax is invariant to a constant added to a row of
# scores, and q.b_k is one. What Adam does with it is rounding noise scaled up to the learning
# rate (m/sqrt(v) of noise is about +-1), in JAX as in us, so no two runs agree on its value;
# both must only keep it within a step of lr per step of where it started.
NO_GRADIENT = "['MultiHeadDotProductAttention_0']['key']['bias']"

METHODS = [alpa_cpp.ShardParallel(), alpa_cpp.DataParallel(), alpa_cpp.Zero3Parallel()]


def train_with_jax(step, state, batches):
    jitted = jax.jit(step)
    losses = []
    for batch in batches:
        state, loss = jitted(state, batch)
        losses.append(float(loss))
    return state, losses


def train_with_alpa(step, state, batches, method):
    parallel = alpa_cpp.parallelize(step, method=method, cluster="local:4")
    losses = []
    for batch in batches:
        state, loss = parallel(state, batch)
        losses.append(float(loss))
    return state, losses, parallel.get_executable(state, batches[0])


def assert_same_training(start, want_state, want_losses, got_state, got_losses):
    np.testing.assert_allclose(got_losses, want_losses, rtol=RELATIVE)
    want_leaves = jax.tree_util.tree_leaves_with_path(want_state.params)
    got_leaves = jax.tree_util.tree_leaves(got_state.params)
    start_leaves = jax.tree_util.tree_leaves(start.params)
    assert len(got_leaves) == len(want_leaves)
    for (path, want), got, first in zip(want_leaves, got_leaves, start_leaves):
        name = jax.tree_util.keystr(path)
        want, got, first = np.asarray(want), np.asarray(got), np.asarray(first)
        assert got.shape == want.shape and got.dtype == want.dtype, name
        if name.endswith(NO_GRADIENT):
            bound = STEPS * LEARNING_RATE * (1 + RELATIVE)
            assert np.max(np.abs(want - first)) <= bound and np.max(np.abs(got - first)) <= bound
            continue
        worst = float(np.max(np.abs(got - want)))
        assert worst <= PARAMETER_RELATIVE * float(np.max(np.abs(want))), (
            f"{name}: |diff| {worst:.3g}")


@pytest.mark.parametrize("method", METHODS, ids=lambda m: type(m).__name__)
def test_mlp_trains_as_jax_does(method):
    state, batches = models.mlp_state_and_batches(STEPS)
    want_state, want_losses = train_with_jax(models.mse_train_step, state, batches)
    got_state, got_losses, executable = train_with_alpa(models.mse_train_step, state, batches,
                                                        method)
    assert_same_training(state, want_state, want_losses, got_state, got_losses)
    assert executable.core.device_count == 4
    assert int(got_state.step) == STEPS


# The example GPT marks its layers; a pipeline of its 4 layers over the 4 devices runs its optax
# Adam on the stages (2 micro-batches a step).
@pytest.mark.parametrize("method", METHODS + [alpa_cpp.PipeshardParallel(num_micro_batches=2)],
                         ids=lambda m: type(m).__name__)
def test_gpt_trains_as_jax_does(method):
    state, batches = models.gpt_state_and_batches(STEPS)
    want_state, want_losses = train_with_jax(models.lm_train_step, state, batches)
    got_state, got_losses, _ = train_with_alpa(models.lm_train_step, state, batches, method)
    assert_same_training(state, want_state, want_losses, got_state, got_losses)


def test_bfloat16_weights_cross_as_their_bits():
    class HalfMLP(flax.linen.Module):
        @flax.linen.compact
        def __call__(self, x):
            dense = functools.partial(flax.linen.Dense, dtype=jnp.bfloat16,
                                      param_dtype=jnp.bfloat16)
            return dense(8)(flax.linen.relu(dense(32)(x)))

    model = HalfMLP()
    x = jax.random.normal(jax.random.PRNGKey(0), (32, 16)).astype(jnp.bfloat16)
    batch = {"x": x, "y": jnp.ones((32, 8), jnp.bfloat16)}
    state = train_state.TrainState.create(apply_fn=model.apply,
                                          params=model.init(jax.random.PRNGKey(1), x),
                                          tx=optax.sgd(1e-2))
    want_state, want_losses = train_with_jax(models.mse_train_step, state, [batch] * 3)
    got_state, got_losses, _ = train_with_alpa(models.mse_train_step, state, [batch] * 3,
                                               alpa_cpp.DataParallel())
    np.testing.assert_allclose(got_losses, want_losses, rtol=1e-2)  # bf16: 8 bits of mantissa
    kernel = got_state.params["params"]["Dense_0"]["kernel"]
    assert kernel.dtype == jnp.bfloat16 and np.asarray(kernel).dtype == jnp.bfloat16
    want = np.asarray(want_state.params["params"]["Dense_0"]["kernel"], np.float32)
    np.testing.assert_allclose(np.asarray(kernel, np.float32), want, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("method", [alpa_cpp.ShardParallel(), alpa_cpp.Zero3Parallel()],
                         ids=lambda m: type(m).__name__)
def test_scanned_gpt_trains_as_jax_does(method):
    """The blocks as one nn.scan (a while loop over stacked weights in the HLO): unrolled on
    import, the step plans and trains like the unrolled model, with JAX's losses."""
    state, batches = models.gpt_state_and_batches(STEPS, scan=True)
    want_state, want_losses = train_with_jax(models.lm_train_step, state, batches)
    got_state, got_losses, executable = train_with_alpa(models.lm_train_step, state, batches,
                                                        method)
    assert_same_training(state, want_state, want_losses, got_state, got_losses)
    assert " while(" in executable.get_hlo_text("lowered")
    assert " while(" not in executable.get_hlo_text("partitioned")
