// The bad-input contract (exit 2, nothing on stdout, "alpa: error: " naming the place) for zoo
// models and the commands that take them: unknown names, impossible configs, bad flags, a loss that
// diverges, and gradients through ops that have none.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/tools/alpa_runner.h"

namespace alpa::tools::testing {
namespace {

using ::testing::HasSubstr;

TEST(AlpaCliZooErrors, UnknownNameListsTheZoo) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"inspect", "gpt-huge"},
                                             {"inspect", "gpt-huge", "--json"},
                                             {"eval", "gpt-huge"},
                                             {"run", "gpt-huge"},
                                             {"grad", "gpt-huge"}}) {
    SCOPED_TRACE(args[0]);
    RunResult r = RunAlpa(args);
    ExpectBadInput(r, "no model named 'gpt-huge'");
    for (const char* name : {"gpt-tiny", "gpt-1.3b", "moe-380m", "wresnet-250m", "mlp-tiny"}) {
      EXPECT_THAT(r.err, HasSubstr(name));
    }
  }
}

TEST(AlpaCliZooErrors, ImpossibleConfigs) {
  // Heads must divide hidden (32 for gpt-tiny).
  RunResult heads = RunAlpa({"inspect", "gpt-tiny", "--heads", "3"});
  ExpectBadInput(heads, "gpt-tiny");
  EXPECT_THAT(heads.err, HasSubstr("heads is 3"));
  EXPECT_THAT(heads.err, HasSubstr("32"));
  ExpectBadInput(RunAlpa({"run", "gpt-tiny", "--heads", "3"}), "heads is 3");

  // The global batch must split into equal micro-batches; the message names both numbers.
  RunResult batch = RunAlpa({"inspect", "gpt-tiny", "--batch", "6", "--micro-batches", "4"});
  ExpectBadInput(batch, "--batch 6");
  EXPECT_THAT(batch.err, HasSubstr("--micro-batches 4"));
  // Also when the batch is the zoo's default (8).
  RunResult default_batch = RunAlpa({"run", "gpt-tiny", "--micro-batches", "3"});
  ExpectBadInput(default_batch, "batch 8");
  EXPECT_THAT(default_batch.err, HasSubstr("--micro-batches 3"));

  ExpectBadInput(RunAlpa({"inspect", "gpt-tiny", "--micro-batches", "0"}), "--micro-batches 0");
  ExpectBadInput(RunAlpa({"inspect", "gpt-tiny", "--batch", "0"}), "--batch 0");
  ExpectBadInput(RunAlpa({"inspect", "gpt-tiny", "--layers", "0"}), "layers is 0");

  // A sequence longer than a Llama's rotary embeddings cover; fewer query heads than key/value
  // heads (llama-tiny has 2).
  RunResult rope = RunAlpa({"plan", "llama3-8b", "--seq", "16384", "--cluster", "dgx-h100:8"});
  ExpectBadInput(rope, "llama3-8b");
  EXPECT_THAT(rope.err, HasSubstr("seq is 16384; the model's rotary embeddings cover 8192"));
  EXPECT_THAT(rope.err, HasSubstr("--seq of at most 8192"));
  ExpectBadInput(RunAlpa({"inspect", "llama-tiny", "--heads", "1"}),
                 "kv_heads is 2; it must divide heads (1)");

  // A field the family does not have.
  ExpectBadInput(RunAlpa({"inspect", "gpt-tiny", "--experts", "4"}), "--experts");
  ExpectBadInput(RunAlpa({"inspect", "llama-tiny", "--experts", "4"}), "--experts");
  ExpectBadInput(RunAlpa({"inspect", "mlp-tiny", "--heads", "2"}), "--heads");
}

TEST(AlpaCliZooErrors, BadFlagValuesListTheValidOnes) {
  RunResult dtype = RunAlpa({"inspect", "gpt-tiny", "--dtype", "f64x"});
  ExpectBadInput(dtype, "--dtype f64x");
  EXPECT_THAT(dtype.err, HasSubstr("f32, f16, bf16"));
  ExpectBadInput(RunAlpa({"inspect", "gpt-tiny", "--dtype", "s32"}), "--dtype s32");

  RunResult optimizer = RunAlpa({"inspect", "gpt-tiny", "--optimizer", "lamb"});
  ExpectBadInput(optimizer, "--optimizer lamb");
  EXPECT_THAT(optimizer.err, HasSubstr("sgd, adam, adamw, adafactor"));

  ExpectBadInput(RunAlpa({"inspect", "gpt-tiny", "--lr", "0"}), "--lr 0");
  ExpectBadInput(RunAlpa({"inspect", "gpt-tiny", "--layers", "many"}), "--layers");

  // The step's own optimizer replaces ours, from a file of HLO.
  ExpectBadInput(RunAlpa({"inspect", "gpt-tiny", "--update-program", "/no/such/update.hlo"}),
                 "--update-program: /no/such/update.hlo");
  ExpectBadInput(
      RunAlpa({"inspect", "gpt-tiny", "--update-program", "update.hlo", "--optimizer", "sgd"}),
      "give it without --optimizer and --lr");
}

TEST_F(AlpaCliTest, OverrideFlagsWithAnHloFile) {
  const std::string model = Write("tiny.hlo", kTinyDot);
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"inspect", model, "--layers", "3"},
                                             {"inspect", model, "--json", "--dtype", "f16"},
                                             {"eval", model, "--micro-batches", "2"},
                                             {"inspect", model, "--no-remat"}}) {
    SCOPED_TRACE(args[2]);
    RunResult r = RunAlpa(args);
    ExpectBadInput(r, "applies to models of the zoo only");
    EXPECT_THAT(r.err, HasSubstr(model));
  }
}

// An HLO file that is neither a loss given --weights nor a train step with donated state.
TEST_F(AlpaCliTest, RunNeedsAModelItCanTrain) {
  const std::string model = Write("tiny.hlo", kTinyDot);
  RunResult r = RunAlpa({"run", model, "--steps", "2"});
  ExpectBadInput(r, model);
  EXPECT_THAT(r.err, HasSubstr("an HLO loss given --weights, or a whole train step"));
  EXPECT_THAT(r.err, HasSubstr("the module has no input_output_alias"));
}

TEST(AlpaCliZooErrors, RunStepsMustBePositive) {
  ExpectBadInput(RunAlpa({"run", "mlp-tiny", "--steps", "0"}), "--steps 0");
  ExpectBadInput(RunAlpa({"run", "mlp-tiny", "--steps", "-3", "--json"}), "--steps");
}

TEST(AlpaCliZooErrors, RunStopsWhenTheLossDiverges) {
  // Plain SGD with a learning rate of 1000 blows the MLP up within a few steps.
  RunResult r =
      RunAlpa({"run", "mlp-tiny", "--steps", "20", "--json", "--optimizer", "sgd", "--lr", "1000"});
  ExpectBadInput(r, "mlp-tiny");
  EXPECT_THAT(r.err, HasSubstr("diverged"));
  EXPECT_THAT(r.err, HasSubstr("--lr"));
}

}  // namespace
}  // namespace alpa::tools::testing
