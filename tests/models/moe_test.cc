#include "models/moe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "autodiff/grad.h"
#include "autodiff/train_step.h"
#include "interp/evaluator.h"
#include "interp/random_inputs.h"
#include "ir/layer_boundary.h"
#include "model_gradient_check.h"
#include "model_inputs.h"
#include "models/init.h"
#include "models/zoo.h"
#include "zoo_training.h"

namespace alpa::models {
namespace {

using ::testing::HasSubstr;
using testing::ValueOf;
using testing::WeightCount;
using testing::WeightIndex;

// Alpa's compute_moe_parameter_count (mlp_factor 8, tied embedding), for an even layer count.
int64_t AlpaFormula(const MoeConfig& c) {
  const int64_t h = c.hidden, e = c.experts;
  const int64_t attention_and_norms = h * (3 * h + 1) + h * (h + 1) + 4 * h;
  const int64_t mlp = h * (8 * h + 1) + 8 * h * (h + 1);
  return c.layers / 2 * (attention_and_norms + mlp) +
         c.layers / 2 * (attention_and_norms + e * mlp) + c.vocab * (c.hidden + 1);
}

// The count of moe.h: ceil(L/2) dense and floor(L/2) MoE blocks, the tied embedding with its
// output bias, and the position embedding.
int64_t ExpectedParameterCount(const MoeConfig& c) {
  const int64_t h = c.hidden, e = c.experts;
  const int64_t dense = 20 * h * h + 17 * h;
  const int64_t moe = 4 * h * h + 8 * h + h * e + e * (16 * h * h + 9 * h);
  return (c.layers + 1) / 2 * dense + c.layers / 2 * moe + c.vocab * (h + 1) + c.seq * h;
}

// The weights uniform in +-scale, then the model's own batch.
std::vector<ir::Literal> Arguments(const Model& model, const MoeConfig& c, double scale) {
  return testing::UniformArguments(model, c.batch, scale);
}

// A tiny f64 model for the gradient checks: 8 tokens, E experts, groups of G tokens.
MoeConfig TinyF64(int64_t experts, int64_t group) {
  return {.batch = 2,
          .seq = 4,
          .hidden = 8,
          .layers = 2,
          .heads = 2,
          .vocab = 8,
          .experts = experts,
          .expert_group_size = group,
          .dtype = ir::DType::kF64};
}

TEST(MoeTest, ParameterCountIsTheDocumentedExpression) {
  // The default, an odd layer count (two dense blocks, one MoE block), a single expert.
  const MoeConfig odd{.batch = 2,
                      .seq = 6,
                      .hidden = 12,
                      .layers = 3,
                      .heads = 3,
                      .vocab = 10,
                      .experts = 3,
                      .expert_group_size = 4};
  const MoeConfig single{.hidden = 8, .layers = 4, .experts = 1};
  for (const MoeConfig& config : {MoeConfig{}, odd, single}) {
    Result<Model> model = BuildMoe(config);
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    EXPECT_EQ(WeightCount(*model), ExpectedParameterCount(config));
    // 12 weights per dense block, 13 per MoE block, wte, wpe and lm_bias; then the batch.
    const std::vector<ir::Instruction*> parameters = model->loss->entry()->parameters();
    const size_t n =
        3 + 12 * static_cast<size_t>(config.layers) + static_cast<size_t>(config.layers / 2);
    ASSERT_EQ(model->weights.size(), n);
    ASSERT_EQ(parameters.size(), n + 2);
    EXPECT_EQ(parameters[0]->name(), "wte");
    EXPECT_EQ(parameters[n - 1]->name(), "lm_bias");
    EXPECT_EQ(parameters[n]->name(), "tokens");
    EXPECT_EQ(parameters[n + 1]->name(), "labels");
    EXPECT_EQ(parameters[n + 1]->shape().dtype(), ir::DType::kS32);
  }
  // The default by hand: dense block 20*256 + 17*16 = 5392; MoE block 4*256 + 8*16 + 16*4 +
  // 4 (16*256 + 9*16) = 18176; wte and lm_bias 32*17 = 544; wpe 8*16 = 128.
  EXPECT_EQ(ExpectedParameterCount({}), 5392 + 18176 + 544 + 128);
  // What Alpa's formula leaves out: S H, 2H of qkv bias per block, the gate H E per MoE block.
  const MoeConfig even{.hidden = 24, .layers = 4, .experts = 6};
  EXPECT_EQ(ExpectedParameterCount(even), AlpaFormula(even) + even.seq * even.hidden +
                                              2 * even.hidden * even.layers +
                                              even.hidden * even.experts * even.layers / 2);
}

// The named sizes (suite_manual_moe.py: S 1024, V 32000), built as graphs only.
TEST(MoeTest, NamedSizesMatchAlpasFormula) {
  struct Size {
    const char* name;
    int64_t hidden, layers, experts;
  };
  for (const Size& size :
       {Size{"moe-380m", 768, 8, 8}, Size{"moe-690m", 768, 8, 16}, Size{"moe-1.3b", 768, 16, 16},
        Size{"moe-2.4b", 1024, 16, 16}, Size{"moe-7.1b", 1280, 16, 32},
        Size{"moe-10b", 1536, 16, 32}, Size{"moe-27b", 2048, 16, 48}, Size{"moe-70b", 2048, 32, 64},
        Size{"moe-140b", 2048, 32, 128}}) {
    Result<ZooModel> zoo = BuildZooModel(size.name);
    ASSERT_TRUE(zoo.ok()) << size.name << ": " << zoo.status().ToString();
    const MoeConfig config{.seq = 1024,
                           .hidden = size.hidden,
                           .layers = size.layers,
                           .vocab = 32000,
                           .experts = size.experts};
    const int64_t count = WeightCount(zoo->model);
    EXPECT_EQ(count, ExpectedParameterCount(config)) << size.name;
    const double alpa = static_cast<double>(AlpaFormula(config));
    EXPECT_NEAR(static_cast<double>(count) / alpa, 1.0, 0.005) << size.name;
    RecordProperty(std::string(size.name) + "_parameters", std::to_string(count));
    RecordProperty(std::string(size.name) + "_alpa_formula", std::to_string(AlpaFormula(config)));
  }
}

// The gradient of the whole model against central differences in f64, at a few elements of
// every weight: once with E = 4 and C = 2 slots per group of 4 tokens (some choices overflow),
// once with E = 2 and C = G (every token goes to both experts and fits). Weights uniform in
// +-0.2 make the gate's probabilities differ by far more than the perturbation moves them, so no
// top-2 choice flips.
TEST(MoeTest, GradientMatchesFiniteDifferences) {
  for (const MoeConfig& config : {TinyF64(4, 4), TinyF64(2, 8)}) {
    Result<Model> model = BuildMoe(config);
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    SCOPED_TRACE(::testing::Message() << "experts " << config.experts);
    const ir::Literal result = testing::ExpectModelGradientMatchesFiniteDifferences(
        *model, Arguments(*model, config, 0.2));
    ASSERT_TRUE(result.shape().IsTuple());
    // The gate is trained: its gradient is not zero.
    const ir::Literal& gate =
        result.tuple_element(static_cast<int64_t>(WeightIndex(*model, "layer1.moe.gate")) + 1);
    double gate_norm = 0;
    for (int64_t i = 0; i < gate.element_count(); ++i) gate_norm += std::abs(gate.GetDouble(i));
    EXPECT_GT(gate_norm, 1e-6) << "experts " << config.experts;
  }
}

// Dispatch and combine are consistent: with two identical experts and a group that fits (every
// token in both experts), each token's output is the expert's output times its two combine
// weights, which sum to 1, so the gate changes nothing and its gradient is zero. Two slots of a
// token holding different inputs (a wrong slot in dispatch or combine) would make the output
// depend on the gate.
TEST(MoeTest, IdenticalExpertsMakeTheGateIrrelevant) {
  const MoeConfig config = TinyF64(2, 8);
  Result<Model> model = BuildMoe(config);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  std::vector<ir::Literal> inputs = Arguments(*model, config, 0.2);
  for (const char* name :
       {"layer1.moe.fc1.w", "layer1.moe.fc1.b", "layer1.moe.fc2.w", "layer1.moe.fc2.b"}) {
    ir::Literal& w = inputs[WeightIndex(*model, name)];
    const int64_t half = w.element_count() / 2;  // expert 1 := expert 0
    for (int64_t i = 0; i < half; ++i) w.SetDouble(half + i, w.GetDouble(i));
  }
  Result<std::unique_ptr<ir::Module>> grad = autodiff::Grad(*model->loss, model->weights);
  ASSERT_TRUE(grad.ok()) << grad.status().ToString();
  Result<ir::Literal> result = interp::EvaluateModule(**grad, inputs);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const ir::Literal& gate =
      result->tuple_element(static_cast<int64_t>(WeightIndex(*model, "layer1.moe.gate")) + 1);
  for (int64_t i = 0; i < gate.element_count(); ++i) {
    EXPECT_NEAR(gate.GetDouble(i), 0.0, 1e-12) << "gate element " << i;
  }
}

// The routing (moe.h) read from the model's combine and dispatch tensors [groups, G, E, C]: E 4
// experts of C = ceil(2 * 8 / 4) = 4 slots for the two choices of G = 8 tokens, so that
// unbalanced choices overflow. Each slot holds at most one token; an expert's slots fill from 0,
// first choices (combine weight above 1/2) in token order, then second choices in token order;
// a token has at most one slot per expert, and weights summing to 1 when both choices fit.
TEST(MoeTest, RoutingFillsSlotsInOrderAndDropsTheOverflow) {
  const MoeConfig config{.batch = 2,
                         .seq = 8,
                         .hidden = 8,
                         .layers = 2,
                         .heads = 2,
                         .vocab = 16,
                         .experts = 4,
                         .expert_group_size = 8,
                         .dtype = ir::DType::kF64};
  Result<Model> model = BuildMoe(config);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const int64_t groups = 2, g = 8, e = 4, c = 4, h = 8;
  const std::vector<int64_t> slots = {groups, g, e, c};
  ir::Instruction* combine_value = nullptr;
  ir::Instruction* dispatch_value = nullptr;
  for (const auto& instruction : model->loss->entry()->instructions()) {
    if (instruction->opcode() != ir::Opcode::kDot) continue;
    if (instruction->operand(0)->shape().dims() != slots) continue;
    if (instruction->shape().dims() == std::vector<int64_t>{groups, g, h}) {
      combine_value = instruction->operand(0);
    } else {
      dispatch_value = instruction->operand(0);
    }
  }
  ASSERT_NE(combine_value, nullptr);
  ASSERT_NE(dispatch_value, nullptr);
  // Token embeddings 5x the other weights, so that the choices depend on the token: with these
  // weights all four experts are chosen, second choices get slots and some choices overflow.
  std::vector<ir::Literal> arguments = Arguments(*model, config, 0.2);
  ir::Literal& wte = arguments[WeightIndex(*model, "wte")];
  for (int64_t i = 0; i < wte.element_count(); ++i) wte.SetDouble(i, 5 * wte.GetDouble(i));
  const ir::Literal combine = ValueOf(*model, combine_value, arguments);
  const ir::Literal dispatch = ValueOf(*model, dispatch_value, arguments);
  ASSERT_EQ(combine.element_count(), groups * g * e * c);
  ASSERT_EQ(dispatch.element_count(), groups * g * e * c);
  auto at = [&](const ir::Literal& value, int64_t group, int64_t s, int64_t x, int64_t slot) {
    return value.GetDouble(((group * g + s) * e + x) * c + slot);
  };
  int64_t kept = 0, kept_second = 0;
  for (int64_t group = 0; group < groups; ++group) {
    for (int64_t x = 0; x < e; ++x) {
      // (second choice?, token) of the slots' occupants in slot order: strictly increasing.
      std::vector<std::pair<bool, int64_t>> occupants;
      for (int64_t slot = 0; slot < c; ++slot) {
        int64_t tokens = 0;
        for (int64_t s = 0; s < g; ++s) {
          const double weight = at(combine, group, s, x, slot);
          EXPECT_EQ(at(dispatch, group, s, x, slot), weight > 0 ? 1.0 : 0.0);
          if (weight > 0) {
            ++tokens;
            occupants.push_back({weight < 0.5, s});
          }
        }
        EXPECT_LE(tokens, 1) << "group " << group << " expert " << x << " slot " << slot;
        if (tokens == 1) {
          EXPECT_EQ(static_cast<int64_t>(occupants.size()), slot + 1)
              << "slots fill from 0: group " << group << " expert " << x;
        }
      }
      for (size_t i = 1; i < occupants.size(); ++i) {
        EXPECT_LT(occupants[i - 1], occupants[i]) << "group " << group << " expert " << x;
      }
      kept += static_cast<int64_t>(occupants.size());
      for (const auto& [second, token] : occupants) kept_second += second ? 1 : 0;
    }
    for (int64_t s = 0; s < g; ++s) {
      int64_t choices = 0;
      double sum = 0;
      for (int64_t x = 0; x < e; ++x) {
        int64_t in_expert = 0;
        for (int64_t slot = 0; slot < c; ++slot) {
          const double weight = at(combine, group, s, x, slot);
          in_expert += weight > 0 ? 1 : 0;
          sum += weight;
        }
        EXPECT_LE(in_expert, 1) << "group " << group << " token " << s;
        choices += in_expert;
      }
      EXPECT_LE(choices, 2);
      if (choices == 2) {
        EXPECT_NEAR(sum, 1.0, 1e-12) << "group " << group << " token " << s;
      } else if (choices == 1) {
        EXPECT_LT(sum, 1.0) << "normalised over both choices, one dropped";
      }
    }
  }
  EXPECT_LT(kept, 2 * groups * g) << "some choices overflow the capacity";
  EXPECT_GT(kept_second, 0) << "some second choices fit";
}

bool HasDim(const ir::Shape& shape, int64_t size) {
  for (int64_t d : shape.dims()) {
    if (d == size) return true;
  }
  return false;
}

// Dispatch, experts and combine are dots with the expert dimension E explicit (what lets the
// sharding pass find expert parallelism), not gathers: sizes are chosen distinct (groups 3,
// G 4, E 5, C 2, H 8, 8H 64) so that each dot is recognised by its shapes.
TEST(MoeTest, DispatchAndCombineAreDotsOverTheExpertDimension) {
  const MoeConfig config{.batch = 2,
                         .seq = 6,
                         .hidden = 8,
                         .layers = 4,
                         .heads = 2,
                         .vocab = 11,
                         .experts = 5,
                         .expert_group_size = 4};
  Result<Model> model = BuildMoe(config);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const int64_t groups = 3, g = 4, e = 5, c = 2, h = 8, f = 64;
  const std::vector<int64_t> slots = {groups, g, e, c};
  int dispatch = 0, experts = 0, combine = 0, gathers = 0, boundaries = 0;
  for (const auto& instruction : model->loss->entry()->instructions()) {
    const ir::Opcode opcode = instruction->opcode();
    if (opcode == ir::Opcode::kGather || opcode == ir::Opcode::kScatter) ++gathers;
    if (ir::AsLayerBoundary(*instruction).has_value()) ++boundaries;
    if (opcode != ir::Opcode::kDot) continue;
    const ir::Shape& lhs = instruction->operand(0)->shape();
    const ir::Shape& rhs = instruction->operand(1)->shape();
    const std::vector<int64_t>& out = instruction->shape().dims();
    const ir::DotDimensionNumbers& numbers = *instruction->attributes().dot_dims;
    // einsum("gsec,gsh->gech", dispatch, x): contracts the group's tokens.
    if (lhs.dims() == slots && rhs.dims() == std::vector<int64_t>{groups, g, h} &&
        out == std::vector<int64_t>{groups, e, c, h}) {
      ++dispatch;
    }
    // einsum("egch,ehf->egcf") and einsum("egcf,efh->egch"): batched over E.
    if (numbers.lhs_batch_dims == std::vector<int64_t>{0} && lhs.dim(0) == e && rhs.dim(0) == e &&
        (rhs.dims() == std::vector<int64_t>{e, h, f} ||
         rhs.dims() == std::vector<int64_t>{e, f, h})) {
      ++experts;
    }
    // einsum("gsec,egch->gsh", combine, out): contracts E and C.
    if (lhs.dims() == slots && HasDim(rhs, e) &&
        numbers.lhs_contracting_dims == std::vector<int64_t>{2, 3} &&
        out == std::vector<int64_t>{groups, g, h}) {
      ++combine;
    }
  }
  const int moe_layers = static_cast<int>(config.layers / 2);
  EXPECT_EQ(dispatch, moe_layers);
  EXPECT_EQ(experts, 2 * moe_layers);
  EXPECT_EQ(combine, moe_layers);
  EXPECT_EQ(gathers, 1) << "only the token embedding is a gather";
  EXPECT_EQ(boundaries, config.layers + 1);
}

// Alpa trains the MoE in f16 with an f32 master copy.
TEST(MoeTest, BuildsInHalfPrecision) {
  Result<Model> model = BuildMoe({.dtype = ir::DType::kF16});
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  testing::ExpectHalfPrecisionModelTrains(*model, 32);
}

// moe-tiny with its zoo training options learns the next token of a progression: over 50 steps,
// each on a fresh batch, the mean loss of the last 5 falls below 70% of the first 5's.
TEST(MoeTest, MoeTinyTrains) {
  const std::vector<double> losses = testing::TrainZooModel("moe-tiny", 50, 1, 1);
  ASSERT_EQ(losses.size(), 50u);
  const testing::FirstAndLast means = testing::MeansOfFirstAndLast(losses, 5);
  EXPECT_LT(means.last, 0.7 * means.first)
      << "first-5 mean " << means.first << ", last-5 mean " << means.last;
  RecordProperty("first5_mean_loss", std::to_string(means.first));
  RecordProperty("last5_mean_loss", std::to_string(means.last));
}

TEST(MoeTest, BadConfigsNameTheField) {
  EXPECT_THAT(BuildMoe({.hidden = 0}).status().message(), HasSubstr("moe: hidden is 0"));
  EXPECT_THAT(BuildMoe({.layers = 0}).status().message(), HasSubstr("moe: layers is 0"));
  EXPECT_THAT(BuildMoe({.seq = -2}).status().message(), HasSubstr("moe: seq is -2"));
  EXPECT_THAT(BuildMoe({.experts = 0}).status().message(), HasSubstr("moe: experts is 0"));
  EXPECT_THAT(BuildMoe({.expert_group_size = 0}).status().message(),
              HasSubstr("moe: expert_group_size is 0"));
  EXPECT_THAT(BuildMoe({.hidden = 16, .heads = 3}).status().message(),
              HasSubstr("moe: heads is 3; it must divide hidden (16)"));
  EXPECT_THAT(BuildMoe({.batch = 3, .seq = 8, .expert_group_size = 16}).status().message(),
              HasSubstr("expert_group_size is 16; it must divide the batch*seq = 24 tokens"));
  EXPECT_THAT(BuildMoe({.dtype = ir::DType::kS32}).status().message(),
              HasSubstr("moe: dtype s32 is not a float type"));
  // A group larger than the batch is clipped to it.
  EXPECT_TRUE(BuildMoe({.batch = 1, .seq = 8, .expert_group_size = 64}).ok());
}

}  // namespace
}  // namespace alpa::models
