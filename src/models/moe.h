// The mixture-of-experts GPT of Alpa's benchmarks (alpa/model/moe.py, GShard-style): the post-LN
// decoder of gpt.h (causal attention, learned positions, LM head tied to the token embedding plus
// lm_bias) with MLPs hidden -> 8 hidden -> hidden (Alpa's MoE uses mlp_factor 8), in which every
// other block's MLP (blocks 1, 3, 5, ...) is a layer of E = `experts` expert MLPs with top-2
// gating:
//   per block l = 1..layers (block index b = l - 1):
//     y   = LN_1(x_{l-1} + Attn(x_{l-1}))
//     x_l = LN_2(y + MLP(y))   for b even,   x_l = LN_2(y + MoE(y))   for b odd
//
// The MoE layer routes the batch*seq tokens with GShard's top-2 gating (expert_routing.h), in
// groups of G = min(expert_group_size, batch*seq) consecutive tokens (G must divide batch*seq),
// with expert capacity C = ceil(2 G / E) (at least 1; 2G/E is the mean load of top-2 routing;
// Alpa's moe.py floors it, which differs for moe-27b only: 86 slots here, 85 there), and runs
// E GELU MLPs batched over the expert dimension:
//   in[e,g,c,h]    = Dispatch(x)
//   out[e,g,c,h]   = einsum("egcf,efh->egch", gelu(einsum("egch,ehf->egcf", in, W_1) + b_1), W_2)
//                    + b_2                                            (f = 8 hidden)
//   MoE(x)[g,s,h]  = Combine(out)
// There is no auxiliary load-balancing loss (GShard's l_aux): routing may concentrate on
// a few experts, whose overflow is dropped (the residual carries those tokens on).
// Alpa's moe.py differs in details that change neither the parameter count (but for the biases)
// nor the FLOPs materially: its MoE blocks are 0, 2, 4, ...; its experts are ReLU MLPs without
// biases (the biases here, E (9 H) per MoE block, are what its parameter formula counts); it
// gates in the model's dtype and renormalises the combine weights over the choices kept.
//
// Layer boundaries as in gpt.h: x_0 leaves layer 0 (the embedding), x_l leaves layer l.
//
// Parameters (the weights, in this order, then the batch):
//   0                 wte           [vocab, hidden]      token embedding, also the LM head
//   1                 wpe           [seq, hidden]        position embedding
//   per block, from 2 (12 weights in a dense block, 13 in an MoE block):
//                     attn.qkv.w [H, 3H], attn.qkv.b [3H], attn.out.w [H, H], attn.out.b [H],
//                     ln1.scale [H], ln1.bias [H], then
//     dense (b even): fc1.w [H, 8H], fc1.b [8H], fc2.w [8H, H], fc2.b [H]
//     MoE (b odd):    moe.gate [H, E], moe.fc1.w [E, H, 8H], moe.fc1.b [E, 8H],
//                     moe.fc2.w [E, 8H, H], moe.fc2.b [E, H]
//                     ln2.scale [H], ln2.bias [H]
//   then              lm_bias       [vocab]
//   then              tokens s32[batch, seq], labels s32[batch, seq]
// A dense block has 20 H^2 + 17 H weights, an MoE block 4 H^2 + 8 H + H E + E (16 H^2 + 9 H);
// with D = ceil(L/2) dense and M = floor(L/2) MoE blocks the weight count is
//   D (20 H^2 + 17 H) + M (4 H^2 + 8 H + H E + E (16 H^2 + 9 H)) + V (H + 1) + S H.
// Alpa's formula (compute_moe_parameter_count, mlp_factor 8, tied embedding), for even L,
//   L/2 (H(3H+1) + H(H+1) + H(8H+1) + 8H(H+1) + 4H)
//   + L/2 (H(3H+1) + H(H+1) + E (H(8H+1) + 8H(H+1)) + 4H) + V(H+1)
// leaves out, as for the GPT (gpt.h), the position embedding S H and 2H of the qkv bias per
// block, and also the gate, H E per MoE block: the count here is Alpa's formula
// + S H + 2 H L + H E L/2, within 0.25% of it for every named size of the zoo.
#ifndef ALPA_MODELS_MOE_H_
#define ALPA_MODELS_MOE_H_

#include "ir/dtype.h"
#include "models/model.h"
#include "support/status.h"

namespace alpa::models {

struct MoeConfig {
  int64_t batch = 4;
  int64_t seq = 8;
  int64_t hidden = 16;
  int64_t layers = 2;
  int64_t heads = 2;
  int64_t vocab = 32;
  int64_t experts = 4;
  // Tokens per gating group (GShard's S); clipped to batch * seq, which it must then divide.
  int64_t expert_group_size = 16;
  ir::DType dtype = ir::DType::kF32;
};

// Errors name the field that is not positive, heads when it does not divide hidden, the group
// size when it does not divide batch * seq, or the dtype that is not a float.
Result<Model> BuildMoe(const MoeConfig& config);

}  // namespace alpa::models

#endif  // ALPA_MODELS_MOE_H_
