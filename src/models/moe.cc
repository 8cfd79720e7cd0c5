#include "models/moe.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "ir/builder.h"
#include "ir/layer_boundary.h"
#include "models/config_check.h"
#include "models/transformer.h"

namespace alpa::models {

using ir::ComparisonDirection;
using ir::Instruction;
using ir::Opcode;

namespace {

// GPT-2's initialisation scale (gpt.cc), for every matrix including the gate and the experts.
constexpr double kInitStddev = 0.02;
// Alpa's MoE benchmark: MLPs (dense and expert) are hidden -> 8 hidden -> hidden.
constexpr int64_t kMlpFactor = 8;

Status CheckConfig(const MoeConfig& config) {
  ALPA_RETURN_IF_ERROR(CheckAtLeast("moe", {{"batch", config.batch},
                                            {"seq", config.seq},
                                            {"hidden", config.hidden},
                                            {"layers", config.layers},
                                            {"heads", config.heads},
                                            {"vocab", config.vocab},
                                            {"experts", config.experts},
                                            {"expert_group_size", config.expert_group_size}}));
  ALPA_RETURN_IF_ERROR(CheckHeadsDivideHidden("moe", config.heads, config.hidden));
  const int64_t tokens = config.batch * config.seq;
  if (tokens % std::min(config.expert_group_size, tokens) != 0) {
    return InvalidArgument(
        "moe: expert_group_size is {}; it must divide the batch*seq = {} tokens of a batch",
        config.expert_group_size, tokens);
  }
  return CheckFloatType("moe", config.dtype);
}

// The weights of one MoE layer: the gate [H, E] and E expert MLPs stacked along dimension 0.
struct ExpertWeights {
  Instruction* gate;
  Dense fc1;  // [E, H, 8H], [E, 8H]
  Dense fc2;  // [E, 8H, H], [E, H]
};

// One block: attention, then a dense MLP (fc1, fc2) or an MoE layer (experts).
struct BlockWeights {
  AttentionWeights attn;
  LayerNormWeights ln1;
  Dense fc1{}, fc2{};
  ExpertWeights experts{};
  LayerNormWeights ln2;
};

bool IsMoeBlock(int64_t block) { return block % 2 == 1; }

BlockWeights DeclareBlock(ParameterDeclarer& declare, const MoeConfig& config, int64_t block) {
  const int64_t h = config.hidden, f = kMlpFactor * config.hidden, e = config.experts;
  const std::string p = "layer" + std::to_string(block) + ".";
  BlockWeights w;
  w.attn = declare.Attention(h, p + "attn", kInitStddev);
  w.ln1 = declare.LayerNorm(h, p + "ln1");
  if (IsMoeBlock(block)) {
    const WeightInit normal = WeightInit::Normal(kInitStddev);
    w.experts.gate = declare.Weight({h, e}, p + "moe.gate", normal);
    w.experts.fc1 = {declare.Weight({e, h, f}, p + "moe.fc1.w", normal),
                     declare.Weight({e, f}, p + "moe.fc1.b", WeightInit::Zeros())};
    w.experts.fc2 = {declare.Weight({e, f, h}, p + "moe.fc2.w", normal),
                     declare.Weight({e, h}, p + "moe.fc2.b", WeightInit::Zeros())};
  } else {
    w.fc1 = declare.DenseWeights(h, f, p + "fc1", kInitStddev);
    w.fc2 = declare.DenseWeights(f, h, p + "fc2", kInitStddev);
  }
  w.ln2 = declare.LayerNorm(h, p + "ln2");
  return w;
}

// The routing of one MoE layer, both [groups, G, E, C] of the activations' type.
struct Routing {
  Instruction* combine;   // the weight of expert e's slot c in token s's output
  Instruction* dispatch;  // 1 where token s occupies slot c of expert e
};

// Emits MoE layers (moe.h) on activations [batch, seq, H]. Gating (softmax, top-2, slots) runs
// in f32 (f64 for an f64 model), dispatch, experts and combine in the activations' type.
class MoeEmitter {
 public:
  MoeEmitter(const MoeConfig& config, TransformerEmitter& emit, ir::ComputationBuilder& b)
      : config_(config),
        emit_(emit),
        b_(b),
        group_(std::min(config.expert_group_size, config.batch * config.seq)),
        groups_(config.batch * config.seq / group_),
        capacity_((2 * group_ + config.experts - 1) / config.experts),
        gating_(config.dtype == ir::DType::kF64 ? ir::DType::kF64 : ir::DType::kF32) {}

  Instruction* Layer(const ExpertWeights& w, Instruction* x);

