// Layers written as markers. Automatic layers: the markers give every parameter-dependent
// instruction the clustering's layer, the loss keeps its value, and the result slices into
// stages. Alpa's pipeline markers: read as the same layers, the loss unchanged.
#include "pipeline/layer_marking.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "hlo/parser.h"
#include "hlo/printer.h"
#include "interp/evaluator.h"
#include "interp/random_inputs.h"
#include "ir/layer_boundary.h"
#include "ir/verifier.h"
#include "models/zoo.h"
#include "pipeline/layer_construction.h"
#include "pipeline/stage_slicing.h"
#include "zoo_models.h"

namespace alpa::pipeline {
namespace {

using ::testing::HasSubstr;
using testing::Zoo;

int64_t CountMarkers(const ir::Computation& computation) {
  int64_t markers = 0;
  for (const auto& instruction : computation.instructions()) {
    markers += ir::AsLayerBoundary(*instruction).has_value();
  }
  return markers;
}

TEST(LayerMarkingTest, MarkersGiveEveryInstructionItsClusteredLayer) {
  models::ZooModel gpt = Zoo("gpt-tiny");
  ir::Computation& loss = *gpt.model.loss->entry();
  const int64_t own_markers = CountMarkers(loss);
  ASSERT_GT(own_markers, 0);
  // One layer: the model's markers go and none come.
  Result<LayerMarkingStats> stripped = MarkAutoLayers(loss, 1);
  ASSERT_TRUE(stripped.ok()) << stripped.status().ToString();
  EXPECT_EQ(stripped->removed, own_markers);
  EXPECT_EQ(stripped->inserted, 0);
  EXPECT_EQ(CountMarkers(loss), 0);

  const std::vector<ir::Instruction*> order = loss.MakePostOrder();
  Result<std::vector<int64_t>> clustered = ClusterComputationIntoLayers(loss, 3);
  ASSERT_TRUE(clustered.ok());
  std::map<const ir::Instruction*, int64_t> clustered_layer;
  std::map<const ir::Instruction*, bool> reads_parameter;
  for (size_t t = 0; t < order.size(); ++t) {
    clustered_layer[order[t]] = (*clustered)[t];
    bool reads = order[t]->opcode() == ir::Opcode::kParameter;
    for (const ir::Instruction* operand : order[t]->operands()) {
      reads = reads || reads_parameter.at(operand);
    }
    reads_parameter[order[t]] = reads;
  }

  Result<LayerMarkingStats> marked = MarkAutoLayers(loss, 3);
  ASSERT_TRUE(marked.ok()) << marked.status().ToString();
  EXPECT_EQ(marked->removed, 0);
  EXPECT_GT(marked->inserted, 0);
  EXPECT_EQ(CountMarkers(loss), marked->inserted);
  EXPECT_TRUE(ir::VerifyModule(*gpt.model.loss).ok());
  const ForwardLayers layers = LayersFromBoundaries(loss);
  EXPECT_EQ(layers.num_layers, 3);
  const std::vector<ir::Instruction*> marked_order = loss.MakePostOrder();
  int64_t compared = 0;
  for (size_t t = 0; t < marked_order.size(); ++t) {
    const ir::Instruction* instruction = marked_order[t];
    if (!clustered_layer.contains(instruction) || !reads_parameter.at(instruction)) continue;
    if (instruction->opcode() == ir::Opcode::kParameter) continue;  // joins its first reader
    EXPECT_EQ(layers.layer_of[t], clustered_layer.at(instruction)) << instruction->name();
    ++compared;
  }
  EXPECT_GT(compared, 100);
}

TEST(LayerMarkingTest, TheLossKeepsItsValueAndEveryLayerSlices) {
  models::ZooModel gpt = Zoo("gpt-tiny");
  const std::vector<ir::Literal> inputs =
      interp::RandomArguments(*gpt.model.loss->entry(), /*seed=*/3);
  Result<ir::Literal> before = interp::EvaluateModule(*gpt.model.loss, inputs);
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  ASSERT_TRUE(MarkAutoLayers(*gpt.model.loss->entry(), 3).ok());
  Result<ir::Literal> after = interp::EvaluateModule(*gpt.model.loss, inputs);
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(before->GetDouble(0), after->GetDouble(0));
  const ForwardLayers layers = LayersFromBoundaries(*gpt.model.loss->entry());
  for (int64_t k = 0; k < layers.num_layers; ++k) {
    Result<StageLoss> stage = SliceStageLoss(*gpt.model.loss, gpt.model.weights, layers, k, k);
    ASSERT_TRUE(stage.ok()) << "layer " << k << ": " << stage.status().ToString();
    EXPECT_FALSE(stage->weights.empty()) << "layer " << k;
  }
}

TEST(LayerMarkingTest, DeterministicText) {
  models::ZooModel a = Zoo("mlp-tiny");
  models::ZooModel b = Zoo("mlp-tiny");
  ASSERT_TRUE(MarkAutoLayers(*a.model.loss->entry(), 2).ok());
  ASSERT_TRUE(MarkAutoLayers(*b.model.loss->entry(), 2).ok());
  EXPECT_EQ(hlo::PrintModule(*a.model.loss), hlo::PrintModule(*b.model.loss));
}

TEST(LayerMarkingTest, BadInputIsNamed) {
  models::ZooModel mlp = Zoo("mlp-tiny");
  Result<LayerMarkingStats> too_many = MarkAutoLayers(*mlp.model.loss->entry(), 100000);
  ASSERT_FALSE(too_many.ok());
  EXPECT_EQ(too_many.status().code(), StatusCode::kInvalidArgument);

  Result<std::unique_ptr<ir::Module>> backward = hlo::ParseHloModule(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4] parameter(0)
  ct = f32[4] custom-call(x), custom_call_target="alpa_layer_boundary", frontend_attributes={layer="0",pass="backward"}
  zero = f32[] constant(0)
  ROOT s = f32[] reduce(ct, zero), dimensions={0}, to_apply=add
}
)");
  ASSERT_TRUE(backward.ok()) << backward.status().ToString();
  Result<LayerMarkingStats> refused = MarkAutoLayers(*(*backward)->entry(), 1);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("%ct: a backward layer boundary"));
}

