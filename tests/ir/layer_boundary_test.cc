#include "ir/layer_boundary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace alpa::ir {
namespace {

using ::testing::HasSubstr;

Shape F32(std::vector<int64_t> dims) { return Shape::Array(DType::kF32, std::move(dims)); }

TEST(LayerBoundaryTest, MarkerIsAnIdentityCustomCallThatNamesItsLayer) {
  ModuleBuilder mb("m");
  ComputationBuilder b = mb.NewComputation("main");
  Instruction* x = b.Parameter(0, F32({2, 3}), "x");
  Instruction* forward = EmitLayerBoundary(b, x, {.layer = 4});
  Instruction* backward = EmitLayerBoundary(b, forward, {.layer = 4, .backward = true});
  ASSERT_TRUE(b.Build(backward).ok());
  EXPECT_EQ(forward->opcode(), Opcode::kCustomCall);
  EXPECT_EQ(forward->shape(), x->shape());
  ASSERT_TRUE(AsLayerBoundary(*forward).has_value());
  EXPECT_EQ(AsLayerBoundary(*forward)->layer, 4);
  EXPECT_FALSE(AsLayerBoundary(*forward)->backward);
  EXPECT_TRUE(AsLayerBoundary(*backward)->backward);
  EXPECT_FALSE(AsLayerBoundary(*x).has_value());
}

// A marker written by hand (or a tool) with bad attributes is rejected by the verifier, which
// says what a marker needs.
TEST(LayerBoundaryTest, VerifierRejectsMalformedMarkers) {
  struct Case {
    std::vector<std::pair<std::string, std::string>> attributes;
    std::string message;
  };
  const Case cases[] = {
      {{{"pass", "forward"}}, "layer=\"N\""},
      {{{"layer", "-1"}, {"pass", "forward"}}, "non-negative integer"},
      {{{"layer", "2x"}, {"pass", "forward"}}, "non-negative integer"},
      {{{"layer", "2"}}, "pass=\"forward\" or pass=\"backward\""},
      {{{"layer", "2"}, {"pass", "sideways"}}, "pass=\"forward\" or pass=\"backward\""},
  };
  for (const Case& c : cases) {
    ModuleBuilder mb("m");
    ComputationBuilder b = mb.NewComputation("main");
    Instruction* x = b.Parameter(0, F32({2}), "x");
    Attributes attributes;
    attributes.custom_call_target = std::string(kLayerBoundaryTarget);
    attributes.frontend_attributes = c.attributes;
    Instruction* marker =
        b.AddInstruction(Opcode::kCustomCall, {x}, attributes, {}, F32({2}), "marker");
    Result<Computation*> built = b.Build(marker);
    ASSERT_FALSE(built.ok()) << c.message;
    EXPECT_THAT(built.status().message(), HasSubstr("%marker"));
    EXPECT_THAT(built.status().message(), HasSubstr(c.message));
  }
}

}  // namespace
}  // namespace alpa::ir
