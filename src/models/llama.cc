#include "models/llama.h"

#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/builder.h"
#include "ir/layer_boundary.h"
#include "models/config_check.h"
#include "models/expert_routing.h"
#include "models/transformer.h"

namespace alpa::models {

using ir::Instruction;

namespace {

// Hugging Face's initializer_range for Llama and Mixtral: every matrix normal(0, 0.02).
constexpr double kInitStddev = 0.02;
constexpr double kRmsEpsilon = 1e-5;

std::string_view FamilyOf(const LlamaConfig& config) {
  return config.experts > 0 ? "mixtral" : "llama";
}

Status CheckConfig(const LlamaConfig& config) {
  const std::string_view family = FamilyOf(config);
  ALPA_RETURN_IF_ERROR(CheckAtLeast(family, {{"batch", config.batch},
                                             {"seq", config.seq},
                                             {"hidden", config.hidden},
                                             {"layers", config.layers},
                                             {"heads", config.heads},
                                             {"kv_heads", config.kv_heads},
                                             {"ffn", config.ffn},
                                             {"vocab", config.vocab},
                                             {"max_positions", config.max_positions},
                                             {"expert_group_size", config.expert_group_size}}));
  ALPA_RETURN_IF_ERROR(CheckAtLeast(family, {{"experts", config.experts}}, 0));
  ALPA_RETURN_IF_ERROR(CheckHeadsDivideHidden(family, config.heads, config.hidden));
  if (config.heads % config.kv_heads != 0) {
    return InvalidArgument("{}: kv_heads is {}; it must divide heads ({})", family, config.kv_heads,
                           config.heads);
  }
  const int64_t head_size = config.hidden / config.heads;
  if (head_size % 2 != 0) {
    return InvalidArgument(
        "{}: the head size hidden / heads = {} is odd; rotary embeddings rotate pairs of its "
        "elements: give heads that leave an even head size",
        family, head_size);
  }
  if (config.seq > config.max_positions) {
    return InvalidArgument(
        "{}: seq is {}; the model's rotary embeddings cover {} positions (max_positions): give "
        "--seq of at most {}",
        family, config.seq, config.max_positions, config.max_positions);
  }
  if (!(config.rope_theta > 1)) {
    return InvalidArgument("{}: rope_theta is {}; it must be above 1", family, config.rope_theta);
  }
  if (config.experts > 0) {
    ALPA_RETURN_IF_ERROR(
        CheckExpertGroupSize(family, config.expert_group_size, config.batch * config.seq));
  }
  return CheckFloatType(family, config.dtype);
}

struct SwiGluWeights {
  Instruction* gate;  // [H, F], or [E, H, F] for experts
  Instruction* up;    // [H, F], or [E, H, F]
  Instruction* down;  // [F, H], or [E, F, H]
};

struct LayerWeights {
  Instruction* attn_norm;
  Instruction *q, *k, *v, *o;
  Instruction* mlp_norm;
  Instruction* router = nullptr;  // [H, E] with experts
  SwiGluWeights mlp;
};

LayerWeights DeclareLayer(ParameterDeclarer& declare, const LlamaConfig& c, int64_t layer) {
  const int64_t h = c.hidden, d = c.hidden / c.heads, f = c.ffn, e = c.experts;
  const std::string p = "layer" + std::to_string(layer) + ".";
  const WeightInit normal = WeightInit::Normal(kInitStddev);
  LayerWeights w;
  w.attn_norm = declare.Weight({h}, p + "attn_norm.scale", WeightInit::Ones());
  w.q = declare.Weight({h, c.heads * d}, p + "attn.q.w", normal);
  w.k = declare.Weight({h, c.kv_heads * d}, p + "attn.k.w", normal);
  w.v = declare.Weight({h, c.kv_heads * d}, p + "attn.v.w", normal);
  w.o = declare.Weight({c.heads * d, h}, p + "attn.o.w", normal);
  w.mlp_norm = declare.Weight({h}, p + "mlp_norm.scale", WeightInit::Ones());
  if (e > 0) {
    w.router = declare.Weight({h, e}, p + "moe.router", normal);
    w.mlp = {declare.Weight({e, h, f}, p + "moe.gate.w", normal),
             declare.Weight({e, h, f}, p + "moe.up.w", normal),
             declare.Weight({e, f, h}, p + "moe.down.w", normal)};
  } else {
    w.mlp = {declare.Weight({h, f}, p + "mlp.gate.w", normal),
             declare.Weight({h, f}, p + "mlp.up.w", normal),
             declare.Weight({f, h}, p + "mlp.down.w", normal)};
  }
  return w;
}

// Emits the blocks of llama.h on activations [batch, seq, H].
class LlamaEmitter {
 public:
  LlamaEmitter(const LlamaConfig& config, TransformerEmitter& emit, ir::ComputationBuilder& b)
      : c_(config),
        emit_(emit),
        b_(b),
        head_size_(config.hidden / config.heads),
        wide_(config.dtype == ir::DType::kF64 ? ir::DType::kF64 : ir::DType::kF32) {
    if (config.experts > 0) {
      router_.emplace(
          RoutingShape::Top2(config.batch * config.seq, config.expert_group_size, config.experts),
          config.dtype, emit, b);
    }
  }

