// The GPT of Alpa's benchmarks (alpa/model/gpt_model.py: a Flax BERT-style decoder, post-LN),
// as the loss of one batch of next-token prediction (blocks in models/transformer.h):
//   x_0 = E[tokens] + P                                  (token + learned position embedding)
//   per layer l = 1..layers:
//     y   = LN_1(x_{l-1} + Attn(x_{l-1}))                (causal multi-head self-attention)
//     x_l = LN_2(y + W_2 gelu(W_1 y + b_1) + b_2)        (MLP hidden -> 4 hidden -> hidden)
//   logits = x_layers E^T + b_out                        (LM head tied to the token embedding)
//   loss = mean over batch*seq of -log softmax(logits)[label]     (in f32)
// With causal = false the same network is BERT's encoder (every position sees all others),
// trained here as a masked language model: some input tokens are replaced by a mask id and every
// position predicts its original token.
//
// Layer boundaries (ir/layer_boundary.h) mark x_0 as leaving layer 0 (the embedding) and x_l as
// leaving layer l, so the model has layers + 2 pipeline layers: embedding, the blocks, and the
// head with the loss.
//
// Parameters (the weights, in this order, then the batch):
//   0                 wte           [vocab, hidden]      token embedding, also the LM head
//   1                 wpe           [seq, hidden]        position embedding
//   per layer l (12 each, starting at 2 + 12 l):
//                     attn.qkv.w [hidden, 3 hidden], attn.qkv.b [3 hidden],
//                     attn.out.w [hidden, hidden], attn.out.b [hidden],
//                     ln1.scale [hidden], ln1.bias [hidden],
//                     fc1.w [hidden, 4 hidden], fc1.b [4 hidden],
//                     fc2.w [4 hidden, hidden], fc2.b [hidden],
//                     ln2.scale [hidden], ln2.bias [hidden]
//   2 + 12 layers     lm_bias       [vocab]              output bias of the LM head
//   then              tokens s32[batch, seq], labels s32[batch, seq]
// The weight count is L (12 H^2 + 13 H) + V (H + 1) + S H. Alpa's formula
// (compute_gpt_parameter_count of its benchmarks)
//   L (H(3H+1) + H(H+1) + H(4H+1) + 4H(H+1) + 4H) + V(H+1) = L (12 H^2 + 11 H) + V (H + 1)
// (qkv, attention output, fc2, fc1, two LayerNorms; one embedding matrix plus output bias) leaves
// out two things the model it benchmarks does have: the position embedding, S H, and 2H of the
// qkv bias per layer (its H(3H+1) counts a bias of H where the fused qkv dense has 3H). So the
// count here is Alpa's formula + S H + 2 H L. The formula counts the vocabulary matrix once,
// which is a tied head: an untied one would add V H (0.5% to 30% of the named sizes) and match
// neither the formula nor its FLOP count's 6 B S H V.
#ifndef ALPA_MODELS_GPT_H_
#define ALPA_MODELS_GPT_H_

#include "ir/dtype.h"
#include "models/model.h"
#include "support/status.h"

namespace alpa::models {

struct GptConfig {
  int64_t batch = 4;
  int64_t seq = 8;
  int64_t hidden = 16;
  int64_t layers = 2;
  int64_t heads = 2;
  int64_t vocab = 32;
  ir::DType dtype = ir::DType::kF32;
  bool causal = true;  // false: BERT's bidirectional encoder with a masked-LM objective
};

// Errors name the field that is not positive, heads when it does not divide hidden, or the
// dtype that is not a float.
Result<Model> BuildGpt(const GptConfig& config);

}  // namespace alpa::models

#endif  // ALPA_MODELS_GPT_H_
