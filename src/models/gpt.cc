#include "models/gpt.h"

#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

#include "ir/builder.h"

namespace alpa::models {

using ir::Instruction;

namespace {

Status CheckConfig(const GptConfig& config) {
  for (const auto& [name, value] : {std::pair<const char*, int64_t>{"batch", config.batch},
                                    {"seq", config.seq},
                                    {"hidden", config.hidden},
                                    {"layers", config.layers},
                                    {"heads", config.heads},
                                    {"vocab", config.vocab}}) {
    if (value < 1) return InvalidArgument("gpt: {} is {}; it must be at least 1", name, value);
  }
  if (config.hidden % config.heads != 0) {
    return InvalidArgument("gpt: heads is {}; it must divide hidden ({})", config.heads,
                           config.hidden);
  }
  if (!ir::IsFloating(config.dtype)) {
    return InvalidArgument("gpt: dtype {} is not a float type", ir::DTypeName(config.dtype));
  }
  return Status::Ok();
}

struct Dense {
  Instruction* w;
  Instruction* b;
};

struct LayerNormWeights {
  Instruction* scale;
  Instruction* bias;
};

struct LayerWeights {
  Dense qkv, attn_out;
  LayerNormWeights ln1;
  Dense fc1, fc2;
  LayerNormWeights ln2;
};

// Emits the forward pass; shapes are [B, S, H] unless noted.
class GptEmitter {
 public:
  GptEmitter(const GptConfig& config, ir::ModuleBuilder& mb, ir::ComputationBuilder& b)
      : c_(config), mb_(mb), b_(b), dtype_(config.dtype) {}

  Instruction* Full(double value, std::vector<int64_t> dims) {
    return b_.Broadcast(b_.ConstantScalar(dtype_, value), std::move(dims), {});
  }

  // Sum (or max) over the last dim, broadcast back to x's dims (softmax, LayerNorm).
  Instruction* ReduceLast(Instruction* x, ir::Opcode opcode) {
    const std::vector<int64_t> dims = x->shape().dims();
    const int64_t last = static_cast<int64_t>(dims.size()) - 1;
    const double init = opcode == ir::Opcode::kAdd ? 0.0 : -std::numeric_limits<double>::infinity();
    Instruction* reduced =
        b_.Reduce(x, b_.ConstantScalar(dtype_, init), {last}, mb_.ScalarReducer(opcode, dtype_));
    std::vector<int64_t> kept;
    for (int64_t d = 0; d < last; ++d) kept.push_back(d);
    return b_.Broadcast(reduced, dims, kept);
  }

  // x[..., k] W[k, n] + b[n].
  Instruction* Apply(const Dense& dense, Instruction* x) {
    Instruction* y = b_.MatMul(x, dense.w);
    if (y == nullptr) return nullptr;
    const std::vector<int64_t> dims = y->shape().dims();
    return b_.Add(y, b_.Broadcast(dense.b, dims, {static_cast<int64_t>(dims.size()) - 1}));
  }

  // (x - mean) * rsqrt(var + 1e-5) * scale + bias over the last (hidden) dimension.
  Instruction* LayerNorm(const LayerNormWeights& ln, Instruction* x) {
    const std::vector<int64_t> dims = {c_.batch, c_.seq, c_.hidden};
    const double inv_h = 1.0 / static_cast<double>(c_.hidden);
    Instruction* centered =
        b_.Subtract(x, b_.Multiply(ReduceLast(x, ir::Opcode::kAdd), Full(inv_h, dims)));
    Instruction* var = b_.Multiply(ReduceLast(b_.Multiply(centered, centered), ir::Opcode::kAdd),
                                   Full(inv_h, dims));
    Instruction* normed = b_.Multiply(centered, b_.Rsqrt(b_.Add(var, Full(1e-5, dims))));
    return b_.Add(b_.Multiply(normed, b_.Broadcast(ln.scale, dims, {2})),
                  b_.Broadcast(ln.bias, dims, {2}));
  }

  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), the approximation Flax's gelu defaults to.
  Instruction* Gelu(Instruction* x) {
    const std::vector<int64_t> dims = x->shape().dims();
    Instruction* cube = b_.Multiply(b_.Multiply(x, x), x);
    Instruction* inner = b_.Multiply(Full(std::sqrt(2.0 / std::numbers::pi), dims),
                                     b_.Add(x, b_.Multiply(Full(0.044715, dims), cube)));
    return b_.Multiply(b_.Multiply(Full(0.5, dims), x), b_.Add(Full(1.0, dims), b_.Tanh(inner)));
  }