  Instruction* RmsNorm(Instruction* scale, Instruction* x);
  Instruction* Attention(const LayerWeights& w, Instruction* x);
  Instruction* Mlp(const LayerWeights& w, Instruction* x);

 private:
  // cos and sin of s theta_i as [seq, d] tables, computed in the wide type (as Hugging Face
  // computes them in f32), then converted to the activations' type.
  std::pair<Instruction*, Instruction*> RopeTables();
  // rope(x) of llama.h on x [B, S, heads, d].
  Instruction* Rope(Instruction* x, Instruction* cos, Instruction* sin);
  Instruction* Silu(Instruction* z) { return b_.Multiply(z, b_.Logistic(z)); }
  // x as `dtype`, with no convert where it already is.
  Instruction* ConvertTo(Instruction* x, ir::DType dtype) {
    return x->shape().dtype() == dtype ? x : b_.Convert(x, dtype);
  }
  Instruction* Experts(const LayerWeights& w, Instruction* x);

  const LlamaConfig& c_;
  TransformerEmitter& emit_;
  ir::ComputationBuilder& b_;
  int64_t head_size_;
  ir::DType wide_;  // of the norms and the rotation: f64 for an f64 model, else f32
  std::optional<Top2Router> router_;  // with experts
};

Instruction* LlamaEmitter::RmsNorm(Instruction* scale, Instruction* x) {
  const std::vector<int64_t> dims = x->shape().dims();
  Instruction* xw = ConvertTo(x, wide_);
  Instruction* full =
      b_.Broadcast(b_.ConstantScalar(wide_, 1.0 / static_cast<double>(c_.hidden)), dims, {});
  Instruction* mean_square =
      b_.Multiply(emit_.ReduceLast(b_.Multiply(xw, xw), ir::Opcode::kAdd), full);
  Instruction* epsilon = b_.Broadcast(b_.ConstantScalar(wide_, kRmsEpsilon), dims, {});
  Instruction* normed =
      ConvertTo(b_.Multiply(xw, b_.Rsqrt(b_.Add(mean_square, epsilon))), c_.dtype);
  return b_.Multiply(normed, b_.Broadcast(scale, dims, {static_cast<int64_t>(dims.size()) - 1}));
}

std::pair<Instruction*, Instruction*> LlamaEmitter::RopeTables() {
  const int64_t half = head_size_ / 2;
  // theta_i = rope_theta^(-2 i / d), i < d/2, as constants computed in double precision.
  std::vector<double> inverse_frequency;
  for (int64_t i = 0; i < half; ++i) {
    inverse_frequency.push_back(
        std::pow(c_.rope_theta, -2.0 * static_cast<double>(i) / static_cast<double>(head_size_)));
  }
  Instruction* theta =
      b_.Constant(ir::Literal::FromDoubles(ir::Shape::Array(wide_, {half}), inverse_frequency));
  // angle[s, i] = s theta_i, repeated over both halves of the head: [seq, d].
  Instruction* angles = b_.Multiply(b_.Iota(ir::Shape::Array(wide_, {c_.seq, half}), 0),
                                    b_.Broadcast(theta, {c_.seq, half}, {1}));
  Instruction* both = b_.Concatenate({angles, angles}, 1);
  return {ConvertTo(b_.Unary(ir::Opcode::kCos, both), c_.dtype),
          ConvertTo(b_.Unary(ir::Opcode::kSin, both), c_.dtype)};
}

Instruction* LlamaEmitter::Rope(Instruction* x, Instruction* cos, Instruction* sin) {
  const std::vector<int64_t> dims = x->shape().dims();  // [B, S, heads, d]
  const int64_t half = head_size_ / 2;
  auto halve = [&](int64_t from) {
    return b_.Slice(x, {{0, dims[0], 1}, {0, dims[1], 1}, {0, dims[2], 1}, {from, from + half, 1}});
  };
  Instruction* rotated = b_.Concatenate({b_.Negate(halve(half)), halve(0)}, 3);
  return b_.Add(b_.Multiply(x, b_.Broadcast(cos, dims, {1, 3})),
                b_.Multiply(rotated, b_.Broadcast(sin, dims, {1, 3})));
}

Instruction* LlamaEmitter::Attention(const LayerWeights& w, Instruction* x) {
  const int64_t bsz = c_.batch, s = c_.seq, d = head_size_, m = c_.kv_heads;
  const int64_t g = c_.heads / c_.kv_heads;  // query heads per key/value head
  const auto [cos, sin] = RopeTables();
  Instruction* q = Rope(b_.Reshape(b_.MatMul(x, w.q), {bsz, s, c_.heads, d}), cos, sin);
  Instruction* k = Rope(b_.Reshape(b_.MatMul(x, w.k), {bsz, s, m, d}), cos, sin);
  Instruction* v = b_.Reshape(b_.MatMul(x, w.v), {bsz, s, m, d});
  // Query head h = j g + r reads key/value head j: q as [B, m, g, S, d], k and v as [B, m, S, d].
  // Splitting the n d columns of W_q over devices thus splits m (tensor parallelism up to m
  // devices keeps each query head with its key/value head).
  Instruction* queries = b_.Transpose(b_.Reshape(q, {bsz, s, m, g, d}), {0, 2, 3, 1, 4});
  Instruction* keys = b_.Transpose(k, {0, 2, 1, 3});
  Instruction* values = b_.Transpose(v, {0, 2, 1, 3});
  // scores[b, j, r, i, t] = q[b, j, r, i, :] . k[b, j, t, :] / sqrt(d)
  Instruction* scores = b_.Dot(queries, keys, {{0, 1}, {0, 1}, {4}, {3}});
  scores = b_.Multiply(scores,
                       emit_.Full(1.0 / std::sqrt(static_cast<double>(d)), scores->shape().dims()));
  Instruction* probs = emit_.AttentionSoftmax(scores, /*causal=*/true);
  // context[b, j, r, i, :] = sum_t probs[b, j, r, i, t] v[b, j, t, :], back to [B, S, n d].
  Instruction* context = b_.Dot(probs, values, {{0, 1}, {0, 1}, {4}, {2}});
  context = b_.Reshape(b_.Transpose(context, {0, 3, 1, 2, 4}), {bsz, s, c_.heads * d});
  return b_.MatMul(context, w.o);
}

Instruction* LlamaEmitter::Mlp(const LayerWeights& w, Instruction* x) {
  if (c_.experts > 0) return Experts(w, x);
  Instruction* gated = b_.Multiply(Silu(b_.MatMul(x, w.mlp.gate)), b_.MatMul(x, w.mlp.up));
  return b_.MatMul(gated, w.mlp.down);
}

Instruction* LlamaEmitter::Experts(const LayerWeights& w, Instruction* x) {
  const RoutingShape& shape = router_->shape();
  Instruction* tokens = b_.Reshape(x, {shape.groups, shape.group, c_.hidden});
  const Routing routing = router_->Route(w.router, tokens);
  Instruction* in = router_->Dispatch(routing, tokens);  // [E, groups, C, H]
  // einsum("egch,ehf->egcf") for the gate and up projections, einsum("egcf,efh->egch") down.
  const ir::DotDimensionNumbers per_expert = {{0}, {0}, {3}, {1}};
  Instruction* gated =
      b_.Multiply(Silu(b_.Dot(in, w.mlp.gate, per_expert)), b_.Dot(in, w.mlp.up, per_expert));
  Instruction* out = b_.Dot(gated, w.mlp.down, per_expert);
  return b_.Reshape(router_->Combine(routing, out), {c_.batch, c_.seq, c_.hidden});
}

}  // namespace

Result<Model> BuildLlama(const LlamaConfig& config) {
  ALPA_RETURN_IF_ERROR(CheckConfig(config));
  const std::string family(FamilyOf(config));
  const int64_t h = config.hidden;
  ir::ModuleBuilder mb(family);
  ir::ComputationBuilder b = mb.NewComputation(family + "_loss");

  // Weights first in the order documented in llama.h, then the batch.
  Model model;
  ParameterDeclarer declare(model, b, config.dtype);
  const WeightInit normal = WeightInit::Normal(kInitStddev);
  Instruction* embed = declare.Weight({config.vocab, h}, "embed", normal);
  std::vector<LayerWeights> layers;
  for (int64_t l = 0; l < config.layers; ++l) layers.push_back(DeclareLayer(declare, config, l));
  Instruction* final_norm = declare.Weight({h}, "final_norm.scale", WeightInit::Ones());
  Instruction* head = declare.Weight({h, config.vocab}, "lm_head", normal);
  const ir::Shape ids = ir::Shape::Array(ir::DType::kS32, {config.batch, config.seq});
  Instruction* tokens = declare.Batch(ids, "tokens");
  Instruction* labels = declare.Batch(ids, "labels");

  TransformerEmitter emit({config.batch, config.seq, h, config.heads}, config.dtype, b);
  LlamaEmitter llama(config, emit, b);
  Instruction* x = ir::EmitLayerBoundary(b, emit.Lookup(embed, tokens), {.layer = 0});
  for (int64_t l = 0; l < config.layers; ++l) {
    const LayerWeights& w = layers[static_cast<size_t>(l)];
    Instruction* y = b.Add(x, llama.Attention(w, llama.RmsNorm(w.attn_norm, x)));
    x = b.Add(y, llama.Mlp(w, llama.RmsNorm(w.mlp_norm, y)));
    x = ir::EmitLayerBoundary(b, x, {.layer = l + 1});
  }
  Instruction* logits = b.MatMul(llama.RmsNorm(final_norm, x), head);
  Instruction* loss = emit.CrossEntropy(logits, labels);
  ALPA_ASSIGN_OR_RETURN(ir::Computation * entry, b.Build(loss));
  ALPA_ASSIGN_OR_RETURN(model.loss, mb.Build(entry));
  model.batch = ProgressionBatches(config.seq, config.vocab);
  return model;
}

}  // namespace alpa::models