// Three layers as Alpa's layer construction marks them: `h` skips layer 1 (it leaves layer 0
// through end marker 0 and is read in layer 2), the weights enter through start markers, and
// the loss leaves through the last end marker.
constexpr char kAlpaMarked[] = R"(
HloModule alpa_marked
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4,8] parameter(0)
  w0 = f32[8,8] parameter(1)
  w1 = f32[8,8] parameter(2)
  w2 = f32[8,8] parameter(3)
  t0 = (f32[4,8], f32[8,8]) tuple(x, w0), metadata={op_type="start" op_name="0"}
  s0 = (f32[4,8], f32[8,8]) custom-call(t0), custom_call_target="pipeline_marker", custom_call_has_side_effect=true, metadata={op_type="start" op_name="0"}
  x.0 = f32[4,8] get-tuple-element(s0), index=0
  w0.0 = f32[8,8] get-tuple-element(s0), index=1
  h = f32[4,8] dot(x.0, w0.0), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  e0t = (f32[4,8]) tuple(h), metadata={op_type="end" op_name="0"}
  e0 = (f32[4,8]) custom-call(e0t), custom_call_target="pipeline_marker", custom_call_has_side_effect=true, metadata={op_type="end" op_name="0"}
  h.0 = f32[4,8] get-tuple-element(e0), index=0
  g = f32[4,8] dot(h.0, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  e1t = (f32[4,8]) tuple(g), metadata={op_type="end" op_name="1"}
  e1 = (f32[4,8]) custom-call(e1t), custom_call_target="pipeline_marker", custom_call_has_side_effect=true, metadata={op_type="end" op_name="1"}
  g.1 = f32[4,8] get-tuple-element(e1), index=0
  k = f32[4,8] dot(g.1, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  sum = f32[4,8] add(k, h.0)
  zero = f32[] constant(0)
  r = f32[] reduce(sum, zero), dimensions={0,1}, to_apply=add
  e2t = (f32[]) tuple(r), metadata={op_type="end" op_name="2"}
  e2 = (f32[]) custom-call(e2t), custom_call_target="pipeline_marker", custom_call_has_side_effect=true, metadata={op_type="end" op_name="2"}
  ROOT loss = f32[] get-tuple-element(e2), index=0
}
)";