 private:
  Routing Route(Instruction* gate, Instruction* x);
  // one_hot(argmax_e scores[g, s, e]) as pred [groups, G, E], ties to the lowest e.
  Instruction* ArgMaxMask(Instruction* scores);
  // pos[g, s, e] = sum_{s' < s} mask[g, s', e], of the gating type.
  Instruction* ExclusiveCumsum(Instruction* mask);
  // [g, s, e, c]: mask[g, s, e] and c == pos[g, s, e].
  Instruction* Slots(Instruction* mask, Instruction* pos);
  Instruction* Full(ir::DType dtype, double value, std::vector<int64_t> dims) {
    return b_.Broadcast(b_.ConstantScalar(dtype, value), std::move(dims), {});
  }

  const MoeConfig& config_;
  TransformerEmitter& emit_;
  ir::ComputationBuilder& b_;
  int64_t group_;     // G, tokens per group
  int64_t groups_;    // batch * seq / G
  int64_t capacity_;  // C = ceil(2 G / E), slots per expert and group
  ir::DType gating_;
};

Instruction* MoeEmitter::ArgMaxMask(Instruction* scores) {
  const int64_t e = config_.experts;
  const std::vector<int64_t> dims = {groups_, group_, e};
  Instruction* iota = b_.Iota(ir::Shape::Array(ir::DType::kS32, dims), 2);
  Instruction* is_max =
      b_.Compare(scores, emit_.ReduceLast(scores, Opcode::kMaximum), ComparisonDirection::kEq);
  // first[g, s] = min{e : scores[g, s, e] is the maximum}
  Instruction* candidates = b_.Select(is_max, iota, Full(ir::DType::kS32, e, dims));
  Instruction* first =
      b_.Reduce(candidates, b_.ConstantScalar(ir::DType::kS32, e), {2},
                b_.module_builder().ScalarReducer(Opcode::kMinimum, ir::DType::kS32));
  return b_.Compare(iota, b_.Broadcast(first, dims, {0, 1}), ComparisonDirection::kEq);
}

Instruction* MoeEmitter::ExclusiveCumsum(Instruction* mask) {
  // lower[s, s'] = 1 where s' < s;  pos = einsum("st,gte->gse", lower, mask)
  const ir::Shape square = ir::Shape::Array(ir::DType::kS32, {group_, group_});
  Instruction* lower = b_.Convert(
      b_.Compare(b_.Iota(square, 1), b_.Iota(square, 0), ComparisonDirection::kLt), gating_);
  Instruction* sums = b_.Dot(lower, b_.Convert(mask, gating_), {{}, {}, {1}, {1}});
  return b_.Transpose(sums, {1, 0, 2});
}

Instruction* MoeEmitter::Slots(Instruction* mask, Instruction* pos) {
  const std::vector<int64_t> dims = {groups_, group_, config_.experts, capacity_};
  Instruction* slot = b_.Iota(ir::Shape::Array(gating_, dims), 3);
  Instruction* at_pos =
      b_.Compare(b_.Broadcast(pos, dims, {0, 1, 2}), slot, ComparisonDirection::kEq);
  return b_.Binary(Opcode::kAnd, b_.Broadcast(mask, dims, {0, 1, 2}), at_pos);
}

Routing MoeEmitter::Route(Instruction* gate, Instruction* x) {
  const int64_t e = config_.experts;
  const std::vector<int64_t> dims = {groups_, group_, e};
  // probs = softmax_e(einsum("gsh,he->gse", x, gate))
  Instruction* logits = b_.Convert(b_.MatMul(x, gate), gating_);
  Instruction* exp = b_.Exp(b_.Subtract(logits, emit_.ReduceLast(logits, Opcode::kMaximum)));
  Instruction* probs = b_.Divide(exp, emit_.ReduceLast(exp, Opcode::kAdd));
  // Top-2: the first choice, then the best of the others (probs >= 0 > -1).
  Instruction* first = ArgMaxMask(probs);
  Instruction* second = ArgMaxMask(b_.Select(first, Full(gating_, -1, dims), probs));
  // Slots: first choices in token order, then second choices behind all first choices.
  Instruction* first_count = b_.Sum(b_.Convert(first, gating_), {1});
  Instruction* pos_1 = ExclusiveCumsum(first);
  Instruction* pos_2 = b_.Add(ExclusiveCumsum(second), b_.Broadcast(first_count, dims, {0, 2}));
  Instruction* slots = b_.Binary(Opcode::kOr, Slots(first, pos_1), Slots(second, pos_2));
  // Combine weights: the chosen experts' probabilities normalised over the two.
  Instruction* zeros = Full(gating_, 0, dims);
  Instruction* chosen = b_.Add(emit_.ReduceLast(b_.Select(first, probs, zeros), Opcode::kAdd),
                               emit_.ReduceLast(b_.Select(second, probs, zeros), Opcode::kAdd));
  const std::vector<int64_t> slot_dims = {groups_, group_, e, capacity_};
  Instruction* combine =
      b_.Select(slots, b_.Broadcast(b_.Divide(probs, chosen), slot_dims, {0, 1, 2}),
                Full(gating_, 0, slot_dims));
  Instruction* dispatch =
      b_.Compare(combine, Full(gating_, 0, slot_dims), ComparisonDirection::kGt);
  return {b_.Convert(combine, config_.dtype), b_.Convert(dispatch, config_.dtype)};
}

Instruction* MoeEmitter::Layer(const ExpertWeights& w, Instruction* x) {
  const int64_t h = config_.hidden, e = config_.experts;
  Instruction* tokens = b_.Reshape(x, {groups_, group_, h});
  const Routing routing = Route(w.gate, tokens);
  // in = einsum("gsec,gsh->egch", dispatch, x)
  Instruction* in =
      b_.Transpose(b_.Dot(routing.dispatch, tokens, {{0}, {0}, {1}, {1}}), {1, 0, 2, 3});
  // hidden = gelu(einsum("egch,ehf->egcf", in, W_1) + b_1[e, f])
  Instruction* hidden = b_.Dot(in, w.fc1.w, {{0}, {0}, {3}, {1}});
  const std::vector<int64_t> hidden_dims = {e, groups_, capacity_, kMlpFactor * h};
  hidden = emit_.Gelu(b_.Add(hidden, b_.Broadcast(w.fc1.b, hidden_dims, {0, 3})));
  // out = einsum("egcf,efh->egch", hidden, W_2) + b_2[e, h]
  Instruction* out = b_.Add(b_.Dot(hidden, w.fc2.w, {{0}, {0}, {3}, {1}}),
                            b_.Broadcast(w.fc2.b, {e, groups_, capacity_, h}, {0, 3}));
  // y = einsum("gsec,egch->gsh", combine, out)
  Instruction* y = b_.Dot(routing.combine, out, {{0}, {1}, {2, 3}, {0, 2}});
  return b_.Reshape(y, {config_.batch, config_.seq, h});
}

}  // namespace

Result<Model> BuildMoe(const MoeConfig& config) {
  ALPA_RETURN_IF_ERROR(CheckConfig(config));
  ir::ModuleBuilder mb("moe");
  ir::ComputationBuilder b = mb.NewComputation("moe_loss");

  // Weights first in the order documented in moe.h, then the batch.
  Model model;
  ParameterDeclarer declare(model, b, config.dtype);
  const int64_t h = config.hidden;
  Instruction* wte = declare.Weight({config.vocab, h}, "wte", WeightInit::Normal(kInitStddev));
  Instruction* wpe = declare.Weight({config.seq, h}, "wpe", WeightInit::Normal(kInitStddev));
  std::vector<BlockWeights> blocks;
  for (int64_t l = 0; l < config.layers; ++l) blocks.push_back(DeclareBlock(declare, config, l));
  Instruction* lm_bias = declare.Weight({config.vocab}, "lm_bias", WeightInit::Zeros());
  const ir::Shape ids = ir::Shape::Array(ir::DType::kS32, {config.batch, config.seq});
  Instruction* tokens = declare.Batch(ids, "tokens");
  Instruction* labels = declare.Batch(ids, "labels");

  TransformerEmitter emit({config.batch, config.seq, h, config.heads}, config.dtype, b);
  MoeEmitter moe(config, emit, b);
  Instruction* x = ir::EmitLayerBoundary(b, emit.Embed(wte, wpe, tokens), {.layer = 0});
  for (int64_t l = 0; l < config.layers; ++l) {
    const BlockWeights& w = blocks[static_cast<size_t>(l)];
    Instruction* y = emit.LayerNorm(w.ln1, b.Add(x, emit.Attention(w.attn, x, /*causal=*/true)));
    Instruction* mlp = IsMoeBlock(l) ? moe.Layer(w.experts, y)
                                     : emit.Apply(w.fc2, emit.Gelu(emit.Apply(w.fc1, y)));
    x = ir::EmitLayerBoundary(b, emit.LayerNorm(w.ln2, b.Add(y, mlp)), {.layer = l + 1});
  }
  Instruction* loss = emit.CrossEntropy(emit.TiedLogits(x, wte, lm_bias), labels);
  ALPA_ASSIGN_OR_RETURN(ir::Computation * entry, b.Build(loss));
  ALPA_ASSIGN_OR_RETURN(model.loss, mb.Build(entry));
  const int64_t seq = config.seq, vocab = config.vocab;
  model.batch = [seq, vocab](int64_t rows, uint64_t seed) {
    return ProgressionTokens(rows, seq, vocab, seed);
  };
  return model;
}

}  // namespace alpa::models
