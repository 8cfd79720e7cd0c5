"""A scanned Flax GPT (nn.scan over 8 blocks: one `while` loop over stacked weights in the HLO, as
current JAX code writes a layer stack) plans for 8 H100s from its shapes alone, with no option
beyond the cluster, and the plan splits the layers' work: its predicted step is at least 5x
faster than on one H100. Before the loop was unrolled on import, it ran replicated and the
prediction was barely faster than one device."""

import jax
import jax.numpy as jnp
import optax
import pytest
from flax.training import train_state

import alpa_cpp
import models
from gpt import GPT

# GPT-2 medium's width, 8 layers, 1024 tokens, batch 16 (about 0.2B parameters with the vocabulary).
SCANNED = GPT(vocab=51200, hidden=1024, heads=16, layers=8, seq=1024, scan=True)
BATCH = 16


def abstract_step_arguments():
    ids = jax.ShapeDtypeStruct((BATCH, SCANNED.seq), jnp.int32)

    def create():
        params = SCANNED.init(jax.random.PRNGKey(0), jnp.zeros((BATCH, SCANNED.seq), jnp.int32))
        return train_state.TrainState.create(apply_fn=SCANNED.apply, params=params,
                                             tx=optax.adam(models.LEARNING_RATE))

    return jax.eval_shape(create), {"ids": ids, "labels": ids}


@pytest.fixture(scope="module")
def predicted_steps():
    state, batch = abstract_step_arguments()
    seconds = {}
    for cluster in ("dgx-h100:1x1", "dgx-h100:1x8"):
        step = alpa_cpp.parallelize(models.lm_train_step, cluster=cluster)
        executable = step.get_executable(state, batch)
        assert " while(" in executable.get_hlo_text("lowered")
        seconds[cluster] = executable.predicted_step_seconds
    return seconds


def test_eight_h100s_are_predicted_at_least_5x_faster_than_one(predicted_steps):
    speedup = predicted_steps["dgx-h100:1x1"] / predicted_steps["dgx-h100:1x8"]
    assert speedup >= 5, f"{speedup:.2f}x"