std::unique_ptr<ir::Module> Parse(const std::string& text) {
  Result<std::unique_ptr<ir::Module>> module = hlo::ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? std::move(module).value() : nullptr;
}

// kAlpaMarked with its markers spelled as Alpa writes them (the metadata's op_type and op_name)
// or, `in_backend_config`, as alpa_cpp.mark_pipeline_boundary does (backend_config="end 0":
// current JAX writes no op_type).
std::string AlpaMarked(bool in_backend_config) {
  if (!in_backend_config) return kAlpaMarked;
  return std::regex_replace(kAlpaMarked,
                            std::regex(R"re(metadata=\{op_type="(\w+)" op_name="(\w+)"\})re"),
                            R"(backend_config="$1 $2")");
}

class AlpaMarkerSpellingTest : public ::testing::TestWithParam<bool> {};

TEST_P(AlpaMarkerSpellingTest, EndMarkersAreLayerBoundariesAlongTheDataFlow) {
  const std::string text = AlpaMarked(GetParam());
  ASSERT_EQ(text.find("op_type") == std::string::npos, GetParam());
  std::unique_ptr<ir::Module> marked = Parse(text);
  ASSERT_NE(marked, nullptr);
  ASSERT_TRUE(ir::VerifyModule(*marked).ok());
  ir::Computation& loss = *marked->entry();
  Result<LayerMarkingStats> read = ReadAlpaPipelineMarkers(loss);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->removed, 4);
  // h leaves layer 0 and, read in layer 2, layer 1 too; g leaves layer 1; the loss is the root.
  EXPECT_EQ(read->inserted, 3);
  EXPECT_EQ(CountMarkers(loss), 3);
  EXPECT_TRUE(ir::VerifyModule(*marked).ok());
  for (const auto& instruction : loss.instructions()) {
    EXPECT_NE(instruction->attributes().custom_call_target, "pipeline_marker");
    EXPECT_NE(instruction->opcode(), ir::Opcode::kTuple) << instruction->name();
  }
  const ForwardLayers layers = LayersFromBoundaries(loss);
  EXPECT_EQ(layers.num_layers, 3);
  const std::vector<ir::Instruction*> order = loss.MakePostOrder();
  std::map<std::string, int64_t> layer_of;
  for (size_t t = 0; t < order.size(); ++t) layer_of[order[t]->name()] = layers.layer_of[t];
  EXPECT_EQ(layer_of.at("h"), 0);
  EXPECT_EQ(layer_of.at("g"), 1);
  EXPECT_EQ(layer_of.at("k"), 2);
  EXPECT_EQ(layer_of.at("sum"), 2);
  EXPECT_EQ(layer_of.at("w2"), 2);  // a weight joins its first reader
  for (int64_t k = 0; k < layers.num_layers; ++k) {
    Result<StageLoss> stage = SliceStageLoss(*marked, {1, 2, 3}, layers, k, k);
    ASSERT_TRUE(stage.ok()) << "layer " << k << ": " << stage.status().ToString();
    EXPECT_EQ(stage->weights.size(), 1u) << "layer " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(AlpaPipelineMarkersTest, AlpaMarkerSpellingTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "InBackendConfig" : "InMetadata";
                         });

