// TrainingCheck (tools/alpa/training_check.h), in-process: "devices" that are the reference
// interpreter itself, with one value of the step's results changed as a faulty partition would
// change it. The unchanged step passes; a value moved beyond both the relative rule and the
// model's own rounding fails, naming it.
#include "tools/alpa/training_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "interp/evaluator.h"
#include "ir/instruction.h"

namespace alpa::tools {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kSeed = 1;

ZooStep Build(const std::string& dtype, const std::string& optimizer = "adam") {
  ZooFlags flags;
  flags.dtype = dtype;
  flags.optimizer = optimizer;
  Result<ZooStep> step = BuildZooStep("gpt-tiny", flags);
  EXPECT_TRUE(step.ok()) << step.status().ToString();
  return std::move(step).value();
}

// The index among the step's carried values (its first parameters) of the one named `name`.
size_t CarriedIndex(const ZooStep& zoo, const std::string& name) {
  const std::vector<ir::Instruction*> parameters = zoo.step->entry()->parameters();
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (parameters[i]->name() == name) return i;
  }
  ADD_FAILURE() << "no parameter " << name;
  return 0;
}

// The interpreter's runner, with `fault` applied to the carried value `index` after each step.
class FaultyRunner final : public StepRunner {
 public:
  FaultyRunner(const ir::Module& step, size_t index, std::function<void(ir::Literal&)> fault)
      : inner_(InterpreterRunner(step)), index_(index), fault_(std::move(fault)) {}

  Status Place(std::vector<ir::Literal> carried) override {
    return inner_->Place(std::move(carried));
  }
  Result<double> Step(std::vector<ir::Literal> batch) override {
    ALPA_ASSIGN_OR_RETURN(const double loss, inner_->Step(std::move(batch)));
    ALPA_ASSIGN_OR_RETURN(std::vector<ir::Literal> carried, inner_->Fetch());
    fault_(carried[index_]);
    ALPA_RETURN_IF_ERROR(inner_->Place(std::move(carried)));
    return loss;
  }
  Result<std::vector<ir::Literal>> Fetch() override { return inner_->Fetch(); }

 private:
  std::unique_ptr<StepRunner> inner_;
  size_t index_;
  std::function<void(ir::Literal&)> fault_;
};

// One step of gpt-tiny on devices that run the interpreter and then `fault` the carried value
// `name`, checked against the reference.
TrainingCheck CheckOneStep(const ZooStep& zoo, const ZooStep* f32_step, const std::string& name,
                           const std::function<void(ir::Literal&)>& fault) {
  ZooTraining devices(zoo, kSeed,
                      std::make_unique<FaultyRunner>(*zoo.step, CarriedIndex(zoo, name), fault));
  TrainingCheck check(zoo, f32_step, kSeed);
  Result<std::vector<ir::Literal>> inputs = devices.Carried();
  EXPECT_TRUE(inputs.ok()) << inputs.status().ToString();
  EXPECT_TRUE(check.Follow(*inputs).ok());
  double seconds = 0;
  Result<double> loss = devices.Step(0, seconds);
  EXPECT_TRUE(loss.ok()) << loss.status().ToString();
  Result<std::vector<ir::Literal>> carried = devices.Carried();
  EXPECT_TRUE(carried.ok()) << carried.status().ToString();
  Result<double> want = check.Compare(0, *loss, *carried);
  EXPECT_TRUE(want.ok()) << want.status().ToString();
  EXPECT_EQ(*want, *loss);
  return check;
}

// Index of the element of largest magnitude.
int64_t Largest(const ir::Literal& x) {
  int64_t best = 0;
  for (int64_t i = 1; i < x.element_count(); ++i) {
    if (std::abs(x.GetDouble(i)) > std::abs(x.GetDouble(best))) best = i;
  }
  return best;
}

TEST(TrainingCheckTest, TheReferencesOwnStepPassesInEveryDType) {
  const ZooStep f32 = Build("f32");
  for (const std::string dtype : {"f32", "bf16"}) {
    const ZooStep zoo = Build(dtype);
    const TrainingCheck check =
        CheckOneStep(zoo, dtype == "f32" ? nullptr : &f32, "wte", [](ir::Literal&) {});
    EXPECT_TRUE(check.passed()) << check.Text();
    const nlohmann::ordered_json json = check.Json();
    EXPECT_EQ(json["worst_weight_difference"], 0) << json.dump(2);
    EXPECT_EQ(json["worst_optimizer_state_difference"], 0) << json.dump(2);
    // Only a 16-bit model is measured against its f32 twin.
    EXPECT_EQ(json.contains("rounding_reference"), dtype != "f32") << json.dump(2);
  }
}

// A lost contribution: the optimizer state's largest element zeroed (as a gradient shard that
// never arrived would leave it). Far beyond bf16's rounding of that state, so the check fails.
TEST(TrainingCheckTest, AnOptimizerStateMissingItsLargestElementFails) {
  const ZooStep f32 = Build("f32");
  const ZooStep bf16 = Build("bf16");
  const TrainingCheck check = CheckOneStep(bf16, &f32, "layer0.fc1.w.m",
                                           [](ir::Literal& m) { m.SetDouble(Largest(m), 0); });
  EXPECT_FALSE(check.passed());
  EXPECT_THAT(check.Text(), HasSubstr("check FAILED"));
  EXPECT_THAT(check.Text(), HasSubstr("optimizer state  worst layer0.fc1.w.m"));
  EXPECT_GT(check.Json()["worst_optimizer_state_fraction_of_tolerance"].get<double>(), 1.0);
}

// Adam moves a weight by at most about the learning rate (0.01 here) either way, so twice that
// is allowed; a weight moved by ten times the learning rate fails.
TEST(TrainingCheckTest, AWeightMovedByTenLearningRatesFails) {
  const ZooStep f32 = Build("f32");
  const ZooStep bf16 = Build("bf16");
  const double lr = bf16.training.optimizer.learning_rate;
  const TrainingCheck moved = CheckOneStep(bf16, &f32, "layer1.attn.out.w", [&](ir::Literal& w) {
    w.SetDouble(0, w.GetDouble(0) + 10 * lr);
  });
  EXPECT_FALSE(moved.passed());
  EXPECT_THAT(moved.Text(), HasSubstr("weights          worst layer1.attn.out.w"));
  EXPECT_DOUBLE_EQ(moved.Json()["weight_absolute_tolerance"].get<double>(), 2 * lr);
  const TrainingCheck within = CheckOneStep(bf16, &f32, "layer1.attn.out.w", [&](ir::Literal& w) {
    w.SetDouble(0, w.GetDouble(0) + 1.5 * lr);
  });
  EXPECT_TRUE(within.passed()) << within.Text();
}

// Without the rounding term (an f32 model) and the learning rate's (SGD), 1e-4 of an array's
// largest is the whole tolerance.
TEST(TrainingCheckTest, AnF32ModelIsHeldToOneTenThousandthOfEachArraysLargest) {
  const ZooStep f32 = Build("f32", "sgd");
  auto nudge = [](double by) {
    return [by](ir::Literal& v) {
      const int64_t at = Largest(v);
      v.SetDouble(at, v.GetDouble(at) * (1 + by));
    };
  };
  EXPECT_TRUE(CheckOneStep(f32, nullptr, "layer0.fc1.w", nudge(0.5e-4)).passed());
  EXPECT_FALSE(CheckOneStep(f32, nullptr, "layer0.fc1.w", nudge(2e-4)).passed());
}

}  // namespace
}  // namespace alpa::tools
