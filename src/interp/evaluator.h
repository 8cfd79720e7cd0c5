// The reference interpreter: exact single-device semantics of HLO modules.
//
// It is the oracle of every correctness test (sharded execution is compared against it), so it
// favours clarity; dot and convolution go through the kernels layer, and elementwise loops are
// templates over the element type. By default it is one device: collectives run with one
// participant (the identity), and partition-id / replica-id are 0. Given a DeviceContext it runs
// as one device of an SPMD program (device_context.h), its collectives going to a backend.
#ifndef ALPA_INTERP_EVALUATOR_H_
#define ALPA_INTERP_EVALUATOR_H_

#include <memory>
#include <vector>

#include "interp/device_context.h"
#include "ir/computation.h"
#include "ir/literal.h"
#include "ir/module.h"
#include "support/status.h"

namespace alpa::interp {

// Runs the entry computation on `arguments`, one Literal per entry parameter whose shape must
// match the parameter's (otherwise an error naming the parameter). Returns the root's value.
// The arguments are taken by value: move them in when the caller no longer needs them, which
// saves a copy of every parameter (gigabytes for a real model).
// rng ops draw from a deterministic stream that starts afresh in every call.
Result<ir::Literal> EvaluateModule(const ir::Module& module, std::vector<ir::Literal> arguments);

// Same, as device `device.partition_id` of `device.num_partitions` running an SPMD program: the
// arguments have the local (per-device) shapes, partition-id returns the device's id, and the
// collectives with several participants run through `device.collectives` (an error naming the
// instruction when it is null). Every device of the program must make this call, each on its
// own thread or process, for the collectives to meet.
Result<ir::Literal> EvaluateModule(const ir::Module& module, std::vector<ir::Literal> arguments,
                                   const DeviceContext& device);

// Ok when `arguments` fit `computation`'s parameters: one per parameter, of its shape. Errors name
// the parameter and both shapes.
Status CheckArguments(const ir::Computation& computation,
                      const std::vector<ir::Literal>& arguments);

// Same for one computation (its called computations are followed through the instructions).
Result<ir::Literal> EvaluateComputation(const ir::Computation& computation,
                                        std::vector<ir::Literal> arguments);

namespace internal {
struct EvalContext;
}  // namespace internal

// One instruction at a time, for executors that schedule the instructions themselves (the
// runtime's instruction lists): the same kernels and semantics as EvaluateModule. The evaluator
// carries what outlives one instruction (the device, the rng stream), so an executor that
// evaluates a computation's instructions in post order gets EvaluateModule's values exactly.
class InstructionEvaluator {
 public:
  explicit InstructionEvaluator(const DeviceContext& device);
  ~InstructionEvaluator();
  InstructionEvaluator(const InstructionEvaluator&) = delete;
  InstructionEvaluator& operator=(const InstructionEvaluator&) = delete;

  // The value of `instruction` given its operands' values, in operand order. Errors say what is
  // wrong with the instruction; the caller names it.
  Result<ir::Literal> Evaluate(const ir::Instruction& instruction,
                               const std::vector<const ir::Literal*>& operands);

 private:
  std::unique_ptr<internal::EvalContext> context_;
};

}  // namespace alpa::interp

#endif  // ALPA_INTERP_EVALUATOR_H_