  // [B, S, H] slice [offset, offset + H) of the last dim of qkv, as heads [B, nh, S, d].
  Instruction* Heads(Instruction* qkv, int64_t offset) {
    const int64_t d = c_.hidden / c_.heads;
    Instruction* part =
        b_.Slice(qkv, {{0, c_.batch, 1}, {0, c_.seq, 1}, {offset, offset + c_.hidden, 1}});
    return b_.Transpose(b_.Reshape(part, {c_.batch, c_.seq, c_.heads, d}), {0, 2, 1, 3});
  }

  Instruction* Attention(const LayerWeights& w, Instruction* x) {
    const int64_t d = c_.hidden / c_.heads;
    Instruction* qkv = Apply(w.qkv, x);  // [B, S, 3H]: q, k, v side by side
    Instruction* q = Heads(qkv, 0);
    Instruction* k = Heads(qkv, c_.hidden);
    Instruction* v = Heads(qkv, 2 * c_.hidden);
    const std::vector<int64_t> score_dims = {c_.batch, c_.heads, c_.seq, c_.seq};
    // scores[b, h, i, j] = q[b, h, i, :] . k[b, h, j, :] / sqrt(d)
    Instruction* scores = b_.Multiply(b_.Dot(q, k, {{0, 1}, {0, 1}, {3}, {3}}),
                                      Full(1.0 / std::sqrt(static_cast<double>(d)), score_dims));
    // Causal mask: query i sees key j only when j <= i; the others get a large negative score
    // (not -inf, so that exp and its gradient stay finite) and vanish in the softmax.
    const ir::Shape square = ir::Shape::Array(ir::DType::kS32, {c_.seq, c_.seq});
    Instruction* visible =
        b_.Compare(b_.Iota(square, 1), b_.Iota(square, 0), ir::ComparisonDirection::kLe);
    scores = b_.Select(b_.Broadcast(visible, score_dims, {2, 3}), scores, Full(-1e9, score_dims));
    // softmax over keys: exp(s - max) / sum exp(s - max).
    Instruction* e = b_.Exp(b_.Subtract(scores, ReduceLast(scores, ir::Opcode::kMaximum)));
    Instruction* probs = b_.Divide(e, ReduceLast(e, ir::Opcode::kAdd));
    // context[b, h, i, :] = sum_j probs[b, h, i, j] v[b, h, j, :], back to [B, S, H].
    Instruction* context = b_.Dot(probs, v, {{0, 1}, {0, 1}, {3}, {2}});
    context = b_.Reshape(b_.Transpose(context, {0, 2, 1, 3}), {c_.batch, c_.seq, c_.hidden});
    return Apply(w.attn_out, context);
  }

  Instruction* Layer(const LayerWeights& w, Instruction* x) {
    Instruction* y = LayerNorm(w.ln1, b_.Add(x, Attention(w, x)));
    return LayerNorm(w.ln2, b_.Add(y, Apply(w.fc2, Gelu(Apply(w.fc1, y)))));
  }

  // Mean over B*S of -log softmax(logits)[label]; logits [B, S, V].
  Instruction* CrossEntropy(Instruction* logits, Instruction* labels) {
    const std::vector<int64_t> dims = {c_.batch, c_.seq, c_.vocab};
    Instruction* shifted = b_.Subtract(logits, ReduceLast(logits, ir::Opcode::kMaximum));
    Instruction* log_probs =
        b_.Subtract(shifted, b_.Log(ReduceLast(b_.Exp(shifted), ir::Opcode::kAdd)));
    // One-hot of the labels: iota over the vocab dim == label.
    Instruction* one_hot =
        b_.Compare(b_.Iota(ir::Shape::Array(ir::DType::kS32, dims), 2),
                   b_.Broadcast(labels, dims, {0, 1}), ir::ComparisonDirection::kEq);
    Instruction* picked = b_.Select(one_hot, log_probs, Full(0.0, dims));
    Instruction* sum = b_.Reduce(picked, b_.ConstantScalar(dtype_, 0), {0, 1, 2},
                                 mb_.ScalarReducer(ir::Opcode::kAdd, dtype_));
    return b_.Divide(b_.Negate(sum),
                     b_.ConstantScalar(dtype_, static_cast<double>(c_.batch * c_.seq)));
  }

