"""PipeshardParallel from Python: the example GPT's loss, cut at its mark_pipeline_boundary()
markers, planned for a pipeline with the step's own optimizer; the plan is the one `alpa plan`
makes for the same loss and update texts. Pipelined steps run as JAX's do."""

import json
import os
import subprocess

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from flax.training import train_state

import alpa_cpp
import models

CLUSTER = "p3.16xlarge:1x8"
MICRO_BATCHES = 4


def abstract(tree):
    return jax.eval_shape(lambda t: t, tree)


@pytest.fixture(scope="module")
def gpt_plan():
    state, batches = models.gpt_state_and_batches(1, batch=16)
    step = alpa_cpp.parallelize(
        models.lm_train_step, cluster=CLUSTER,
        method=alpa_cpp.PipeshardParallel(num_micro_batches=MICRO_BATCHES))
    return step.get_executable(*abstract((state, batches[0])))


def test_the_loss_is_cut_at_the_markers_into_the_models_layers(gpt_plan):
    plan = gpt_plan.plan.document
    assert plan["method"] == "pipeshard"
    assert plan["num_micro_batches"] == MICRO_BATCHES
    assert plan["micro_batch_size"] == 16 // MICRO_BATCHES
    assert plan["num_layers"] == models.SMALL_GPT["layers"]
    text = gpt_plan.get_hlo_text()
    assert text.count('custom_call_target="pipeline_marker"') >= models.SMALL_GPT["layers"] - 1
    covered = [layer for stage in plan["stages"]
               for layer in range(stage["layers"][0], stage["layers"][1] + 1)]
    assert covered == list(range(models.SMALL_GPT["layers"]))


def test_the_plan_is_the_one_alpa_plan_makes_for_the_dumped_loss(gpt_plan, tmp_path):
    loss_path = tmp_path / "loss.hlo"
    loss_path.write_text(gpt_plan.get_hlo_text())
    update_path = tmp_path / "update.hlo"  # the step's optax Adam, which the plan prices
    update_path.write_text(gpt_plan.get_hlo_text("update"))
    weights = len(jax.tree_util.tree_leaves(models.gpt_state_and_batches(1)[0].params))
    completed = subprocess.run(
        [os.environ["ALPA_CLI"], "plan", str(loss_path), "--weights", f"0-{weights - 1}",
         "--update-program", str(update_path), "--method", "pipeshard", "--micro-batches",
         str(MICRO_BATCHES), "--cluster", CLUSTER, "--json"],
        capture_output=True, text=True, check=False)
    assert completed.returncode == 0, completed.stderr
    cli = json.loads(completed.stdout)
    ours = gpt_plan.plan.document
    for key in ("cluster", "cluster_shape", "schedule", "num_chunks", "num_micro_batches",
                "micro_batch_size", "num_layers", "stages", "estimate", "alternatives"):
        assert ours[key] == cli[key], key
    assert ours["model"]["fingerprint"] == cli["model"]["fingerprint"]


def test_the_plan_explains_itself_and_renders_its_report(gpt_plan, tmp_path):
    explanation = gpt_plan.explain()
    assert "bottleneck" in explanation and "alternatives" in explanation
    assert gpt_plan.plan.explanation()["kind"] == "pipeline"
    html = gpt_plan.plan.report_html()
    assert html.startswith("<!DOCTYPE html>") and "<svg" in html
    paths = gpt_plan.dump_debug_info(tmp_path)
    assert sorted(os.path.basename(p) for p in paths) == [
        "train_step.loss.hlo", "train_step.plan.html", "train_step.plan.json",
        "train_step.update.hlo"]
    saved = alpa_cpp.Plan.load(tmp_path / "train_step.plan.json")
    assert saved.document == gpt_plan.plan.document
    explained = subprocess.run([os.environ["ALPA_CLI"], "explain",
                                str(tmp_path / "train_step.plan.json")],
                               capture_output=True, text=True, check=False)
    assert explained.returncode == 0, explained.stderr
    assert explained.stdout == explanation


