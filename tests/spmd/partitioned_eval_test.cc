// The partitioned program of a one-device plan, run by the reference interpreter, computes what
// the original step computes (the multi-device runs are the runtime's: tests/runtime).
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "interp/evaluator.h"
#include "interp/random_inputs.h"
#include "spmd/partitioner.h"
#include "tests/sharding/train_step_plans.h"

namespace alpa::spmd {
namespace {

TEST(PartitionedEvalTest, OneDeviceProgramComputesTheSameStep) {
  Result<cluster::ClusterSpec> cluster = cluster::ParseClusterArgument("p3.16xlarge:1x1");
  ASSERT_TRUE(cluster.ok()) << cluster.status().message();
  const sharding::testing::Planned planned =
      sharding::testing::Plan(sharding::testing::MlpTrainStep(16, 32, 2), *cluster, {1});
  Result<std::unique_ptr<ir::Module>> program =
      PartitionComputation(*planned.module->entry(), planned.solution, {1});
  ASSERT_TRUE(program.ok()) << program.status().message();

  // Random weights and batch; the Adam moments and the step count start at zero (a random
  // second moment would be negative and its square root NaN).
  std::vector<ir::Literal> arguments = interp::RandomArguments(*planned.module->entry(), 7);
  for (const ir::Instruction* parameter : planned.module->entry()->parameters()) {
    const std::string& name = parameter->name();
    if (name == "step" || name.ends_with(".m") || name.ends_with(".v")) {
      arguments[static_cast<size_t>(parameter->attributes().parameter_number)] =
          ir::Literal::CreateZeros(parameter->shape());
    }
  }
  Result<ir::Literal> expected = interp::EvaluateModule(*planned.module, arguments);
  ASSERT_TRUE(expected.ok()) << expected.status().message();
  Result<ir::Literal> actual = interp::EvaluateModule(**program, arguments);
  ASSERT_TRUE(actual.ok()) << actual.status().message();
  // The loss, and every updated weight and optimizer state: the same ops in the same order, so
  // the same bits.
  ASSERT_EQ(actual->tuple_elements().size(), expected->tuple_elements().size());
  const double loss = expected->tuple_element(0).GetDouble(0);
  EXPECT_TRUE(std::isfinite(loss));
  EXPECT_EQ(actual->tuple_element(0).GetDouble(0), loss);
  EXPECT_EQ(interp::ComputeChecksum(*actual).hash, interp::ComputeChecksum(*expected).hash);
}

}  // namespace
}  // namespace alpa::spmd
