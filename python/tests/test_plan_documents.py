"""An executable's plan document is the one `alpa plan` writes for the step JAX lowered, and
reads back through `alpa explain` and alpa_cpp.Plan alike."""

import json
import os
import subprocess

import pytest

import alpa_cpp
import models


def alpa(*args):
    completed = subprocess.run([os.environ["ALPA_CLI"], *map(str, args)], capture_output=True,
                               text=True, check=False)
    assert completed.returncode == 0, completed.stderr
    return completed.stdout


@pytest.mark.parametrize("method, name", [(alpa_cpp.Zero3Parallel(), "zero3"),
                                          (alpa_cpp.ShardParallel(), "shard")])
def test_the_plan_is_the_one_alpa_plan_makes_for_the_lowered_step(method, name, tmp_path):
    state, batches = models.mlp_state_and_batches(1)
    step = alpa_cpp.parallelize(models.mse_train_step, method=method, cluster="local:4")
    executable = step.get_executable(state, batches[0])
    step_path = tmp_path / "step.hlo"
    step_path.write_text(executable.get_hlo_text("lowered"))
    cli = json.loads(alpa("plan", step_path, "--cluster", "local:4", "--method", name, "--json"))
    ours = executable.plan.document
    for key in ("format", "version", "cluster", "method", "mesh", "batch_axis",
                "num_micro_batches", "pins", "estimate", "shardings", "strategies"):
        assert ours[key] == cli[key], key
    assert ours["model"]["fingerprint"] == cli["model"]["fingerprint"]
    assert ours["model"]["name"] == "mse_train_step"


def test_a_saved_plan_explains_as_alpa_explain_does(tmp_path):
    state, batches = models.mlp_state_and_batches(1)
    step = alpa_cpp.parallelize(models.mse_train_step, method=alpa_cpp.DataParallel(),
                                cluster="local:4")
    plan = step.get_executable(state, batches[0]).plan
    path = tmp_path / "plan.json"
    plan.save(path)
    assert alpa("explain", path) == plan.explain()
    assert json.loads(alpa("explain", path, "--json")) == plan.explanation()
    assert alpa_cpp.Plan.load(path).document == plan.document
    assert "data" in repr(plan)


def test_a_document_that_is_not_a_plan_is_a_value_error():
    with pytest.raises(ValueError, match="not a plan document"):
        alpa_cpp.Plan('{"format": "something else"}').explain()
    with pytest.raises(ValueError, match="version 7"):
        alpa_cpp.Plan('{"format": "alpa-plan", "version": 7}').explain()
