// Values to train a dumped whole train step with (api/dumped_train_step.h gives its parameters'
// roles). The module holds none, so they are made here:
//
//   weights            normal with standard deviation 1/sqrt(fan_in), fan_in the product of all
//                      dimensions but the first (PyTorch's nn.Linear keeps [out, in]); vectors one
//   optimizer state    zero (Adam's moments, SGD's momentum before the first step)
//   scalars            the values the user names (--scalar p0.1=0.01): a learning rate, a step
//                      count; nothing says which, so one left unnamed is an error listing them
//   batch              each step's, synthetic (floats normal; integers below the table they
//                      index, models::IndexBound, or 0/1; drawn from seed mod models::kBatchPool
//                      so that the step sees the same batches again and the loss can fall) or
//                      read from the user's file (api/batch_file.h)
//   other arrays       (inputs of another leading dimension, like position ids) made once, as
//                      the batch is
//
// A step's results replace the parameters input_output_alias names, as the framework that
// dumped it would donate them; the loss is the first floating-point scalar among the results
// that replace none.
#ifndef ALPA_API_DUMPED_STEP_VALUES_H_
#define ALPA_API_DUMPED_STEP_VALUES_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "api/parallelize.h"
#include "ir/literal.h"
#include "models/model.h"
#include "support/status.h"

namespace alpa::api {

struct DumpedStepValues {
  std::vector<ir::Literal> arguments;  // every entry parameter's value, whole
  std::vector<int64_t> batch;          // parameters each step's batch replaces (ascending)
  int64_t batch_rows = 0;              // their dimension 0
  // (root element, parameter): the result that replaces each donated parameter.
  std::vector<std::pair<int64_t, int64_t>> next;
  int64_t loss_result = -1;  // the root element that is the loss; -1: none
};

// The values before the first step (see above); `scalars` by parameter name. Errors: a scalar
// parameter not in `scalars` (all of them listed, with their types), a name in `scalars` that is
// no scalar parameter, the aliases' (hlo::InputOutputAliases).
Result<DumpedStepValues> InitialDumpedStepValues(const TrainStep& step,
                                                 const std::map<std::string, double>& scalars,
                                                 uint64_t seed);

// Synthetic batches for the batch parameters of `step` (see above), `rows` rows each.
models::BatchGenerator SyntheticDumpedBatches(const TrainStep& step);

// Threads one step's results (the root's elements, as ParallelExecutable::Run and the reference
// interpreter give them) into the next step's arguments.
void AdvanceDumpedStep(DumpedStepValues& values, const std::vector<ir::Literal>& results);

}  // namespace alpa::api

#endif  // ALPA_API_DUMPED_STEP_VALUES_H_
