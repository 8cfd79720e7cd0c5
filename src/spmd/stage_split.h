// A pipeline stage's partitioned train step cut into the three programs its devices run at
// different times (Alpa's forward, backward and apply-gradient stage executables):
//
//   forward(m)  once per micro-batch m, when its inputs arrive: the values sent on (and the
//               model's loss on the last stage), plus the residuals the backward pass reads
//   backward(m) once per micro-batch, when the cotangents of the sent values come back: the
//               gradients of the received activations (sent back) and the weights' gradients
//               of micro-batch m, which the runtime sums over the micro-batches
//   update      once per step: the optimizer on the summed gradients (its gradient
//               synchronisation included: a gradient's all-reduce runs once, on the sum, as
//               Alpa's pipeline runs it)
//
// The cut is a free function over the partitioned program (spmd/partitioner.h), so the three
// programs are exactly the stage's planned program: the same layouts, kernels and collectives.
// With P the program, its parameters by role and its result leaves by role:
//   F = the ancestors of the sent values and the loss that depend on no cotangent
//   B = the ancestors of the input gradients and of the weights' gradients (the instructions
//       tagged ir::ValueTag::kGradient), but F
//   U = the ancestors of the next values (W', state', shared'), but F and B
// Values that depend on no parameter (constants, iotas, broadcasts of them) are recomputed in
// every program that reads them rather than handed over, and so are the forward pass's
// broadcasts the backward pass reads (from their operands, which are handed over). F hands B the F
// values B reads (the residuals); B hands U the weights' gradients only; anything else crossing is
// an error.
#ifndef ALPA_SPMD_STAGE_SPLIT_H_
#define ALPA_SPMD_STAGE_SPLIT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/module.h"
#include "support/status.h"

namespace alpa::spmd {

// What a parameter of the stage's train step is.
enum class StageParameter {
  kWeight,          // state kept on the devices from step to step
  kOptimizerState,  // likewise
  kSharedState,     // likewise: t, or a state of the user's optimizer that reads no weight
  kReceived,        // per micro-batch: a value an earlier stage sent
  kCotangent,       // per micro-batch: the cotangent of a sent value, from a later stage
  kBatch,           // per micro-batch: the model's batch parameters (tokens, labels)
};

// Weights, optimizer state and shared state (t): what a stage keeps on its devices from step to
// step.
inline bool IsStateParameter(StageParameter role) {
  return role == StageParameter::kWeight || role == StageParameter::kOptimizerState ||
         role == StageParameter::kSharedState;
}

// The roles of the partitioned train step's parameters and result leaves.
struct StageRoles {
  std::vector<StageParameter> parameters;  // by parameter number
  // Result leaves (the root's elements) by role, each in order.
  int64_t loss_leaf = -1;                  // -1: the stage computes no model loss
  std::vector<int64_t> next_value_leaves;  // W'..., state'..., shared'... (t + 1)
  std::vector<int64_t> input_gradient_leaves;
  std::vector<int64_t> sent_leaves;
};

// An input of one of the three programs.
struct PartInput {
  enum class Kind {
    kParameter,  // the train step's parameter `index`
    kResidual,   // forward output `index` of the same micro-batch (after the sent values and loss)
    kGradient,   // the summed weights' gradient `index` (backward's outputs after the inputs')
  };
  Kind kind = Kind::kParameter;
  int64_t index = 0;
  friend bool operator==(const PartInput&, const PartInput&) = default;
};

struct StagePart {
  std::unique_ptr<ir::Module> module;  // its entry: one parameter per input, a tuple root
  std::vector<PartInput> inputs;
};

struct StageSplit {
  // Outputs: the sent values (sent_leaves order), the loss (when the stage has it), residuals.
  StagePart forward;
  // Outputs: the input gradients (input_gradient_leaves order), then the weights' gradients.
  StagePart backward;
  // Outputs: the next values (next_value_leaves order).
  StagePart update;
  int64_t num_residuals = 0;
  int64_t num_gradients = 0;
  // The program's instruction of each weights' gradient (backward's outputs), by name.
  std::vector<std::string> gradient_names;
};

// Cuts `program` (one entry computation with a tuple root) as above. Errors: roles that do not
// match the program, a value crossing between the programs other than residuals and weights'
// gradients (named), a computation the cut cannot copy.
Result<StageSplit> SplitStageProgram(const ir::Module& program, const StageRoles& roles);

}  // namespace alpa::spmd

#endif  // ALPA_SPMD_STAGE_SPLIT_H_
