"""The zoo's Llama and Mixtral against an independent JAX implementation in Hugging Face's
conventions (LlamaForCausalLM, MixtralForCausalLM): RMSNorm in f32, rotate-half rotary
embeddings, query head h reading key/value head h // (heads / kv_heads), SwiGLU, untied head,
top-2 routing renormalised over the pair. `alpa grad` writes the model's loss and gradients as
HLO; `alpa eval` runs them on the same weights and batch; both must agree with JAX.

llama-tiny and mixtral-tiny: hidden 32, 4 heads over 2 key/value heads, FFN 64, vocabulary 64,
sequence 16, RoPE theta 10000; Mixtral's 4 experts are routed in groups of 32 tokens with
ceil(2 * 32 / 4) = 16 slots each, which top-2 routing of random weights can overflow, so the
reference drops what the zoo's routing drops (GShard's slot order: first choices in token
order, then second choices)."""
import json
import os
import subprocess

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", False)

HIDDEN, HEADS, KV_HEADS, FFN, VOCAB, SEQ, BATCH, LAYERS = 32, 4, 2, 64, 64, 16, 8, 2
EXPERTS, GROUP = 4, 32
HEAD = HIDDEN // HEADS


def alpa(*args):
    cli = os.environ.get("ALPA_CLI")
    if not cli:
        pytest.skip("ALPA_CLI (set by ctest) names the alpa binary")
    return subprocess.run([cli, *args], check=True, capture_output=True, text=True).stdout


def weight_shapes(experts):
    shapes = [("embed", (VOCAB, HIDDEN))]
    for l in range(LAYERS):
        p = f"layer{l}."
        shapes += [(p + "attn_norm.scale", (HIDDEN,)), (p + "attn.q.w", (HIDDEN, HEADS * HEAD)),
                   (p + "attn.k.w", (HIDDEN, KV_HEADS * HEAD)),
                   (p + "attn.v.w", (HIDDEN, KV_HEADS * HEAD)),
                   (p + "attn.o.w", (HEADS * HEAD, HIDDEN)), (p + "mlp_norm.scale", (HIDDEN,))]
        if experts:
            shapes += [(p + "moe.router", (HIDDEN, EXPERTS)),
                       (p + "moe.gate.w", (EXPERTS, HIDDEN, FFN)),
                       (p + "moe.up.w", (EXPERTS, HIDDEN, FFN)),
                       (p + "moe.down.w", (EXPERTS, FFN, HIDDEN))]
        else:
            shapes += [(p + "mlp.gate.w", (HIDDEN, FFN)), (p + "mlp.up.w", (HIDDEN, FFN)),
                       (p + "mlp.down.w", (FFN, HIDDEN))]
    return shapes + [("final_norm.scale", (HIDDEN,)), ("lm_head", (HIDDEN, VOCAB))]


def rms_norm(x, scale):
    x32 = x.astype(jnp.float32)
    normed = x32 * jax.lax.rsqrt(jnp.mean(x32 * x32, axis=-1, keepdims=True) + 1e-5)
    return scale * normed.astype(x.dtype)


def rotate_half(x):
    half = x.shape[-1] // 2
    return jnp.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def rope(x):  # x [B, S, n, d]
    inverse = 10000.0 ** (-jnp.arange(0, HEAD, 2, dtype=jnp.float32) / HEAD)
    angles = jnp.arange(SEQ, dtype=jnp.float32)[:, None] * inverse[None, :]
    both = jnp.concatenate([angles, angles], axis=-1)[None, :, None, :]
    return x * jnp.cos(both) + rotate_half(x) * jnp.sin(both)


def attention(x, w, p):
    q = rope((x @ w[p + "attn.q.w"]).reshape(BATCH, SEQ, HEADS, HEAD))
    k = rope((x @ w[p + "attn.k.w"]).reshape(BATCH, SEQ, KV_HEADS, HEAD))
    v = (x @ w[p + "attn.v.w"]).reshape(BATCH, SEQ, KV_HEADS, HEAD)
    group = HEADS // KV_HEADS  # Hugging Face's repeat_kv: head h reads key/value head h // group
    k = jnp.repeat(k, group, axis=2)
    v = jnp.repeat(v, group, axis=2)
    scores = jnp.einsum("bihd,bjhd->bhij", q, k) / np.sqrt(HEAD)
    causal = jnp.tril(jnp.ones((SEQ, SEQ), bool))
    probs = jax.nn.softmax(jnp.where(causal, scores, -jnp.inf), axis=-1)
    context = jnp.einsum("bhij,bjhd->bihd", probs, v).reshape(BATCH, SEQ, HEADS * HEAD)
    return context @ w[p + "attn.o.w"]