def test_the_dp_result_has_the_chosen_stages_and_every_candidate_simulated(gpt_plan):
    result = gpt_plan.get_last_dp_result()
    stages = gpt_plan.plan.stages
    layers = [layer for ids in result["forward_stage_layer_ids"] for layer in ids]
    assert layers == list(range(models.SMALL_GPT["layers"]))
    assert result["submesh_shapes"] == [tuple(s["submesh"]) for s in stages]
    assert len(result["autosharding_option_dicts"]) == len(stages)
    candidates = result["candidates"]
    assert candidates and candidates[0]["source"] == "stage DP"
    assert all(c["dp_objective_s"] is not None for c in candidates if c["source"] == "stage DP")
    # The plan is the best candidate simulated, and one of them has its stages.
    fitting = [c for c in candidates if c["step_time_s"] is not None]
    best = min(c["step_time_s"] for c in fitting)
    assert best == gpt_plan.plan.document["estimate"]["step_time_s"]
    chosen = [(s["layers"], s["submesh"], s["logical_mesh"]) for s in stages]
    assert any([(s["layers"], s["submesh"], s["logical_mesh"]) for s in c["stages"]] == chosen
               for c in fitting if c["step_time_s"] == best)


def test_planning_twice_gives_the_same_document(gpt_plan):
    state, batches = models.gpt_state_and_batches(1, batch=16)
    again = alpa_cpp.parallelize(
        models.lm_train_step, cluster=CLUSTER,
        method=alpa_cpp.PipeshardParallel(num_micro_batches=MICRO_BATCHES))
    document = again.get_executable(*abstract((state, batches[0]))).plan.document
    for key in ("stages", "estimate", "alternatives"):
        assert document[key] == gpt_plan.plan.document[key]


class Wide(nn.Module):
    @nn.compact
    def __call__(self, x):
        for _ in range(4):
            x = nn.relu(nn.Dense(256)(x))
        return nn.Dense(8)(x)


def wide_train_step(state, batch):
    def loss_fn(params):
        return jnp.mean((state.apply_fn(params, batch["x"]) - batch["y"]) ** 2)

    grads = alpa_cpp.grad(loss_fn)(state.params)
    return state.apply_gradients(grads=grads)


def wide_state_and_batch():
    model = Wide()
    x = jnp.ones((64, 32))
    state = train_state.TrainState.create(apply_fn=model.apply,
                                          params=model.init(jax.random.PRNGKey(0), x),
                                          tx=optax.sgd(0.1))
    return state, {"x": x, "y": jnp.ones((64, 8))}


def test_auto_layers_cut_a_loss_without_markers():
    state, batch = wide_state_and_batch()
    step = alpa_cpp.parallelize(
        wide_train_step, cluster=CLUSTER,
        method=alpa_cpp.PipeshardParallel(num_micro_batches=2, optimizer="sgd",
                                          layer_option=alpa_cpp.AutoLayerOption(layer_num=2)))
    plan = step.get_executable(*abstract((state, batch))).plan.document
    assert plan["num_layers"] == 2


def pipelined_wide_step(optimizer="sgd"):
    return alpa_cpp.parallelize(
        wide_train_step, cluster="local:4",
        method=alpa_cpp.PipeshardParallel(num_micro_batches=2, optimizer=optimizer,
                                          layer_option=alpa_cpp.AutoLayerOption(layer_num=2)))


def test_a_pipelined_step_trains_as_jax_does_and_keeps_its_state_on_the_devices(tmp_path):
    state, batch = wide_state_and_batch()
    batch = {"x": jax.random.normal(jax.random.PRNGKey(1), (64, 32)),
             "y": jax.random.normal(jax.random.PRNGKey(2), (64, 8))}
    want = state
    for _ in range(3):
        want = jax.jit(wide_train_step)(want, batch)
    step = pipelined_wide_step()
    got = state
    for _ in range(3):
        got = step(got, batch)
    leaves = jax.tree_util.tree_leaves(got.params)
    assert all(isinstance(leaf, alpa_cpp.DistributedArray) and leaf.sharding.startswith("stage ")
               for leaf in leaves)
    assert int(got.step) == 3
    for w, g in zip(jax.tree_util.tree_leaves(want.params), leaves):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-4, atol=1e-6)
    executable = step.get_executable(got, batch)
    memory = executable.memory_report()
    assert len(memory["measured_peak_bytes_per_device"]) == 4
    assert len(memory["predicted_peak_bytes_per_stage"]) == len(executable.plan.stages)
    # The step's optimizer as the stages run it: apply(W..., G..., S...), dumped with the plan.
    assert executable.get_hlo_text("update").startswith("HloModule")
    paths = executable.dump_debug_info(tmp_path)
    assert "wide_train_step.update.hlo" in [os.path.basename(p) for p in paths]


