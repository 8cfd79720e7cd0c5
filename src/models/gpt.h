// The GPT of Alpa's benchmarks (alpa/model/gpt_model.py: a Flax BERT-style decoder, post-LN),
// as the loss of one batch of next-token prediction:
//   x_0 = E[tokens] + P                                  (token + learned position embedding)
//   per layer l = 1..layers:
//     a   = Attn(x_{l-1})                                (causal multi-head self-attention)
//     y   = LN(x_{l-1} + a)
//     x_l = LN(y + W_2 gelu(W_1 y + b_1) + b_2)          (MLP hidden -> 4 hidden -> hidden)
//   logits = x_layers E^T + b_out                        (LM head tied to the token embedding)
//   loss = mean over batch*seq of -log softmax(logits)[label]
// Attn(x) = concat_h softmax(mask(q_h k_h^T / sqrt(d))) v_h  W_o + b_o with [q k v] = x W_qkv +
// b_qkv, d = hidden / heads, and the causal mask letting position i see positions j <= i only.
// LN(x) = (x - mean) / sqrt(var + 1e-5) * scale + bias over the hidden dimension; gelu is the
// tanh approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
//
// Parameters (the weights, in this order, then the batch):
//   0                 wte           [vocab, hidden]      token embedding, also the LM head
//   1                 wpe           [seq, hidden]        position embedding
//   per layer l (12 each, starting at 2 + 12 l):
//                     qkv.w [hidden, 3 hidden], qkv.b [3 hidden],
//                     attn_out.w [hidden, hidden], attn_out.b [hidden],
//                     ln1.scale [hidden], ln1.bias [hidden],
//                     fc1.w [hidden, 4 hidden], fc1.b [4 hidden],
//                     fc2.w [4 hidden, hidden], fc2.b [hidden],
//                     ln2.scale [hidden], ln2.bias [hidden]
//   2 + 12 layers     lm_bias       [vocab]              output bias of the LM head
//   then              tokens s32[batch, seq], labels s32[batch, seq]
// The weight count is L (12 H^2 + 13 H) + V (H + 1) + S H. Alpa's formula
// (compute_gpt_parameter_count of its benchmarks)
//   L (H(3H+1) + H(H+1) + H(4H+1) + 4H(H+1) + 4H) + V(H+1) = L (12 H^2 + 11 H) + V (H + 1)
// (qkv, attention output, fc2, fc1, two LayerNorms; embedding plus output bias) leaves out two
// things the model it benchmarks does have: the position embedding, S H, and 2H of the qkv bias
// per layer (its H(3H+1) counts a bias of H where the fused qkv dense has 3H, as Flax's
// Dense(3H) does). So the count here is Alpa's formula + S H + 2 H L.
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
};

// Errors name the field that is not positive, heads when it does not divide hidden, or the
// dtype that is not a float.
Result<Model> BuildGpt(const GptConfig& config);

}  // namespace alpa::models

#endif  // ALPA_MODELS_GPT_H_
