#include "models/llama.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "autodiff/train_step.h"
#include "interp/evaluator.h"
#include "model_gradient_check.h"
#include "model_inputs.h"
#include "models/init.h"
#include "models/zoo.h"
#include "zoo_training.h"

namespace alpa::models {
namespace {

using ::testing::HasSubstr;
using testing::UniformArguments;
using testing::ValueOf;
using testing::WeightCount;
using testing::WeightIndex;

// The count of llama.h: L (2 H n d + 2 H m d + 2 H + FFN) + 2 V H + H.
int64_t ExpectedParameterCount(const LlamaConfig& c) {
  const int64_t h = c.hidden, d = c.hidden / c.heads, f = c.ffn, e = c.experts;
  const int64_t ffn = e == 0 ? 3 * h * f : e * 3 * h * f + h * e;
  return c.layers * (2 * h * c.heads * d + 2 * h * c.kv_heads * d + 2 * h + ffn) + 2 * c.vocab * h +
         h;
}

// A tiny f64 model for the gradient checks: 8 tokens, 4 query heads over 2 key/value heads.
LlamaConfig TinyF64(int64_t experts) {
  return {.batch = 2,
          .seq = 4,
          .hidden = 8,
          .layers = 2,
          .heads = 4,
          .kv_heads = 2,
          .ffn = 12,
          .vocab = 8,
          .rope_theta = 10000,
          .experts = experts,
          .expert_group_size = 4,
          .dtype = ir::DType::kF64};
}

TEST(LlamaTest, ParameterCountAndOrderAreTheDocumentedOnes) {
  for (const LlamaConfig& config : {LlamaConfig{}, TinyF64(0), TinyF64(3)}) {
    Result<Model> model = BuildLlama(config);
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    EXPECT_EQ(WeightCount(*model), ExpectedParameterCount(config));
    // 9 weights per dense layer, 10 with experts; the embedding, final norm and head; the batch.
    const size_t per_layer = config.experts > 0 ? 10 : 9;
    const size_t n = 3 + per_layer * static_cast<size_t>(config.layers);
    const std::vector<ir::Instruction*> parameters = model->loss->entry()->parameters();
    ASSERT_EQ(model->weights.size(), n);
    ASSERT_EQ(parameters.size(), n + 2);
    EXPECT_EQ(parameters[0]->name(), "embed");
    EXPECT_EQ(parameters[1]->name(), "layer0.attn_norm.scale");
    EXPECT_EQ(parameters[3]->name(), "layer0.attn.k.w");
    EXPECT_EQ(
        parameters[3]->shape().dims(),
        (std::vector<int64_t>{config.hidden, config.kv_heads * (config.hidden / config.heads)}));
    EXPECT_EQ(parameters[n - 2]->name(), "final_norm.scale");
    EXPECT_EQ(parameters[n - 1]->name(), "lm_head");
    EXPECT_EQ(parameters[n]->name(), "tokens");
  }
  // The default by hand: H 16, d 4, 4 query and 2 key/value heads, F 32, V 32, 2 layers:
  // per layer 2*16*16 + 2*16*8 + 2*16 + 3*16*32 = 512 + 256 + 32 + 1536 = 2336; embed and head
  // 2*32*16 = 1024; final norm 16.
  EXPECT_EQ(ExpectedParameterCount({}), 2 * 2336 + 1024 + 16);
}

// The published counts (Meta's and Mistral's model cards, the sums of their checkpoints'
// tensors), built as graphs only.
TEST(LlamaTest, NamedSizesHaveThePublishedParameterCounts) {
  const std::pair<const char*, int64_t> published[] = {{"llama3-8b", 8'030'261'248},
                                                       {"llama3-70b", 70'553'706'496},
                                                       {"llama3-405b", 405'853'388'800},
                                                       {"mixtral-8x7b", 46'702'792'704},
                                                       {"mixtral-8x22b", 140'620'634'112}};
  for (const auto& [name, count] : published) {
    Result<ZooModel> zoo = BuildZooModel(name);
    ASSERT_TRUE(zoo.ok()) << name << ": " << zoo.status().ToString();
    EXPECT_EQ(WeightCount(zoo->model), count) << name;
    EXPECT_EQ(zoo->model.loss->entry()->parameters()[0]->shape().dtype(), ir::DType::kBF16);
  }
}

// The gradient of the whole model against central differences in f64, dense and with 3 experts
// of 4 slots per group of 4 tokens (some choices overflow). Weights uniform in +-0.2 keep the
// router's top-2 choices away from ties, so the perturbation flips none.
TEST(LlamaTest, GradientMatchesFiniteDifferences) {
  for (int64_t experts : {0, 3}) {
    SCOPED_TRACE(::testing::Message() << "experts " << experts);
    const LlamaConfig config = TinyF64(experts);
    Result<Model> model = BuildLlama(config);
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    testing::ExpectModelGradientMatchesFiniteDifferences(
        *model, UniformArguments(*model, config.batch, 0.2));
  }
}

// Grouped-query attention: query head h reads key/value head h / (heads / kv_heads). A model with
// 4 query heads over 2 key/value heads equals one with 4 of each whose key/value heads 2j and
// 2j + 1 both copy the first model's head j; pairing h with h mod 2 instead would differ.
TEST(LlamaTest, QueryHeadsReadTheirGroupsKeyValueHead) {
  LlamaConfig grouped = TinyF64(0);
  LlamaConfig full = grouped;
  full.kv_heads = full.heads;
  Result<Model> grouped_model = BuildLlama(grouped);
  Result<Model> full_model = BuildLlama(full);
  ASSERT_TRUE(grouped_model.ok() && full_model.ok());
  std::vector<ir::Literal> grouped_arguments = UniformArguments(*grouped_model, grouped.batch, 0.5);
  std::vector<ir::Literal> full_arguments = UniformArguments(*full_model, full.batch, 0.5);
  const int64_t h = grouped.hidden, d = grouped.hidden / grouped.heads;
  for (size_t k = 0; k < full_model->weights.size(); ++k) {
    const std::string name =
        full_model->loss->entry()->parameters()[full_model->weights[k]]->name();
    const ir::Literal& from = grouped_arguments[WeightIndex(*grouped_model, name)];
    ir::Literal& to = full_arguments[k];
    const bool key_or_value = name.ends_with("attn.k.w") || name.ends_with("attn.v.w");
    if (!key_or_value) {
      to = from;
      continue;
    }
    // [H, 4 d] from [H, 2 d]: column (head, i) of the full model is column (head / 2, i).
    for (int64_t row = 0; row < h; ++row) {
      for (int64_t head = 0; head < full.kv_heads; ++head) {
        for (int64_t i = 0; i < d; ++i) {
          to.SetDouble(row * full.kv_heads * d + head * d + i,
                       from.GetDouble(row * grouped.kv_heads * d + (head / 2) * d + i));
        }
      }
    }
  }
  Result<ir::Literal> grouped_loss =
      interp::EvaluateModule(*grouped_model->loss, grouped_arguments);
  Result<ir::Literal> full_loss = interp::EvaluateModule(*full_model->loss, full_arguments);
  ASSERT_TRUE(grouped_loss.ok() && full_loss.ok());
  EXPECT_NEAR(grouped_loss->GetDouble(0), full_loss->GetDouble(0), 1e-12);
}

// Rotary embeddings make attention relative: when every position holds the same token, the
// score of query position i for key position j depends on i - j alone (scores[i][j] ==
// scores[i+1][j+1]), and not trivially so (different offsets score differently).
TEST(LlamaTest, RotaryScoresDependOnlyOnTheRelativePosition) {
  const LlamaConfig config = TinyF64(0);
  Result<Model> model = BuildLlama(config);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  // The first layer's scores: the first dot whose result is [B, m, g, S, S].
  const std::vector<int64_t> score_dims = {config.batch, config.kv_heads,
                                           config.heads / config.kv_heads, config.seq, config.seq};
  ir::Instruction* scores = nullptr;
  for (const auto& instruction : model->loss->entry()->instructions()) {
    if (instruction->opcode() == ir::Opcode::kDot && instruction->shape().dims() == score_dims) {
      scores = instruction.get();
      break;
    }
  }
  ASSERT_NE(scores, nullptr);
  std::vector<ir::Literal> arguments = UniformArguments(*model, config.batch, 0.5);
  ir::Literal& tokens = arguments[model->weights.size()];
  for (int64_t i = 0; i < tokens.element_count(); ++i) tokens.SetDouble(i, 3);
  const ir::Literal value = ValueOf(*model, scores, arguments);
  const int64_t s = config.seq;
  const int64_t pairs = value.element_count() / (s * s);
  double spread = 0;
  for (int64_t p = 0; p < pairs; ++p) {
    auto at = [&](int64_t i, int64_t j) { return value.GetDouble((p * s + i) * s + j); };
    for (int64_t i = 0; i + 1 < s; ++i) {
      for (int64_t j = 0; j + 1 < s; ++j) {
        EXPECT_NEAR(at(i, j), at(i + 1, j + 1), 1e-12)
            << "head pair " << p << " at " << i << "," << j;
      }
    }
    spread = std::max(spread, std::abs(at(s - 1, 0) - at(0, 0)));
  }
  EXPECT_GT(spread, 1e-3) << "scores at different offsets should differ";
}

TEST(LlamaTest, BadConfigsNameTheField) {
  LlamaConfig config;
  config.kv_heads = 3;
  EXPECT_THAT(BuildLlama(config).status().message(),
              HasSubstr("llama: kv_heads is 3; it must divide heads (4)"));
  config = {};
  config.heads = 8;  // hidden 16: head size 2
  config.kv_heads = 8;
  EXPECT_TRUE(BuildLlama(config).ok());
  config.hidden = 24;  // head size 3
  EXPECT_THAT(BuildLlama(config).status().message(), HasSubstr("head size hidden / heads = 3"));
  config = {};
  config.seq = 10;
  config.max_positions = 8;
  EXPECT_THAT(BuildLlama(config).status().message(),
              HasSubstr("llama: seq is 10; the model's rotary embeddings cover 8 positions"));
  config = {};
  config.experts = 2;
  config.expert_group_size = 5;
  EXPECT_THAT(BuildLlama(config).status().message(),
              HasSubstr("mixtral: expert_group_size is 5; it must divide the batch*seq = 32"));
  config = {};
  config.dtype = ir::DType::kS32;
  EXPECT_THAT(BuildLlama(config).status().message(), HasSubstr("not a float type"));
  // Through the zoo: a Llama has no experts to override, and its RoPE covers 8192 positions.
  ZooOverrides experts;
  experts.experts = 4;
  EXPECT_THAT(BuildZooModel("llama3-8b", experts).status().message(),
              HasSubstr("llama3-8b is a llama model, which has no --experts to override"));
  EXPECT_TRUE(BuildZooModel("mixtral-tiny", experts).ok());
  ZooOverrides long_sequence;
  long_sequence.seq = 16384;
  EXPECT_THAT(BuildZooModel("llama3-8b", long_sequence).status().message(),
              HasSubstr("seq is 16384; the model's rotary embeddings cover 8192 positions"));
}

// Trained in bf16 with an f32 master copy, dense and with experts.
TEST(LlamaTest, BuildsInBfloat16) {
  for (int64_t experts : {0, 4}) {
    Result<Model> model = BuildLlama({.experts = experts, .dtype = ir::DType::kBF16});
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    testing::ExpectHalfPrecisionModelTrains(*model, 32);
  }
}

// The tiny variants learn the next token of a progression with their zoo training options: over
// 50 steps, each on a fresh batch, the mean loss of the last 5 falls below 70% of the first 5's.
TEST(LlamaTest, TinyVariantsTrain) {
  for (const char* name : {"llama-tiny", "mixtral-tiny"}) {
    const std::vector<double> losses = testing::TrainZooModel(name, 50, 1, 1);
    ASSERT_EQ(losses.size(), 50u) << name;
    const testing::FirstAndLast means = testing::MeansOfFirstAndLast(losses, 5);
    EXPECT_LT(means.last, 0.7 * means.first) << name;
  }
}

}  // namespace
}  // namespace alpa::models