def test_donated_state_is_gone_and_host_state_is_placed_again():
    state, batch = wide_state_and_batch()
    step = pipelined_wide_step()
    first = step(state, batch)
    second = step(first, batch)
    with pytest.raises(alpa_cpp.DonatedArrayError):
        np.asarray(jax.tree_util.tree_leaves(first.params)[0])
    assert int(second.step) == 2
    # Host values (here the first state again) are placed anew, replacing the devices' values:
    # the same step from the start.
    again = step(state, batch)
    for a, b in zip(jax.tree_util.tree_leaves(jax.jit(wide_train_step)(state, batch).params),
                    jax.tree_util.tree_leaves(again.params)):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-4, atol=1e-6)
    assert int(again.step) == 1


def test_a_saved_plan_runs_its_own_stages_and_one_for_another_cluster_is_refused(tmp_path):
    state, _ = wide_state_and_batch()
    batch = {"x": jax.random.normal(jax.random.PRNGKey(1), (64, 32)),
             "y": jax.random.normal(jax.random.PRNGKey(2), (64, 8))}
    searched = pipelined_wide_step().get_executable(*abstract((state, batch)))
    # The searched plan's document with stages of its own, which the search does not consider:
    # one device, then three.
    document = dict(searched.plan.document, schedule="1f1b", num_chunks=1, stages=[
        {"layers": [0, 0], "submesh": [1, 1], "logical_mesh": [1, 1]},
        {"layers": [1, 1], "submesh": [1, 3], "logical_mesh": [1, 3]}])
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(document))

    def step_with_plan(cluster):
        return alpa_cpp.parallelize(
            wide_train_step, cluster=cluster,
            method=alpa_cpp.PipeshardParallel(
                num_micro_batches=2, optimizer="sgd", plan=path,
                layer_option=alpa_cpp.AutoLayerOption(layer_num=2)))

    step = step_with_plan("local:4")
    stages = step.get_executable(state, batch).plan.stages
    assert [s["submesh"] for s in stages] == [[1, 1], [1, 3]]
    assert sorted(d for s in stages for d in s["devices"]) == [0, 1, 2, 3]
    got = step(state, batch)
    want = jax.jit(wide_train_step)(state, batch)
    for w, g in zip(jax.tree_util.tree_leaves(want.params), jax.tree_util.tree_leaves(got.params)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-4, atol=1e-6)
    with pytest.raises(ValueError, match="cluster local:4 in the plan, local:2 here"):
        step_with_plan("local:2").get_executable(state, batch)
    with pytest.raises(ValueError, match="No such file"):
        alpa_cpp.parallelize(
            wide_train_step, cluster="local:4",
            method=alpa_cpp.PipeshardParallel(plan=tmp_path / "missing.json"),
        ).get_executable(state, batch)


def test_a_loss_with_auxiliary_outputs_plans_but_does_not_run():
    def step_with_aux(state, batch):
        def loss_fn(params):
            error = state.apply_fn(params, batch["x"]) - batch["y"]
            return jnp.mean(error ** 2), jnp.max(error)

        grads, _ = alpa_cpp.grad(loss_fn, has_aux=True)(state.params)
        return state.apply_gradients(grads=grads)

    state, batch = wide_state_and_batch()
    step = alpa_cpp.parallelize(
        step_with_aux, cluster="local:4",
        method=alpa_cpp.PipeshardParallel(num_micro_batches=2, optimizer="sgd",
                                          layer_option=alpa_cpp.AutoLayerOption(layer_num=2)))
    assert step.get_executable(*abstract((state, batch))).plan.document["num_layers"] == 2
    with pytest.raises(ValueError, match="has_aux"):
        step(state, batch)


def test_an_optimizer_that_couples_the_stages_is_refused_naming_what_couples():
    model = Wide()
    x = jnp.ones((64, 32))
    state = train_state.TrainState.create(
        apply_fn=model.apply, params=model.init(jax.random.PRNGKey(0), x),
        tx=optax.chain(optax.clip_by_global_norm(1.0), optax.sgd(0.1)))
    with pytest.raises(ValueError, match="clip_by_global_norm"):
        pipelined_wide_step()(state, {"x": x, "y": jnp.ones((64, 8))})


