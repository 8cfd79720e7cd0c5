// Training a zoo model: the train step (autodiff/train_step.h) takes (W..., state..., t, B...)
// and returns (loss, W'..., state'..., t + 1). The carried values (the weights, their optimizer
// state and the step count) go from one step to the next, and each step gets a fresh synthetic
// batch. Where the carried values stay between steps is the runner's: whole values for the
// reference interpreter (the loop of tests/autodiff/training_loop.h), each device's tiles for a
// parallel executable (api::DeviceState), fetched whole only when asked.
#ifndef ALPA_TOOLS_ALPA_ZOO_TRAINING_H_
#define ALPA_TOOLS_ALPA_ZOO_TRAINING_H_

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/checkpointing.h"
#include "ir/literal.h"
#include "ir/module.h"
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

// The records as `alpa run --cluster --json` prints them: {"step", "loss", "time_s",
// "peak_memory_bytes"} and, with `reference`, "reference_loss".
nlohmann::ordered_json StepRecordsJson(const std::vector<StepRecord>& records, bool reference);

// The table of `alpa run --cluster`'s steps: its header (with `reference`, the reference's loss
// and the difference too), then a row per step.
void PrintStepHeader(bool reference);
void PrintStepRow(const StepRecord& record, bool reference);

// The step time to set beside the prediction: the median of the steps after the first, which
// alone pays the one-time costs (fresh buffers' page faults, oneDNN's primitive creation: 28 ms
// against 5 ms warm for gpt-tiny on local:2), so that neither it nor one step slowed by a busy
// host moves the figure. With one step, that step.
double MeasuredStepSeconds(const std::vector<StepRecord>& records);

// Six decimals while the loss is of a usual size; exponent form once it diverges.
std::string FormatLoss(double loss);

// Runs train steps on the carried values it keeps (in the step's parameter order: the weights,
// their optimizer state, then t).
class StepRunner {
 public:
  virtual ~StepRunner() = default;
  // Keeps `carried`, whole values, in place of what it held.
  virtual Status Place(std::vector<ir::Literal> carried) = 0;
  // Runs one step on the kept values and `batch`, keeps the step's carried results in their
  // place, and returns the loss.
  virtual Result<double> Step(std::vector<ir::Literal> batch) = 0;
  // The kept values, whole.
  virtual Result<std::vector<ir::Literal>> Fetch() = 0;

  // Saves the kept values of `step` (a train step whose carried values are its first
  // parameters) as the next checkpoint of target.root (api/checkpointing.h). By default the
  // values whole, as one device's file; a runner whose devices hold tiles saves each device's.
  // Returns the checkpoint's directory.
  virtual Result<std::string> Save(const ir::Module& step, const api::CheckpointTarget& target);
  // Keeps the values of the checkpoint at `path` (saved by any runner of `model`) in place of
  // what it held; returns what was read (its tiles handed over).
  virtual Result<api::RestoredState> Restore(const ir::Module& step, const std::string& path,
                                             const std::string& model);
};

// The reference interpreter's runner of `step` (which must outlive it): whole values.
std::unique_ptr<StepRunner> InterpreterRunner(const ir::Module& step);

// The carried values before the first step: models::InitialWeights(model, seed) (converted to the
// step's master weight type where it differs, for mixed precision), zero optimizer state, t = 0.
std::vector<ir::Literal> InitialCarriedValues(const ZooStep& zoo, uint64_t seed);

// The batch of step `index` (from 0): drawn from seed + index, with the global batch's rows (the
// micro-batches stacked).
std::vector<ir::Literal> StepBatch(const ZooStep& zoo, uint64_t seed, int64_t index);

class ZooTraining {
 public:
  // Starts from InitialCarriedValues(zoo, seed), placed with the first step. `zoo` must have its
  // step and outlive this object. Steps run in the reference interpreter unless a `runner` is
  // given (a parallel executable's).
  ZooTraining(const ZooStep& zoo, uint64_t seed, std::unique_ptr<StepRunner> runner = nullptr);

  // Runs step `index` (from 0) on StepBatch(index); returns the step's loss. `seconds` receives
  // the time the runner's step took. Errors name the step.
  Result<double> Step(int64_t index, double& seconds);

  // The carried values as the last step left them, whole: the weights, their optimizer state,
  // then t (step order).
  Result<std::vector<ir::Literal>> Carried();

  // Continues from `carried` (as Carried() returns them): --check runs the reference from the
  // devices' inputs.
  Status Restart(std::vector<ir::Literal> carried);

  // Saves the carried values as a checkpoint (StepRunner::Save); target.model is set here.
  Result<std::string> Save(api::CheckpointTarget target);
  // Continues from the checkpoint at `path`: the next step is the one after the checkpoint's.
  Result<api::RestoredState> Resume(const std::string& path);

 private:
  // Places the initial values if nothing is placed yet.
  Status PlaceInitial();

  const ZooStep& zoo_;
  uint64_t seed_;
  std::unique_ptr<StepRunner> runner_;
  bool placed_ = false;
};

}  // namespace alpa::tools

#endif  // ALPA_TOOLS_ALPA_ZOO_TRAINING_H_
