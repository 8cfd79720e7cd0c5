#include "models/transformer.h"

#include <cmath>
#include <limits>
#include <numbers>
#include <random>

namespace alpa::models {

using ir::Instruction;

Instruction* ParameterDeclarer::Weight(std::vector<int64_t> dims, const std::string& name,
                                       WeightInit init) {
  model_.weights.push_back(next_);
  model_.init.push_back(init);
  return b_.Parameter(next_++, ir::Shape::Array(dtype_, std::move(dims)), name);
}

Dense ParameterDeclarer::DenseWeights(int64_t in, int64_t out, const std::string& name,
                                      double stddev) {
  return {Weight({in, out}, name + ".w", WeightInit::Normal(stddev)),
          Weight({out}, name + ".b", WeightInit::Zeros())};
}

LayerNormWeights ParameterDeclarer::LayerNorm(int64_t hidden, const std::string& name) {
  return {Weight({hidden}, name + ".scale", WeightInit::Ones()),
          Weight({hidden}, name + ".bias", WeightInit::Zeros())};
}

AttentionWeights ParameterDeclarer::Attention(int64_t hidden, const std::string& name,
                                              double stddev) {
  return {DenseWeights(hidden, 3 * hidden, name + ".qkv", stddev),
          DenseWeights(hidden, hidden, name + ".out", stddev)};
}

Instruction* ParameterDeclarer::Batch(ir::Shape shape, const std::string& name) {
  return b_.Parameter(next_++, std::move(shape), name);
}

Instruction* TransformerEmitter::Full(double value, std::vector<int64_t> dims) {
  return b_.Broadcast(b_.ConstantScalar(dtype_, value), std::move(dims), {});
}

Instruction* TransformerEmitter::ReduceLastDim(Instruction* x, ir::Opcode opcode) {
  if (x == nullptr) return nullptr;
  const int64_t last = x->shape().rank() - 1;
  if (opcode == ir::Opcode::kAdd) return b_.Sum(x, {last});
  const ir::DType dtype = x->shape().dtype();
  const double init = -std::numeric_limits<double>::infinity();  // maximum's identity
  return b_.Reduce(x, b_.ConstantScalar(dtype, init), {last},
                   b_.module_builder().ScalarReducer(opcode, dtype));
}

Instruction* TransformerEmitter::BroadcastLastDim(Instruction* reduced, std::vector<int64_t> dims) {
  if (reduced == nullptr) return nullptr;
  std::vector<int64_t> kept;
  for (int64_t d = 0; d + 1 < static_cast<int64_t>(dims.size()); ++d) kept.push_back(d);
  return b_.Broadcast(reduced, std::move(dims), kept);
}

Instruction* TransformerEmitter::ReduceLast(Instruction* x, ir::Opcode opcode) {
  if (x == nullptr) return nullptr;
  return BroadcastLastDim(ReduceLastDim(x, opcode), x->shape().dims());
}

Instruction* TransformerEmitter::Apply(const Dense& dense, Instruction* x) {
  Instruction* y = b_.MatMul(x, dense.w);
  if (y == nullptr) return nullptr;
  const std::vector<int64_t> dims = y->shape().dims();
  return b_.Add(y, b_.Broadcast(dense.b, dims, {static_cast<int64_t>(dims.size()) - 1}));
}

Instruction* TransformerEmitter::LayerNorm(const LayerNormWeights& ln, Instruction* x) {
  if (x == nullptr) return nullptr;
  const std::vector<int64_t> dims = x->shape().dims();
  const int64_t last = static_cast<int64_t>(dims.size()) - 1;
  const double inv_h = 1.0 / static_cast<double>(dims.back());
  Instruction* centered =
      b_.Subtract(x, b_.Multiply(ReduceLast(x, ir::Opcode::kAdd), Full(inv_h, dims)));
  Instruction* var =
      b_.Multiply(ReduceLast(b_.Multiply(centered, centered), ir::Opcode::kAdd), Full(inv_h, dims));
  Instruction* normed = b_.Multiply(centered, b_.Rsqrt(b_.Add(var, Full(1e-5, dims))));
  return b_.Add(b_.Multiply(normed, b_.Broadcast(ln.scale, dims, {last})),
                b_.Broadcast(ln.bias, dims, {last}));
}

Instruction* TransformerEmitter::Gelu(Instruction* x) {
  if (x == nullptr) return nullptr;
  const std::vector<int64_t> dims = x->shape().dims();
  Instruction* cube = b_.Multiply(b_.Multiply(x, x), x);
  Instruction* inner = b_.Multiply(Full(std::sqrt(2.0 / std::numbers::pi), dims),
                                   b_.Add(x, b_.Multiply(Full(0.044715, dims), cube)));
  return b_.Multiply(b_.Multiply(Full(0.5, dims), x), b_.Add(Full(1.0, dims), b_.Tanh(inner)));
}

Instruction* TransformerEmitter::Heads(Instruction* qkv, int64_t part) {
  const int64_t d = s_.hidden / s_.heads;
  // q, k and v interleave in qkv's last dim (column 3 j + part is element j of `part`), as in
  // Alpa's qkv_combined: the slice then cuts the minor size-3 dim and keeps the major H one whole,
  // so a column split of the qkv weight carries through to H and on to the heads. Slicing
  // contiguous [0, H), [H, 2H), [2H, 3H) ranges of a split 3H dim would need it gathered first.
  Instruction* split = b_.Reshape(qkv, {s_.batch, s_.seq, s_.hidden, 3});
  Instruction* one =
      b_.Slice(split, {{0, s_.batch, 1}, {0, s_.seq, 1}, {0, s_.hidden, 1}, {part, part + 1, 1}});
  return b_.Transpose(b_.Reshape(one, {s_.batch, s_.seq, s_.heads, d}), {0, 2, 1, 3});
}

Instruction* TransformerEmitter::Attention(const AttentionWeights& w, Instruction* x, bool causal) {
  const int64_t d = s_.hidden / s_.heads;
  Instruction* qkv = Apply(w.qkv, x);
  Instruction* q = Heads(qkv, 0);
  Instruction* k = Heads(qkv, 1);
  Instruction* v = Heads(qkv, 2);
  const std::vector<int64_t> score_dims = {s_.batch, s_.heads, s_.seq, s_.seq};
  // scores[b, h, i, j] = q[b, h, i, :] . k[b, h, j, :] / sqrt(d)
  Instruction* scores = b_.Multiply(b_.Dot(q, k, {{0, 1}, {0, 1}, {3}, {3}}),
                                    Full(1.0 / std::sqrt(static_cast<double>(d)), score_dims));
  Instruction* probs = AttentionSoftmax(scores, causal);
  // context[b, h, i, :] = sum_j probs[b, h, i, j] v[b, h, j, :], back to [B, S, H].
  Instruction* context = b_.Dot(probs, v, {{0, 1}, {0, 1}, {3}, {2}});
  context = b_.Reshape(b_.Transpose(context, {0, 2, 1, 3}), {s_.batch, s_.seq, s_.hidden});
  return Apply(w.out, context);
}

Instruction* TransformerEmitter::AttentionSoftmax(Instruction* scores, bool causal) {
  if (scores == nullptr) return nullptr;
  const std::vector<int64_t> dims = scores->shape().dims();
  const auto rank = static_cast<int64_t>(dims.size());
  if (causal) {
    // Query i sees key j only when j <= i; the others get a large negative score (not -inf, so
    // that exp and its gradient stay finite; -1e4 fits f16) and vanish in the softmax.
    const ir::Shape square = ir::Shape::Array(ir::DType::kS32, {dims[rank - 2], dims[rank - 1]});
    Instruction* visible =
        b_.Compare(b_.Iota(square, 1), b_.Iota(square, 0), ir::ComparisonDirection::kLe);
    scores = b_.Select(b_.Broadcast(visible, dims, {rank - 2, rank - 1}), scores, Full(-1e4, dims));
  }
  // softmax over keys: exp(s - max) / sum exp(s - max).
  Instruction* e = b_.Exp(b_.Subtract(scores, ReduceLast(scores, ir::Opcode::kMaximum)));
  return b_.Divide(e, ReduceLast(e, ir::Opcode::kAdd));
}

Instruction* TransformerEmitter::Lookup(Instruction* table, Instruction* tokens) {
  if (table == nullptr) return nullptr;
  // A gather of [1, H] slices.
  return b_.Gather(table, tokens,
                   {.offset_dims = {2},
                    .collapsed_slice_dims = {0},
                    .start_index_map = {0},
                    .index_vector_dim = 2,
                    .operand_batching_dims = {},
                    .start_indices_batching_dims = {}},
                   {1, table->shape().dim(1)});
}

Instruction* TransformerEmitter::Embed(Instruction* wte, Instruction* wpe, Instruction* tokens) {
  return b_.Add(Lookup(wte, tokens), b_.Broadcast(wpe, {s_.batch, s_.seq, s_.hidden}, {1, 2}));
}

Instruction* TransformerEmitter::TiedLogits(Instruction* x, Instruction* wte, Instruction* bias) {
  if (wte == nullptr) return nullptr;
  const int64_t vocab = wte->shape().dim(0);
  return b_.Add(b_.Dot(x, wte, {{}, {}, {2}, {1}}),
                b_.Broadcast(bias, {s_.batch, s_.seq, vocab}, {2}));
}

Instruction* TransformerEmitter::CrossEntropy(Instruction* logits, Instruction* labels) {
  if (logits == nullptr) return nullptr;
  constexpr ir::DType kF32 = ir::DType::kF32;
  const std::vector<int64_t> dims = logits->shape().dims();
  if (logits->shape().dtype() != ir::DType::kF64) logits = b_.Convert(logits, kF32);
  const ir::DType dtype = logits->shape().dtype();
  Instruction* shifted = b_.Subtract(logits, ReduceLast(logits, ir::Opcode::kMaximum));
  // The log of the sum over the vocabulary is taken before the broadcast back to [B, S, V], as
  // jax.nn.log_softmax does (its sum keeps a dim of 1): a log over [B, S, V] is V times the work,
  // and a log is too expensive for XLA to recompute in each reader, so it would be written out.
  Instruction* log_sum = b_.Log(ReduceLastDim(b_.Exp(shifted), ir::Opcode::kAdd));
  Instruction* log_probs = b_.Subtract(shifted, BroadcastLastDim(log_sum, dims));
  // One-hot of the labels: iota over the vocab dim == label.
  Instruction* one_hot =
      b_.Compare(b_.Iota(ir::Shape::Array(ir::DType::kS32, dims), 2),
                 b_.Broadcast(labels, dims, {0, 1}), ir::ComparisonDirection::kEq);
  Instruction* zeros = b_.Broadcast(b_.ConstantScalar(dtype, 0), dims, {});
  Instruction* picked = b_.Select(one_hot, log_probs, zeros);
  Instruction* sum = b_.Sum(picked, {0, 1, 2});
  const double positions = static_cast<double>(dims[0] * dims[1]);
  return b_.Divide(b_.Negate(sum), b_.ConstantScalar(dtype, positions));
}

std::vector<ir::Literal> ProgressionTokens(int64_t rows, int64_t seq, int64_t vocab,
                                           uint64_t seed) {
  std::mt19937_64 engine(seed);
  const ir::Shape shape = ir::Shape::Array(ir::DType::kS32, {rows, seq});
  std::vector<int64_t> tokens, labels;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t start = static_cast<int64_t>(engine() % static_cast<uint64_t>(vocab));
    for (int64_t s = 0; s < seq; ++s) {
      tokens.push_back((start + 3 * s) % vocab);
      labels.push_back((start + 3 * (s + 1)) % vocab);
    }
  }
  std::vector<ir::Literal> batch;
  batch.push_back(ir::Literal::FromInts(shape, tokens));
  batch.push_back(ir::Literal::FromInts(shape, labels));
  return batch;
}

BatchGenerator ProgressionBatches(int64_t seq, int64_t vocab) {
  return [seq, vocab](int64_t rows, uint64_t seed) {
    return ProgressionTokens(rows, seq, vocab, seed);
  };
}

}  // namespace alpa::models
