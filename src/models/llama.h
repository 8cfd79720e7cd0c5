// Llama 3 (Grattafiori et al. 2024, "The Llama 3 Herd of Models") and Mixtral (Jiang et al. 2024,
// "Mixtral of Experts"): pre-norm decoders with RMSNorm, SwiGLU MLPs, rotary position embeddings
// and grouped-query attention, as the loss of one batch of next-token prediction:
//   x_0 = E[tokens]                                      (no position embedding: RoPE instead)
//   per layer l = 1..layers:
//     y   = x_{l-1} + Attn(RMS_1(x_{l-1}))
//     x_l = y + FFN(RMS_2(y))
//   logits = RMS_f(x_layers) W_head                      (LM head not tied to the embedding)
//   loss = mean over batch*seq of -log softmax(logits)[label]     (in f32)
// where
//   RMS(x)   = x / sqrt(mean(x^2) + 1e-5) * scale           (in f32, then back to the dtype,
//                                                            as Hugging Face's LlamaRMSNorm)
//   Attn(x)  = concat_h softmax(mask(q_h k_{g(h)}^T / sqrt(d))) v_{g(h)} W_o: causal, `heads`
//              query heads of d = hidden / heads, `kv_heads` key/value heads, query head h
//              reading key/value head g(h) = h / (heads / kv_heads);
//              q = rope(x W_q), k = rope(x W_k), v = x W_v, no biases
//   rope(x)  = x cos(s theta) + rotate_half(x) sin(s theta) at position s, per head, with
//              theta_i = rope_theta^(-2 (i mod d/2) / d) and rotate_half([a, b]) = [-b, a] over
//              the halves of the head (Hugging Face's convention; Meta's rotates interleaved
//              pairs, the same function on permuted q/k columns)
//   FFN      = SwiGLU:  W_down (silu(x W_gate) * x W_up),  silu(z) = z logistic(z)
//              or, with experts > 0 (Mixtral), E such SwiGLU experts under top-2 routing
//              (expert_routing.h) in groups of expert_group_size tokens with capacity
//              ceil(2 G / E); Mixtral itself is dropless, so capacity overflow, which it never
//              drops, is a difference here (the residual carries a dropped token on)
// The RoPE tables are computed inside each layer's attention (a few [seq, d] elementwise ops),
// so that layers stay self-contained for pipeline stages.
//
// Layer boundaries (ir/layer_boundary.h): x_0 leaves layer 0 (the embedding), x_l leaves layer
// l; the final norm, the head and the loss are layer layers + 1.
//
// Parameters (the weights, in this order, then the batch), n = heads, m = kv_heads, F = ffn:
//   0                 embed                [vocab, H]
//   per layer l (9 weights dense, 10 with experts):
//                     attn_norm.scale [H], attn.q.w [H, n d], attn.k.w [H, m d],
//                     attn.v.w [H, m d], attn.o.w [n d, H], mlp_norm.scale [H], then
//     dense:          mlp.gate.w [H, F], mlp.up.w [H, F], mlp.down.w [F, H]
//     experts:        moe.router [H, E], moe.gate.w [E, H, F], moe.up.w [E, H, F],
//                     moe.down.w [E, F, H]
//   then              final_norm.scale [H], lm_head [H, vocab]
//   then              tokens s32[batch, seq], labels s32[batch, seq]
// The weight count is L (2 H n d + 2 H m d + 2 H + FFN) + 2 V H + H, with FFN = 3 H F dense and
// E 3 H F + H E with experts: Llama 3 8B 8,030,261,248, 70B 70,553,706,496, 405B
// 405,853,388,800; Mixtral 8x7B 46,702,792,704, 8x22B 140,620,634,112 (the published counts).
#ifndef ALPA_MODELS_LLAMA_H_
#define ALPA_MODELS_LLAMA_H_

#include "ir/dtype.h"
#include "models/model.h"
#include "support/status.h"

namespace alpa::models {

struct LlamaConfig {
  int64_t batch = 4;
  int64_t seq = 8;
  int64_t hidden = 16;
  int64_t layers = 2;
  int64_t heads = 4;
  int64_t kv_heads = 2;
  int64_t ffn = 32;  // F, the SwiGLU's inner size (each expert's with experts)
  int64_t vocab = 32;
  double rope_theta = 500000.0;
  // The positions the model's RoPE was trained for (its max_position_embeddings): seq may not
  // exceed it.
  int64_t max_positions = 8192;
  int64_t experts = 0;  // 0: dense SwiGLU (Llama); E >= 1: Mixtral's top-2 mixture of E experts
  int64_t expert_group_size = 16;  // tokens per routing group (with experts)
  ir::DType dtype = ir::DType::kF32;
};

// Errors name the field: one not positive, heads not dividing hidden, kv_heads not dividing
// heads, an odd head size (RoPE rotates pairs), seq beyond max_positions, the group size not
// dividing batch * seq, a dtype that is not a float.
Result<Model> BuildLlama(const LlamaConfig& config);

}  // namespace alpa::models

#endif  // ALPA_MODELS_LLAMA_H_