def swiglu(x, gate, up, down):
    return (jax.nn.silu(x @ gate) * (x @ up)) @ down


def top2_routing(tokens, router):
    """GShard's top-2 slots as the zoo routes them: a [groups, G, E] weight per token and expert,
    zero where the choice has no slot."""
    probs = jax.nn.softmax(tokens @ router, axis=-1)  # [g, s, e]
    first = jax.nn.one_hot(jnp.argmax(probs, -1), EXPERTS)
    second = jax.nn.one_hot(jnp.argmax(jnp.where(first > 0, -1.0, probs), -1), EXPERTS)
    capacity = -(-2 * GROUP // EXPERTS)
    pos_1 = jnp.cumsum(first, axis=1) - first
    pos_2 = jnp.cumsum(second, axis=1) - second + jnp.sum(first, axis=1, keepdims=True)
    kept = first * (pos_1 < capacity) + second * (pos_2 < capacity)
    chosen = jnp.sum((first + second) * probs, axis=-1, keepdims=True)
    return kept * probs / chosen


def experts(x, w, p):
    tokens = x.reshape(-1, GROUP, HIDDEN)
    weights = top2_routing(tokens, w[p + "moe.router"])
    out = jnp.zeros_like(tokens)
    for e in range(EXPERTS):
        y = swiglu(tokens, w[p + "moe.gate.w"][e], w[p + "moe.up.w"][e], w[p + "moe.down.w"][e])
        out = out + weights[..., e:e + 1] * y
    return out.reshape(BATCH, SEQ, HIDDEN)


def loss(w, tokens, labels, with_experts):
    x = w["embed"][tokens]
    for l in range(LAYERS):
        p = f"layer{l}."
        x = x + attention(rms_norm(x, w[p + "attn_norm.scale"]), w, p)
        h = rms_norm(x, w[p + "mlp_norm.scale"])
        x = x + (experts(h, w, p) if with_experts else
                 swiglu(h, w[p + "mlp.gate.w"], w[p + "mlp.up.w"], w[p + "mlp.down.w"]))
    logits = rms_norm(x, w["final_norm.scale"]) @ w["lm_head"]
    log_probs = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.mean(jnp.take_along_axis(log_probs, labels[..., None], axis=-1))


@pytest.mark.parametrize("model", ["llama-tiny", "mixtral-tiny"])
def test_loss_and_gradients_match_jax(model, tmp_path):
    with_experts = model == "mixtral-tiny"
    rng = np.random.default_rng(7)
    shapes = weight_shapes(with_experts)
    weights = {name: (1.0 + 0.1 * rng.standard_normal(shape) if name.endswith(".scale") else
                      0.3 * rng.standard_normal(shape)).astype(np.float32)
               for name, shape in shapes}
    tokens = rng.integers(0, VOCAB, (BATCH, SEQ)).astype(np.int32)
    labels = rng.integers(0, VOCAB, (BATCH, SEQ)).astype(np.int32)

    hlo = tmp_path / "grad.hlo"
    alpa("grad", model, "-o", str(hlo))
    arguments = [{"shape": f"f32[{','.join(map(str, shape))}]",
                  "values": weights[name].ravel().tolist()} for name, shape in shapes]
    arguments += [{"shape": f"s32[{BATCH},{SEQ}]", "values": ids.ravel().tolist()}
                  for ids in (tokens, labels)]
    inputs = tmp_path / "inputs.json"
    inputs.write_text(json.dumps({"arguments": arguments}))
    outputs = json.loads(alpa("eval", str(hlo), "--inputs", str(inputs), "--json"))["outputs"]

    value, grads = jax.value_and_grad(loss)(weights, tokens, labels, with_experts)
    assert outputs[0]["sum"] == pytest.approx(float(value), rel=1e-5)
    assert len(outputs) == 1 + len(shapes)
    for (name, _), output in zip(shapes, outputs[1:]):
        grad = np.asarray(grads[name], np.float64)
        assert output["abs_sum"] == pytest.approx(np.abs(grad).sum(), rel=1e-3, abs=1e-6), name
        assert output["sum"] == pytest.approx(grad.sum(), rel=1e-3, abs=1e-5), name
