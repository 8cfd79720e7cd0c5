"""Planning time of a 1.3B-parameter Flax GPT from the Python call (issue 33's target: under 30 s
for p3.16xlarge:2x8), from abstract arguments alone: nothing is allocated, no weight is held.

    PYTHONPATH=build/python .venv/bin/python bench/python/plan_large_gpt.py [--method shard|pipeshard]

Prints the wall time of get_executable and the plan's own compile breakdown. The model is
examples/jax/gpt.py's GPT at GPT-3 1.3B's shape (24 layers, hidden 2048, 16 heads, seq 1024,
vocabulary 51200), trained with optax's AdamW.
"""

import argparse
import os
import sys
import time

import jax
import optax
from flax.training import train_state

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples", "jax"))
import alpa_cpp  # noqa: E402
from gpt import GPT, train_step  # noqa: E402

CONFIG = {"vocab": 51200, "hidden": 2048, "heads": 16, "layers": 24, "seq": 1024}


def abstract_state_and_batch(batch):
    model = GPT(**CONFIG)
    ids = jax.ShapeDtypeStruct((batch, CONFIG["seq"]), jax.numpy.int32)
    params = jax.eval_shape(model.init, jax.random.PRNGKey(0), ids)
    state = jax.eval_shape(lambda p: train_state.TrainState.create(
        apply_fn=model.apply, params=p, tx=optax.adamw(1e-4)), params)
    return state, {"ids": ids, "labels": ids}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--method", choices=["shard", "pipeshard"], default="shard")
    parser.add_argument("--cluster", default="p3.16xlarge:2x8")
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--micro-batches", type=int, default=8)
    args = parser.parse_args()
    state, batch = abstract_state_and_batch(args.batch)
    weights = sum(x.size for x in jax.tree_util.tree_leaves(state.params))
    method = (alpa_cpp.ShardParallel() if args.method == "shard" else
              alpa_cpp.PipeshardParallel(num_micro_batches=args.micro_batches, optimizer="adamw"))
    step = alpa_cpp.parallelize(train_step, method=method, cluster=args.cluster)
    start = time.perf_counter()
    executable = step.get_executable(state, batch)
    seconds = time.perf_counter() - start
    document = executable.plan.document
    print(f"GPT {weights / 1e9:.2f}B parameters, batch {args.batch}, {args.method} on "
          f"{args.cluster}: get_executable {seconds:.1f} s "
          f"(plan's own compile {document['compile']['total_s']:.1f} s), "
          f"predicted step {document['estimate']['step_time_s']:.3f} s")
    print(executable.plan.explain())


if __name__ == "__main__":
    main()