TEST(AlpaPipelineMarkersTest, TheLossKeepsItsValue) {
  std::unique_ptr<ir::Module> marked = Parse(kAlpaMarked);
  ASSERT_NE(marked, nullptr);
  ASSERT_TRUE(ReadAlpaPipelineMarkers(*marked->entry()).ok());
  // The same function written without markers.
  std::unique_ptr<ir::Module> plain = Parse(R"(
HloModule plain
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4,8] parameter(0)
  w0 = f32[8,8] parameter(1)
  w1 = f32[8,8] parameter(2)
  w2 = f32[8,8] parameter(3)
  h = f32[4,8] dot(x, w0), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  g = f32[4,8] dot(h, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  k = f32[4,8] dot(g, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  sum = f32[4,8] add(k, h)
  zero = f32[] constant(0)
  ROOT r = f32[] reduce(sum, zero), dimensions={0,1}, to_apply=add
}
)");
  ASSERT_NE(plain, nullptr);
  const std::vector<ir::Literal> inputs = interp::RandomArguments(*plain->entry(), /*seed=*/5);
  Result<ir::Literal> expected = interp::EvaluateModule(*plain, inputs);
  Result<ir::Literal> read = interp::EvaluateModule(*marked, inputs);
  ASSERT_TRUE(expected.ok() && read.ok());
  EXPECT_EQ(expected->GetDouble(0), read->GetDouble(0));
}

TEST(AlpaPipelineMarkersTest, ModulesWithoutThemAreLeftAlone) {
  models::ZooModel mlp = Zoo("mlp-tiny");
  const std::string before = hlo::PrintModule(*mlp.model.loss);
  Result<LayerMarkingStats> read = ReadAlpaPipelineMarkers(*mlp.model.loss->entry());
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->removed, 0);
  EXPECT_EQ(hlo::PrintModule(*mlp.model.loss), before);
}

TEST(AlpaPipelineMarkersTest, MarkersThatSayNothingOfLayersAreNamed) {
  struct Case {
    std::string from, to, message;
  };
  const std::vector<Case> cases = {
      {R"(op_type="end" op_name="1")", R"(op_type="boundary" op_name="boundary")",
       "%e1 (Alpa's pipeline_marker, mark type 'boundary', layer 'boundary'): a boundary from "
       "mark_pipeline_boundary()"},
      {R"(op_type="end" op_name="1")", R"(op_type="jvp_end" op_name="1")",
       "mark type 'jvp_end', layer '1'): only the start and end markers of a forward loss"},
      {"g.1 = f32[4,8] get-tuple-element(e1), index=0",
       "g.1 = f32[4,8] get-tuple-element(e1), index=0\n  whole = ((f32[4,8])) tuple(e1)",
       "%e1 (Alpa's pipeline_marker, mark type 'end', layer '1'): %whole reads it whole"},
      {"e1 = (f32[4,8]) custom-call(e1t)", "e1 = (f32[4,8], f32[]) custom-call(e1t)",
       "%e1 (Alpa's pipeline_marker, mark type 'end', layer '1'): its result (f32[4,8], f32[]) is "
       "not the tuple of the 1 values it marks"},
  };
  for (const Case& c : cases) {
    std::string text = kAlpaMarked;  // every occurrence: the marker and its tuple
    ASSERT_NE(text.find(c.from), std::string::npos) << c.from;
    for (size_t at = text.find(c.from); at != std::string::npos; at = text.find(c.from, at)) {
      text.replace(at, c.from.size(), c.to);
      at += c.to.size();
    }
    std::unique_ptr<ir::Module> module = Parse(text);
    ASSERT_NE(module, nullptr) << c.to;
    Result<LayerMarkingStats> read = ReadAlpaPipelineMarkers(*module->entry());
    ASSERT_FALSE(read.ok()) << c.to;
    EXPECT_EQ(read.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(read.status().message(), HasSubstr(c.message));
  }
}

}  // namespace
}  // namespace alpa::pipeline
