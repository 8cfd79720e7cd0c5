#include "models/moe.h"

#include <string>
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
  ALPA_RETURN_IF_ERROR(
      CheckExpertGroupSize("moe", config.expert_group_size, config.batch * config.seq));
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

// Emits MoE layers (moe.h) on activations [batch, seq, H]: top-2 routing (expert_routing.h),
// then E GELU MLPs with biases, batched over E.
class MoeEmitter {
 public:
  MoeEmitter(const MoeConfig& config, TransformerEmitter& emit, ir::ComputationBuilder& b)
      : config_(config),
        emit_(emit),
        b_(b),
        router_(
            RoutingShape::Top2(config.batch * config.seq, config.expert_group_size, config.experts),
            config.dtype, emit, b) {}

  Instruction* Layer(const ExpertWeights& w, Instruction* x);

 private:
  const MoeConfig& config_;
  TransformerEmitter& emit_;
  ir::ComputationBuilder& b_;
  Top2Router router_;
};

Instruction* MoeEmitter::Layer(const ExpertWeights& w, Instruction* x) {
  const int64_t h = config_.hidden, e = config_.experts;
  const RoutingShape& shape = router_.shape();
  Instruction* tokens = b_.Reshape(x, {shape.groups, shape.group, h});
  const Routing routing = router_.Route(w.gate, tokens);
  Instruction* in = router_.Dispatch(routing, tokens);
  // hidden = gelu(einsum("egch,ehf->egcf", in, W_1) + b_1[e, f])
  Instruction* hidden = b_.Dot(in, w.fc1.w, {{0}, {0}, {3}, {1}});
  const std::vector<int64_t> hidden_dims = {e, shape.groups, shape.capacity, kMlpFactor * h};
  hidden = emit_.Gelu(b_.Add(hidden, b_.Broadcast(w.fc1.b, hidden_dims, {0, 3})));
  // out = einsum("egcf,efh->egch", hidden, W_2) + b_2[e, h]
  Instruction* out = b_.Add(b_.Dot(hidden, w.fc2.w, {{0}, {0}, {3}, {1}}),
                            b_.Broadcast(w.fc2.b, {e, shape.groups, shape.capacity, h}, {0, 3}));
  return b_.Reshape(router_.Combine(routing, out), {config_.batch, config_.seq, h});
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
  model.batch = ProgressionBatches(config.seq, config.vocab);
  return model;
}

}  // namespace alpa::models
