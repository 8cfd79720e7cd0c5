"""Bad input reaches Python as an exception carrying the C++ message, never a crash."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import alpa_cpp
import models


def test_a_cluster_that_does_not_parse_says_what_is_accepted():
    with pytest.raises(ValueError, match="local"):
        alpa_cpp.Cluster("local:zero")


def test_an_unknown_method_option_is_a_type_error():
    with pytest.raises(TypeError, match="unexpected keyword"):
        alpa_cpp.ShardParallel(mesh=(2, 2))  # pylint: disable=unexpected-keyword-arg


def test_something_not_a_method_is_refused():
    with pytest.raises(TypeError, match="method must be one of"):
        alpa_cpp.parallelize(models.mse_train_step, method="data")


def test_pipeshard_without_alpa_cpp_grad_says_to_use_it():
    state, batches = models.mlp_state_and_batches(1)
    step = alpa_cpp.parallelize(models.mse_train_step, method=alpa_cpp.PipeshardParallel(2))
    with pytest.raises(ValueError, match="alpa_cpp.grad"):
        step.get_executable(state, batches[0])


def test_zero_without_donated_state_names_what_the_step_lacks():
    state, batches = models.mlp_state_and_batches(1)
    step = alpa_cpp.parallelize(models.mse_train_step, method=alpa_cpp.Zero3Parallel(),
                                donate_argnums=())
    with pytest.raises(ValueError, match="input_output_alias"):
        step(state, batches[0])


def test_a_function_jax_cannot_lower_raises_jax_error():
    def bad_step(state, batch):
        return state, jnp.dot(batch["x"], jnp.ones((3, 3)))  # [32,16] x [3,3]

    state, batches = models.mlp_state_and_batches(1)
    with pytest.raises(TypeError):
        alpa_cpp.parallelize(bad_step)(state, batches[0])


def test_a_module_that_does_not_parse_names_the_place():
    with pytest.raises(ValueError, match="bad.hlo:2:26: unknown opcode"):
        alpa_cpp.Module("HloModule m\nENTRY e { ROOT x = f32[] nonsense() }", "bad.hlo")


def test_an_argument_of_the_wrong_shape_names_the_parameter():
    state, batches = models.mlp_state_and_batches(1)
    executable = alpa_cpp.parallelize(models.mse_train_step, method=alpa_cpp.DataParallel()
                                      ).get_executable(state, batches[0])
    leaves = [np.asarray(jnp.asarray(x)) for x in jax.tree_util.tree_leaves((state, batches[0]))]
    leaves[-1] = np.zeros((3, 3), np.float32)
    with pytest.raises(ValueError, match=r"argument \d+ \(parameter \d+, %batch"):
        executable.core.run(leaves)