 private:
  const GptConfig& c_;
  ir::ModuleBuilder& mb_;
  ir::ComputationBuilder& b_;
  ir::DType dtype_;
};

}  // namespace

Result<Model> BuildGpt(const GptConfig& config) {
  ALPA_RETURN_IF_ERROR(CheckConfig(config));
  const ir::DType dtype = config.dtype;
  const int64_t h = config.hidden;
  ir::ModuleBuilder mb("gpt");
  ir::ComputationBuilder b = mb.NewComputation("gpt_loss");

  // Weights first in the order documented in gpt.h, then the batch.
  Model model;
  int64_t number = 0;
  auto weight = [&](std::vector<int64_t> dims, const std::string& name) {
    model.weights.push_back(number);
    return b.Parameter(number++, ir::Shape::Array(dtype, std::move(dims)), name);
  };
  Instruction* wte = weight({config.vocab, h}, "wte");
  Instruction* wpe = weight({config.seq, h}, "wpe");
  std::vector<LayerWeights> layers;
  for (int64_t l = 0; l < config.layers; ++l) {
    const std::string p = "layer" + std::to_string(l) + ".";
    LayerWeights w;
    w.qkv = {weight({h, 3 * h}, p + "qkv.w"), weight({3 * h}, p + "qkv.b")};
    w.attn_out = {weight({h, h}, p + "attn_out.w"), weight({h}, p + "attn_out.b")};
    w.ln1 = {weight({h}, p + "ln1.scale"), weight({h}, p + "ln1.bias")};
    w.fc1 = {weight({h, 4 * h}, p + "fc1.w"), weight({4 * h}, p + "fc1.b")};
    w.fc2 = {weight({4 * h, h}, p + "fc2.w"), weight({h}, p + "fc2.b")};
    w.ln2 = {weight({h}, p + "ln2.scale"), weight({h}, p + "ln2.bias")};
    layers.push_back(w);
  }
  Instruction* lm_bias = weight({config.vocab}, "lm_bias");
  const ir::Shape ids = ir::Shape::Array(ir::DType::kS32, {config.batch, config.seq});
  Instruction* tokens = b.Parameter(number++, ids, "tokens");
  Instruction* labels = b.Parameter(number++, ids, "labels");

  GptEmitter emit(config, mb, b);
  const std::vector<int64_t> act = {config.batch, config.seq, h};
  // Embedding lookup: row tokens[b, s] of wte for each (b, s), a gather of [1, H] slices.
  Instruction* x = b.Gather(wte, tokens,
                            {.offset_dims = {2},
                             .collapsed_slice_dims = {0},
                             .start_index_map = {0},
                             .index_vector_dim = 2,
                             .operand_batching_dims = {},
                             .start_indices_batching_dims = {}},
                            {1, h});
  x = b.Add(x, b.Broadcast(wpe, act, {1, 2}));
  for (const LayerWeights& w : layers) x = emit.Layer(w, x);
  // LM head tied to the embedding: logits[b, s, v] = x[b, s, :] . wte[v, :] + lm_bias[v].
  const std::vector<int64_t> logit_dims = {config.batch, config.seq, config.vocab};
  Instruction* logits =
      b.Add(b.Dot(x, wte, {{}, {}, {2}, {1}}), b.Broadcast(lm_bias, logit_dims, {2}));
  ALPA_ASSIGN_OR_RETURN(ir::Computation * loss, b.Build(emit.CrossEntropy(logits, labels)));
  ALPA_ASSIGN_OR_RETURN(model.loss, mb.Build(loss));
  return model;
}

}  // namespace alpa::models
