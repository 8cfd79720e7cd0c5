// Training a zoo model in the reference interpreter, the loop of tests/autodiff/training_loop.h:
// the train step (autodiff/train_step.h) takes (W..., state..., t, B...) and returns
// (loss, W'..., state'..., t + 1); the weights, optimizer state and step count are threaded from
// one step to the next, and each step gets a fresh synthetic batch.
#ifndef ALPA_TOOLS_ALPA_ZOO_TRAINING_H_
#define ALPA_TOOLS_ALPA_ZOO_TRAINING_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ir/literal.h"
#include "support/status.h"
#include "tools/alpa/zoo_options.h"

namespace alpa::tools {

// One training step as the run commands report it.
struct StepRecord {
  int64_t step = 0;  // from 1
  double loss = 0;
  double seconds = 0;
  double reference_loss = 0;      // `alpa run --check`: the reference interpreter's loss
  int64_t peak_memory_bytes = 0;  // `alpa run --cluster`: the largest device's measured peak
};

// Six decimals while the loss is of a usual size; exponent form once it diverges.
std::string FormatLoss(double loss);

// Runs the train step: its arguments in, the root tuple's elements out.
using StepRunner = std::function<Result<std::vector<ir::Literal>>(std::vector<ir::Literal>)>;

class ZooTraining {
 public:
  // Before the first step: models::InitialWeights(model, seed) (converted to the step's master
  // weight type where it differs, for mixed precision), zero optimizer state, t = 0. `zoo` must
  // have its step and outlive this object. Steps run in the reference interpreter unless a
  // `runner` is given (a parallel executable).
  ZooTraining(const ZooStep& zoo, uint64_t seed, StepRunner runner = {});

  // The arguments of step `index` (from 0): the carried values, t, and the batch drawn from
  // seed + index with the global batch's rows (the micro-batches stacked).
  std::vector<ir::Literal> Arguments(int64_t index) const;

  // Runs step `index` and carries its results to the next; returns the step's loss. `seconds`
  // receives the time the interpreter took. Errors name the step.
  Result<double> Step(int64_t index, double& seconds);

  // The weights, then their optimizer state, as the last step left them (step order).
  const std::vector<ir::Literal>& carried() const { return carried_; }

  // Takes `other`'s carried values and step count (copies), so that the next step starts from
  // the inputs other's next step has: --check runs the reference from the devices' inputs.
  void Follow(const ZooTraining& other) {
    carried_ = other.carried_;
    step_count_ = other.step_count_;
  }

 private:
  std::vector<ir::Literal> Batch(int64_t index) const;

  const ZooStep& zoo_;
  uint64_t seed_;
  StepRunner runner_;
  size_t carried_count_ = 0;
  std::vector<ir::Literal> carried_;  // the weights, then their optimizer state (step order)
  ir::Literal step_count_;            // t
};

}  // namespace alpa::tools

#endif  // ALPA_TOOLS_ALPA_ZOO_TRAINING_H_
