#include "models/gpt.h"

#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ir/builder.h"
#include "ir/layer_boundary.h"
#include "models/config_check.h"
#include "models/transformer.h"

namespace alpa::models {

using ir::Instruction;

namespace {

// GPT-2's initialisation scale, which Alpa's Flax model uses (initializer_range).
constexpr double kInitStddev = 0.02;

Status CheckConfig(const GptConfig& config) {
  ALPA_RETURN_IF_ERROR(CheckAtLeast("gpt", {{"batch", config.batch},
                                            {"seq", config.seq},
                                            {"hidden", config.hidden},
                                            {"layers", config.layers},
                                            {"heads", config.heads},
                                            {"vocab", config.vocab}}));
  ALPA_RETURN_IF_ERROR(CheckHeadsDivideHidden("gpt", config.heads, config.hidden));
  return CheckFloatType("gpt", config.dtype);
}

struct LayerWeights {
  AttentionWeights attn;
  LayerNormWeights ln1;
  Dense fc1, fc2;
  LayerNormWeights ln2;
};

// Masked-LM data for the encoder: the progression of ProgressionTokens with every 7th position
// (from a per-row offset) replaced by token 0, the mask id; each label is the original token.
std::vector<ir::Literal> MaskedTokens(int64_t rows, int64_t seq, int64_t vocab, uint64_t seed) {
  std::vector<ir::Literal> batch = ProgressionTokens(rows, seq, vocab, seed);
  ir::Literal& tokens = batch[0];
  ir::Literal& labels = batch[1];
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t s = 0; s < seq; ++s) {
      const int64_t i = r * seq + s;
      labels.SetDouble(i, tokens.GetDouble(i));
      if ((s + r) % 7 == 0) tokens.SetDouble(i, 0);
    }
  }
  return batch;
}

}  // namespace

Result<Model> BuildGpt(const GptConfig& config) {
  ALPA_RETURN_IF_ERROR(CheckConfig(config));
  const int64_t h = config.hidden;
  ir::ModuleBuilder mb(config.causal ? "gpt" : "bert");
  ir::ComputationBuilder b = mb.NewComputation(config.causal ? "gpt_loss" : "bert_loss");

  // Weights first in the order documented in gpt.h, then the batch.
  Model model;
  ParameterDeclarer declare(model, b, config.dtype);
  Instruction* wte = declare.Weight({config.vocab, h}, "wte", WeightInit::Normal(kInitStddev));
  Instruction* wpe = declare.Weight({config.seq, h}, "wpe", WeightInit::Normal(kInitStddev));
  std::vector<LayerWeights> layers;
  for (int64_t l = 0; l < config.layers; ++l) {
    const std::string p = "layer" + std::to_string(l) + ".";
    LayerWeights w;
    w.attn = declare.Attention(h, p + "attn", kInitStddev);
    w.ln1 = declare.LayerNorm(h, p + "ln1");
    w.fc1 = declare.DenseWeights(h, 4 * h, p + "fc1", kInitStddev);
    w.fc2 = declare.DenseWeights(4 * h, h, p + "fc2", kInitStddev);
    w.ln2 = declare.LayerNorm(h, p + "ln2");
    layers.push_back(w);
  }
  Instruction* lm_bias = declare.Weight({config.vocab}, "lm_bias", WeightInit::Zeros());
  const ir::Shape ids = ir::Shape::Array(ir::DType::kS32, {config.batch, config.seq});
  Instruction* tokens = declare.Batch(ids, "tokens");
  Instruction* labels = declare.Batch(ids, "labels");

  TransformerEmitter emit({config.batch, config.seq, h, config.heads}, config.dtype, b);
  Instruction* x = ir::EmitLayerBoundary(b, emit.Embed(wte, wpe, tokens), {.layer = 0});
  for (int64_t l = 0; l < config.layers; ++l) {
    const LayerWeights& w = layers[static_cast<size_t>(l)];
    Instruction* y = emit.LayerNorm(w.ln1, b.Add(x, emit.Attention(w.attn, x, config.causal)));
    x = emit.LayerNorm(w.ln2, b.Add(y, emit.Apply(w.fc2, emit.Gelu(emit.Apply(w.fc1, y)))));
    x = ir::EmitLayerBoundary(b, x, {.layer = l + 1});
  }
  Instruction* loss = emit.CrossEntropy(emit.TiedLogits(x, wte, lm_bias), labels);
  ALPA_ASSIGN_OR_RETURN(ir::Computation * entry, b.Build(loss));
  ALPA_ASSIGN_OR_RETURN(model.loss, mb.Build(entry));
  const int64_t seq = config.seq, vocab = config.vocab;
  model.batch = config.causal ? ProgressionBatches(seq, vocab)
                              : BatchGenerator([seq, vocab](int64_t rows, uint64_t seed) {
                                  return MaskedTokens(rows, seq, vocab, seed);
                                });
  return model;
}

}  // namespace alpa::models
