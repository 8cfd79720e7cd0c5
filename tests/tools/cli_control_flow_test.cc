// HLO files with loops, as current JAX writes a layer stack (`lax.scan`, Flax's `nn.scan`): the
// counted loop is unrolled as the file is read (api/hlo_import.h), so every iteration's FLOPs
// count and a pipeline cuts the iterations into stages; a loop whose trip count is not proven
// stays, with a note on stderr, and a loss that keeps one is refused naming it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/tools/alpa_runner.h"

namespace alpa::tools::testing {
namespace {

using ::testing::HasSubstr;

// A loss: four tanh layers, their weights stacked in one array that a counted loop slices.
constexpr char kScannedLoss[] = R"(HloModule scanned_mlp

layer {
  p = (s32[], f32[16,64], f32[4,64,64]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[16,64] get-tuple-element(p), index=1
  w = f32[4,64,64] get-tuple-element(p), index=2
  zero = s32[] constant(0)
  wi = f32[1,64,64] dynamic-slice(w, i, zero, zero), dynamic_slice_sizes={1,64,64}
  wr = f32[64,64] reshape(wi)
  d = f32[16,64] dot(x, wr), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  y = f32[16,64] tanh(d)
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], f32[16,64], f32[4,64,64]) tuple(next, y, w)
}

layer_cond {
  p = (s32[], f32[16,64], f32[4,64,64]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(4)
  CONDITION
}

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  w = f32[4,64,64] parameter(0)
  x = f32[16,64] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[16,64], f32[4,64,64]) tuple(zero, x, w)
  loop = (s32[], f32[16,64], f32[4,64,64]) while(init), condition=layer_cond, body=layer
  y = f32[16,64] get-tuple-element(loop), index=1
  square = f32[16,64] multiply(y, y)
  z = f32[] constant(0)
  ROOT loss = f32[] reduce(square, z), dimensions={0,1}, to_apply=add
}
)";

std::string LossWithCondition(const std::string& condition) {
  std::string text = kScannedLoss;
  return text.replace(text.find("CONDITION"), 9, condition);
}

const std::string kCounted = "ROOT lt = pred[] compare(i, n), direction=LT";
// Also stops once the activations' sum turns negative: a trip count no one can prove.
const std::string kDataDependent =
    "lt = pred[] compare(i, n), direction=LT\n"
    "  x = f32[16,64] get-tuple-element(p), index=1\n"
    "  e = f32[] constant(0)\n"
    "  s = f32[] reduce(x, e), dimensions={0,1}, to_apply=add\n"
    "  positive = pred[] compare(s, e), direction=GT\n"
    "  ROOT both = pred[] and(lt, positive)";

TEST_F(AlpaCliTest, AScannedStackCountsEveryLayerAndPipelinesIt) {
  const std::string loss = Write("scanned.hlo", LossWithCondition(kCounted));
  RunResult inspected = RunAlpa({"inspect", loss, "--weights", "0", "--json"});
  ASSERT_EQ(inspected.exit_code, 0) << Describe(inspected);
  const nlohmann::json summary = ParseJson(inspected);
  EXPECT_EQ(summary["forward_flops_dot_conv"].get<double>(), 4 * 2.0 * 16 * 64 * 64);
  EXPECT_FALSE(summary["opcodes"].contains("while"));

  RunResult planned =
      RunAlpa({"plan", loss, "--weights", "0", "--cluster", "local:4", "--method", "pipeshard",
               "--auto-layers", "2", "--micro-batches", "2", "--json"});
  ASSERT_EQ(planned.exit_code, 0) << Describe(planned);
  EXPECT_EQ(planned.err, "");
  EXPECT_EQ(ParseJson(planned)["num_layers"], 2);
}

TEST_F(AlpaCliTest, ALoopWithoutAProvenTripCountStaysAndSaysSo) {
  const std::string path = Write("kept.hlo", LossWithCondition(kDataDependent));
  RunResult inspected = RunAlpa({"inspect", path});
  ASSERT_EQ(inspected.exit_code, 0) << Describe(inspected);
  EXPECT_THAT(inspected.err, HasSubstr("alpa: note: " + path +
                                       ": %loop stays a loop and runs replicated on every device: "
                                       "its trip count is not proven"));
  // A loss must be straight-line code for autodiff: the loop is named, not differentiated.
  ExpectBadInput(RunAlpa({"inspect", path, "--weights", "0"}),
                 path +
                     ": the loss keeps the loop %loop, which autodiff cannot differentiate: "
                     "its trip count is not proven");
}

}  // namespace
}  // namespace alpa::tools::testing