def test_a_step_returning_more_than_its_state_and_loss_says_what_to_return():
    def step_with_metric(state, batch):
        def loss_fn(params):
            return jnp.mean((state.apply_fn(params, batch["x"]) - batch["y"]) ** 2)

        loss, grads = alpa_cpp.value_and_grad(loss_fn)(state.params)
        norm = optax.tree.norm(grads)
        return state.apply_gradients(grads=grads), loss, norm

    state, batch = wide_state_and_batch()
    step = alpa_cpp.parallelize(
        step_with_metric, cluster="local:4",
        method=alpa_cpp.PipeshardParallel(num_micro_batches=2, optimizer="sgd",
                                          layer_option=alpa_cpp.AutoLayerOption(layer_num=2)))
    with pytest.raises(ValueError, match="neither its new state nor the loss"):
        step(state, batch)


def test_a_batch_that_does_not_split_into_micro_batches_names_the_leaf():
    state, batch = wide_state_and_batch()
    step = alpa_cpp.parallelize(wide_train_step, cluster=CLUSTER,
                                method=alpa_cpp.PipeshardParallel(num_micro_batches=3))
    with pytest.raises(ValueError, match=r"batch leaf 1\['x'\] of shape \(64, 32\)"):
        step.get_executable(*abstract((state, batch)))


def test_bad_options_name_the_option():
    state, batch = wide_state_and_batch()
    layers = alpa_cpp.AutoLayerOption(layer_num=2)
    for method, message in [
            (alpa_cpp.PipeshardParallel(2, layers, pipeline_schedule="zigzag"), "zigzag"),
            (alpa_cpp.PipeshardParallel(2, layers, optimizer="lion"), "lion"),
            (alpa_cpp.PipeshardParallel(2, layers, submesh_space="odd"), "submesh_space"),
            (alpa_cpp.PipeshardParallel(0, layers), "num_micro_batches")]:
        step = alpa_cpp.parallelize(wide_train_step, cluster=CLUSTER, method=method)
        with pytest.raises(ValueError, match=message):
            step.get_executable(*abstract((state, batch)))


def test_a_loss_without_layers_says_how_to_mark_them():
    state, batch = wide_state_and_batch()
    step = alpa_cpp.parallelize(wide_train_step, cluster=CLUSTER,
                                method=alpa_cpp.PipeshardParallel(num_micro_batches=2))
    with pytest.raises(ValueError, match="AutoLayerOption"):
        step.get_executable(*abstract((state, batch)))


def test_a_boundary_inside_a_nested_jit_is_refused():
    def step_fn(params, batch):
        @jax.jit
        def inner(h):
            alpa_cpp.mark_pipeline_boundary()
            return jnp.tanh(h)

        def loss_fn(p):
            return jnp.mean(inner(batch @ p))

        return alpa_cpp.grad(loss_fn)(params)

    step = alpa_cpp.parallelize(step_fn, cluster=CLUSTER,
                                method=alpa_cpp.PipeshardParallel(2))
    with pytest.raises(ValueError, match="nested"):
        step.get_executable(jax.ShapeDtypeStruct((8, 4), jnp.float32),
                            jax.ShapeDtypeStruct((16, 8), jnp.float32))


def test_grad_is_jax_grad_outside_a_pipeline():
    state, batch = wide_state_and_batch()

    def loss_fn(params):
        return jnp.mean((state.apply_fn(params, batch["x"]) - batch["y"]) ** 2)

    ours = alpa_cpp.value_and_grad(loss_fn)(state.params)
    theirs = jax.value_and_grad(loss_fn)(state.params)
    assert jax.tree_util.tree_all(jax.tree_util.tree_map(jnp.array_equal, ours, theirs))


def test_a_scanned_layer_stack_is_unrolled_into_layers_a_pipeline_cuts():
    state, batches = models.gpt_state_and_batches(1, batch=16, scan=True)
    step = alpa_cpp.parallelize(
        models.lm_train_step, cluster=CLUSTER,
        method=alpa_cpp.PipeshardParallel(num_micro_batches=MICRO_BATCHES,
                                          layer_option=alpa_cpp.AutoLayerOption(layer_num=4)))
    executable = step.get_executable(*abstract((state, batches[0])))
    assert " while(" in executable.get_hlo_text()  # the loss as JAX lowered it: one loop
    plan = executable.plan.document
    assert plan["num_layers"] == 4
    covered = [layer for stage in plan["stages"]
               for layer in range(stage["layers"][0], stage["layers"][1] + 1)]
    assert covered == list(range(4))
