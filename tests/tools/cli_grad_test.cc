// `alpa grad MODEL --wrt ...`: the gradient module of a loss in an HLO file or of a zoo model's
// loss, checked by evaluating it, and its bad inputs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/tools/alpa_runner.h"

namespace alpa::tools::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// loss(x, n, w) = sum(x * w): d/dw = x, d/dx = w; n (an integer) has no gradient.
constexpr char kDotLoss[] = R"(HloModule dot_loss

%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}

ENTRY %main (x: f32[4], n: s32[4], w: f32[4]) -> f32[] {
  %x = f32[4]{0} parameter(0)
  %n = s32[4]{0} parameter(1)
  %w = f32[4]{0} parameter(2)
  %prod = f32[4]{0} multiply(f32[4]{0} %x, f32[4]{0} %w)
  %zero = f32[] constant(0)
  ROOT %loss = f32[] reduce(f32[4]{0} %prod, f32[] %zero), dimensions={0}, to_apply=%sum
}
)";

// The same with an opaque custom-call between x and the loss: no gradient rule can go through it.
constexpr char kOpaqueLoss[] = R"(HloModule opaque_loss

%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}

ENTRY %main (x: f32[4], w: f32[4]) -> f32[] {
  %x = f32[4]{0} parameter(0)
  %w = f32[4]{0} parameter(1)
  %mystery = f32[4]{0} custom-call(f32[4]{0} %x), custom_call_target="my_kernel"
  %prod = f32[4]{0} multiply(f32[4]{0} %mystery, f32[4]{0} %w)
  %zero = f32[] constant(0)
  ROOT %loss = f32[] reduce(f32[4]{0} %prod, f32[] %zero), dimensions={0}, to_apply=%sum
}
)";

TEST_F(AlpaCliTest, GradOfAFileEvaluatesToTheHandComputedGradient) {
  const std::string model = Write("loss.hlo", kDotLoss);
  const std::string grad = (dir_ / "grad.hlo").string();
  RunResult written = RunAlpa({"grad", model, "--wrt", "2,0", "-o", grad});
  ASSERT_EQ(written.exit_code, 0) << Describe(written);
  EXPECT_THAT(written.out, HasSubstr("wrote " + grad));

  // Printed to stdout it is the same module.
  RunResult printed = RunAlpa({"grad", model, "--wrt", "2,0"});
  ASSERT_EQ(printed.exit_code, 0) << Describe(printed);
  EXPECT_THAT(printed.out, StartsWith("HloModule dot_loss.grad"));
  EXPECT_EQ(printed.out, ReadFile(grad));

  // (loss, d/dw, d/dx) at x = (1, 2, 3, 4), w = (5, 6, 7, 8): 70, x, w.
  const std::string inputs = Write("inputs.json", R"({"arguments": [
      {"shape": "f32[4]", "values": [1, 2, 3, 4]},
      {"shape": "s32[4]", "values": [0, 0, 0, 0]},
      {"shape": "f32[4]", "values": [5, 6, 7, 8]}]})");
  RunResult eval = RunAlpa({"eval", grad, "--inputs", inputs, "--json"});
  ASSERT_EQ(eval.exit_code, 0) << Describe(eval);
  nlohmann::json outputs = ParseJson(eval)["outputs"];
  ASSERT_EQ(outputs.size(), 3u);
  EXPECT_EQ(outputs[0]["sum"], 70.0);
  EXPECT_EQ(outputs[1]["shape"], "f32[4]");
  EXPECT_EQ(outputs[1]["sum"], 10.0);  // d/dw = x
  EXPECT_EQ(outputs[2]["sum"], 26.0);  // d/dx = w
}

TEST_F(AlpaCliTest, GradOfAZooModelIsWithRespectToItsWeights) {
  const std::string grad = (dir_ / "mlp_grad.hlo").string();
  RunResult r = RunAlpa({"grad", "mlp-tiny", "--layers", "1", "-o", grad});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  // mlp-tiny with one hidden layer: W1 [16,32], b1, Wo [32,4], bo; the gradient module returns
  // the loss and one gradient per weight, and parses back.
  RunResult inspect = RunAlpa({"inspect", "--json", grad});
  ASSERT_EQ(inspect.exit_code, 0) << Describe(inspect);
  EXPECT_EQ(ParseJson(inspect)["entry"]["result"],
            "(f32[], f32[16,32], f32[32], f32[32,4], f32[4])");
}

TEST_F(AlpaCliTest, GradThroughAnOpWithoutAGradientNamesIt) {
  const std::string model = Write("opaque.hlo", kOpaqueLoss);
  RunResult r = RunAlpa({"grad", model, "--wrt", "0"});
  ExpectBadInput(r, model);
  EXPECT_THAT(r.err, HasSubstr("%mystery (custom-call)"));
  // With respect to w only, the custom-call is not on the way: it works.
  RunResult w = RunAlpa({"grad", model, "--wrt", "1"});
  EXPECT_EQ(w.exit_code, 0) << Describe(w);
}

TEST_F(AlpaCliTest, GradBadWrt) {
  const std::string model = Write("loss.hlo", kDotLoss);
  ExpectBadInput(RunAlpa({"grad", model, "--wrt", "3"}), "--wrt 3");
  ExpectBadInput(RunAlpa({"grad", model, "--wrt=-1"}), "--wrt -1");
  RunResult integer = RunAlpa({"grad", model, "--wrt", "1"});
  ExpectBadInput(integer, "--wrt 1");
  EXPECT_THAT(integer.err, HasSubstr("s32[4]"));
  ExpectBadInput(RunAlpa({"grad", model, "--wrt", "0,0"}), "listed twice");
  ExpectBadInput(RunAlpa({"grad", model}), "--wrt");
  ExpectBadInput(RunAlpa({"grad", model, "--wrt", "0", "--layers", "2"}), "--layers");
}

TEST_F(AlpaCliTest, GradNeedsAScalarLoss) {
  const std::string model = Write("tiny.hlo", kTinyDot);
  RunResult r = RunAlpa({"grad", model, "--wrt", "0"});
  ExpectBadInput(r, model);
  EXPECT_THAT(r.err, HasSubstr("scalar"));
}

}  // namespace
}  // namespace alpa::tools::testing
