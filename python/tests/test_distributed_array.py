"""The carried state stays on the devices between calls (DistributedArray), and a call with other
arguments is planned again."""

import json

import jax
import numpy as np
import pytest

import alpa_cpp
import models


def make_step():
    return alpa_cpp.parallelize(models.mse_train_step, method=alpa_cpp.Zero3Parallel(),
                                cluster="local:4")


def test_the_carried_state_comes_back_as_distributed_arrays_and_goes_in_without_a_copy():
    state, batches = models.mlp_state_and_batches(2)
    step = make_step()
    state1, loss = step(state, batches[0])
    assert isinstance(loss, np.ndarray) and loss.shape == ()
    kernel = state1.params["params"]["Dense_0"]["kernel"]
    assert isinstance(kernel, alpa_cpp.DistributedArray)
    assert kernel.shape == (16, 64) and kernel.dtype == np.float32
    assert "S0" in kernel.sharding  # ZeRO-3 splits the weights
    executable = step.get_executable(state1, batches[1])
    leaves = jax.tree_util.tree_leaves((state1, batches[1]))
    assert executable._carried_state(leaves) is executable._state  # pylint: disable=protected-access
    before = np.asarray(kernel).copy()
    state2, _ = step(state1, batches[1])
    assert not np.array_equal(np.asarray(state2.params["params"]["Dense_0"]["kernel"]), before)
    with pytest.raises(alpa_cpp.DonatedArrayError, match="donated to a later step"):
        np.asarray(kernel)


def test_host_values_handed_in_are_placed_again():
    state, batches = models.mlp_state_and_batches(2)
    step = make_step()
    state1, _ = step(state, batches[0])
    on_host = jax.tree_util.tree_map(np.asarray, state1)
    _, from_devices = step(state1, batches[1])
    _, from_host = step(on_host, batches[1])
    assert float(from_host) == float(from_devices)


def test_other_shapes_are_planned_again_with_a_warning():
    state, batches = models.mlp_state_and_batches(1)
    step = make_step()
    step(state, batches[0])
    half = jax.tree_util.tree_map(lambda x: x[:16], batches[0])
    with pytest.warns(UserWarning, match="planning it again"):
        _, loss = step(state, half)
    assert np.isfinite(float(loss))


def test_the_executable_reports_its_plan(tmp_path):
    state, batches = models.mlp_state_and_batches(1)
    step = make_step()
    step(state, batches[0])
    executable = step.get_executable(state, batches[0])
    assert executable.get_total_allocation_size() > 0
    report = executable.memory_report()
    assert report["measured_peak_bytes_per_device"] > 0
    assert "all-gather" in executable.get_hlo_text()  # ZeRO-3 gathers the weights
    assert "HloModule" in executable.get_hlo_text("lowered")
    written = executable.dump_debug_info(tmp_path)
    assert sorted(p.rsplit(".", 2)[-2] for p in written) == ["ilp", "lowered", "partitioned",
                                                              "plan", "summary"]
    plan = alpa_cpp.Plan.load(next(p for p in written if p.endswith(".plan.json")))
    assert plan.document["method"] == "zero3" and plan.document["batch_axis"] == 0
    assert plan.document["mesh"] == [4]
    assert "step time" in executable.explain() and "step time" in executable.plan.text
    with open(next(p for p in written if p.endswith(".ilp.json")), encoding="utf-8") as ilp:
        problem = json.load(ilp)
    assert len(problem["problem"]["nodes"]["intervals"]) > 10


def test_a_function_without_state_runs_under_shard_parallel():
    def predict(params, x):
        return models.MLP().apply(params, x)

    state, batches = models.mlp_state_and_batches(1)
    parallel = alpa_cpp.parallelize(predict, donate_argnums=(), cluster="local:4")
    got = parallel(state.params, batches[0]["x"])
    want = jax.jit(predict)(state.params, batches[0]["x"])
    assert isinstance(got, np.ndarray)
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-5, atol=1e-6)
    assert not parallel.get_executable(state.params, batches[0]["x"]).core.carried_parameters


def test_a_traced_step_has_every_devices_timeline(tmp_path):
    state, batches = models.mlp_state_and_batches(2)
    step = make_step()
    state, _ = step(state, batches[0])
    executable = step.get_executable(state, batches[1])
    assert executable.get_trace() is None
    executable.record_trace = True
    step(state, batches[1])
    events = json.loads(executable.get_trace())["traceEvents"]
    assert {e["tid"] for e in events if e.get("ph") == "X"} == {0, 1, 2, 3}
    assert any(e.get("cat") == "collective" for e in events)  # ZeRO-3's gathers
    assert any(p.endswith(".trace.json") for p in executable.dump_debug_info(tmp_path))
