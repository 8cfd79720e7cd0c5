"""The zoo's GPT training step (src/models/gpt.h) in JAX, run by XLA:CPU: a peer of `alpa run`.

The same network as bench/pytorch/gpt_step.py: token + learned position embedding; post-LN blocks
y = LN1(x + Attn(x)), LN2(y + W2 gelu_tanh(W1 y + b1) + b2) with causal multi-head attention
from one fused qkv dense; LM head tied to the token embedding plus an output bias; mean
cross-entropy in f32; Adam (optax). The step is one jit-compiled function whose parameters and
optimizer state are donated, as a JAX user writes it. The batch is the zoo's bigram pattern:
token (a_r + 3 s) mod vocab, label token + 3. With --dtype bf16 the step computes in bf16 from f32
master weights (cast at the start of the loss) with the loss, gradients' update and optimizer
state in f32, as alpa's bf16 step does.

Prints one JSON object: {"threads", "config", "jax", "steps": [{"step", "loss", "time_s"}]}.
bench/peers/compare.sh runs it beside alpa, with the project's venv (scripts/python_env.sh).
"""
import argparse
import json
import math
import os
import time


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    for name, default in [("layers", 2), ("hidden", 256), ("heads", 4), ("seq", 128),
                          ("vocab", 1024), ("batch", 8), ("steps", 5), ("threads", 2)]:
        parser.add_argument("--" + name, type=int, default=default)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--dtype", choices=["f32", "bf16"], default="f32")
    return parser.parse_args()


ARGS = parse_args()
# XLA:CPU sizes its thread pools from the CPUs the process may run on: pin it to the cores alpa
# is given, before jax starts.
os.sched_setaffinity(0, set(range(ARGS.threads)))

import jax  # noqa: E402  (after XLA_FLAGS and the affinity)
import jax.numpy as jnp  # noqa: E402
import optax  # noqa: E402


def init(key, layers, hidden, seq, vocab):
    keys = iter(jax.random.split(key, 4 + 4 * layers))

    def dense(fan_in, fan_out):
        w = jax.random.normal(next(keys), (fan_in, fan_out)) / math.sqrt(fan_in)
        return {"w": w, "b": jnp.zeros((fan_out,))}

    def norm():
        return {"g": jnp.ones((hidden,)), "b": jnp.zeros((hidden,))}

    blocks = [{"qkv": dense(hidden, 3 * hidden), "out": dense(hidden, hidden), "ln1": norm(),
               "fc1": dense(hidden, 4 * hidden), "fc2": dense(4 * hidden, hidden), "ln2": norm()}
              for _ in range(layers)]
    return {"wte": jax.random.normal(next(keys), (vocab, hidden)) * 0.02,
            "wpe": jax.random.normal(next(keys), (seq, hidden)) * 0.01,
            "blocks": blocks, "lm_bias": jnp.zeros((vocab,))}


def layer_norm(x, p):
    mean = x.mean(-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(variance + 1e-5) * p["g"] + p["b"]


def block(x, p, heads, mask):
    b, s, h = x.shape
    d = h // heads
    qkv = (x @ p["qkv"]["w"] + p["qkv"]["b"]).reshape(b, s, h, 3)
    q, k, v = (qkv[..., i].reshape(b, s, heads, d).transpose(0, 2, 1, 3) for i in range(3))
    scores = jnp.where(mask, -jnp.inf, (q @ k.transpose(0, 1, 3, 2)) / math.sqrt(d))
    attention = (jax.nn.softmax(scores, axis=-1) @ v).transpose(0, 2, 1, 3).reshape(b, s, h)
    y = layer_norm(x + attention @ p["out"]["w"] + p["out"]["b"], p["ln1"])
    hidden = jax.nn.gelu(y @ p["fc1"]["w"] + p["fc1"]["b"], approximate=True)
    return layer_norm(y + hidden @ p["fc2"]["w"] + p["fc2"]["b"], p["ln2"])


def loss_fn(params, tokens, labels, heads, dtype):
    params = jax.tree.map(lambda w: w.astype(dtype), params)
    seq = tokens.shape[1]
    mask = jnp.triu(jnp.ones((seq, seq), bool), 1)
    x = params["wte"][tokens] + params["wpe"]
    for p in params["blocks"]:
        x = block(x, p, heads, mask)
    logits = (x @ params["wte"].T + params["lm_bias"]).astype(jnp.float32)
    return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()


def batch(rows, seq, vocab, seed):
    start = jax.random.randint(jax.random.PRNGKey(seed), (rows, 1), 0, vocab)
    tokens = (start + 3 * jnp.arange(seq)) % vocab
    return tokens, (tokens + 3) % vocab


def main():
    args = ARGS
    dtype = jnp.bfloat16 if args.dtype == "bf16" else jnp.float32
    params = init(jax.random.PRNGKey(0), args.layers, args.hidden, args.seq, args.vocab)
    optimizer = optax.adam(args.lr)
    state = optimizer.init(params)

    def step(params, state, tokens, labels):
        loss, grads = jax.value_and_grad(loss_fn)(params, tokens, labels, args.heads, dtype)
        updates, state = optimizer.update(grads, state, params)
        return optax.apply_updates(params, updates), state, loss

    train_step = jax.jit(step, donate_argnums=(0, 1))
    steps = []
    for i in range(args.steps):
        tokens, labels = batch(args.batch, args.seq, args.vocab, i)
        tokens.block_until_ready()
        start = time.perf_counter()
        params, state, loss = train_step(params, state, tokens, labels)
        loss = float(loss)  # waits for the step
        steps.append({"step": i + 1, "loss": loss, "time_s": time.perf_counter() - start})
    config = {k: getattr(args, k) for k in ("layers", "hidden", "heads", "seq", "vocab", "batch")}
    print(json.dumps({"threads": args.threads, "config": config, "dtype": args.dtype,
                      "jax": jax.__version__, "steps": steps}))


if __name__ == "__main__":
    main()
