// Building blocks of the zoo's transformers (GPT, BERT, MoE), emitted as IR:
//   Dense(x)      = x W + b                      over the last dimension
//   LN(x)         = (x - mean) / sqrt(var + 1e-5) * scale + bias   over the hidden dimension
//   gelu(x)       = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))  (Flax's default approximation)
//   Attn(x)       = concat_h softmax(mask(q_h k_h^T / sqrt(d))) v_h W_o + b_o,
//                   [q k v] = x W_qkv + b_qkv (interleaved: column 3 j + {0, 1, 2} is element j of
//                   q, k, v), d = hidden / heads; with `causal`, position i
//                   sees positions j <= i only
//   post-LN block = y = LN_1(x + Attn(x));  LN_2(y + FFN(y))   (Flax BERT, Alpa's benchmarks)
//   CrossEntropy  = mean over positions of -log softmax(logits)[label], in f32 whatever the
//                   activations' type (mixed precision keeps the loss in full precision)
// Activations are [batch, seq, hidden] of the model's dtype.
#ifndef ALPA_MODELS_TRANSFORMER_H_
#define ALPA_MODELS_TRANSFORMER_H_

#include <string>
#include <vector>

#include "ir/builder.h"
#include "models/model.h"

namespace alpa::models {

struct Dense {
  ir::Instruction* w;
  ir::Instruction* b;
};

struct LayerNormWeights {
  ir::Instruction* scale;
  ir::Instruction* bias;
};

struct AttentionWeights {
  Dense qkv;  // [H, 3H]: q, k, v interleaved, column 3 j + {0, 1, 2} (Alpa's qkv_combined)
  Dense out;  // [H, H]
};

// Declares a model's parameters in order: weights (recorded in model.weights with their
// WeightInit), then the batch.
class ParameterDeclarer {
 public:
  ParameterDeclarer(Model& model, ir::ComputationBuilder& b, ir::DType dtype)
      : model_(model), b_(b), dtype_(dtype) {}

  ir::Instruction* Weight(std::vector<int64_t> dims, const std::string& name, WeightInit init);
  // W [in, out] normal(0, stddev), b [out] zeros; named name.w, name.b.
  Dense DenseWeights(int64_t in, int64_t out, const std::string& name, double stddev);
  // scale ones, bias zeros; named name.scale, name.bias.
  LayerNormWeights LayerNorm(int64_t hidden, const std::string& name);
  AttentionWeights Attention(int64_t hidden, const std::string& name, double stddev);
  // A batch parameter (not trained).
  ir::Instruction* Batch(ir::Shape shape, const std::string& name);

 private:
  Model& model_;
  ir::ComputationBuilder& b_;
  ir::DType dtype_;
  int64_t next_ = 0;
};

struct TransformerShape {
  int64_t batch;
  int64_t seq;
  int64_t hidden;
  int64_t heads;
};

class TransformerEmitter {
 public:
  TransformerEmitter(const TransformerShape& shape, ir::DType dtype, ir::ComputationBuilder& b)
      : s_(shape), dtype_(dtype), b_(b) {}

  // `value` broadcast to `dims`, of the activations' type.
  ir::Instruction* Full(double value, std::vector<int64_t> dims);
  // Sum (kAdd: ComputationBuilder::Sum, in f32 for 16-bit x) or max (kMaximum) over the last
  // dimension, broadcast back to x's dims.
  ir::Instruction* ReduceLast(ir::Instruction* x, ir::Opcode opcode);
  ir::Instruction* Apply(const Dense& dense, ir::Instruction* x);
  ir::Instruction* LayerNorm(const LayerNormWeights& ln, ir::Instruction* x);
  ir::Instruction* Gelu(ir::Instruction* x);
  ir::Instruction* Attention(const AttentionWeights& w, ir::Instruction* x, bool causal);
  // softmax over the last dimension of scores [..., S, S] (queries, keys); with `causal`, query
  // i sees keys j <= i only.
  ir::Instruction* AttentionSoftmax(ir::Instruction* scores, bool causal);
  // Row tokens[b, s] of table [V, H] for each (b, s): [batch, seq, H], a gather.
  ir::Instruction* Lookup(ir::Instruction* table, ir::Instruction* tokens);
  // wte[tokens] + wpe: the token embedding rows (a gather) plus the learned position embedding.
  ir::Instruction* Embed(ir::Instruction* wte, ir::Instruction* wpe, ir::Instruction* tokens);
  // logits[b, s, v] = x[b, s, :] . wte[v, :] + bias[v]: the LM head tied to the embedding.
  ir::Instruction* TiedLogits(ir::Instruction* x, ir::Instruction* wte, ir::Instruction* bias);
  // Scalar f32 loss; logits [B, S, V] of any float type, labels s32 [B, S].
  ir::Instruction* CrossEntropy(ir::Instruction* logits, ir::Instruction* labels);

 private:
  // ReduceLast without the broadcast: x's dims less the last.
  ir::Instruction* ReduceLastDim(ir::Instruction* x, ir::Opcode opcode);
  // `reduced` (dims less the last) broadcast along a new last dimension to `dims`.
  ir::Instruction* BroadcastLastDim(ir::Instruction* reduced, std::vector<int64_t> dims);
  // Part `part` (0: q, 1: k, 2: v) of qkv [B, S, 3H], as heads [B, nh, S, d].
  ir::Instruction* Heads(ir::Instruction* qkv, int64_t part);

  TransformerShape s_;
  ir::DType dtype_;
  ir::ComputationBuilder& b_;
};

// Tokens s32[rows, seq] whose row r is the progression (a_r + 3 s) mod vocab, a_r drawn from
// `seed`, and labels = each token's successor (token + 3) mod vocab: a bigram pattern a language
// model learns in a few steps, so that a falling loss shows training works. Returns
// {tokens, labels}.
std::vector<ir::Literal> ProgressionTokens(int64_t rows, int64_t seq, int64_t vocab, uint64_t seed);

// A language model's batches: ProgressionTokens of its sequence length and vocabulary.
BatchGenerator ProgressionBatches(int64_t seq, int64_t vocab);

}  // namespace alpa::models

#endif  // ALPA_MODELS_TRANSFORMER_H_
