// Alpa's parallel methods (reference/alpa.md 1.2) as pins on the auto-sharding pass
// (AutoShardingOptions::pinned_outputs): every method is the same ILP with some layouts fixed, so
// the collectives each method is known for come out of the solver's resharding, priced by the
// same cost model, instead of being written by hand.
//
// The methods need to know what each entry parameter of the step is (plain data: a name, the
// dimensions, a role) and which instruction computes its next value (a train step's
// `step(W..., state..., t, B...) -> (loss, W'..., state'..., t + 1)`, autodiff/train_step.h).
// Every method except `shard` runs on the 1-D mesh of all N devices (axis 0), with every value's
// batch dimension split over it (AutoShardingOptions::force_batch_axis = 0 and the batch
// parameters as seeds, batch_dims.h; `alpa plan` sets both): the pins below fix the parameters,
// the forcing keeps the solver from gathering the batch anywhere in between.
//
//   shard  no pins: the solver chooses everything on the given mesh.
//   data   batch parameters [S0,R,...] (dimension 0 split over axis 0); weights and optimizer
//          state replicated, and so are their next values (an in-place update: the next step
//          reads them as this one did); the rest automatic. Expected collectives: one all-reduce
//          per gradient (the dots of the backward pass contract over the split batch dimension),
//          nothing else on an MLP.
//   zero2  as data, but optimizer state and its next value split over axis 0 on their largest
//          dimension divisible by N (the first such on a tie; a tensor with none stays
//          replicated). The update then runs on 1/N of each state tensor: each gradient is
//          reduce-scattered into the state's split (once, by the dot or reduce that computes it:
//          both moments read it; StrategyOptions::allow_partial_outputs) and each updated weight
//          is all-gathered back to replicated. Expected: reduce-scatter + all-gather where data
//          had all-reduce.
//   zero3  as zero2, plus weights and their next values split the same way as their state (same
//          shape, same rule, so the update is local). Every use of a weight all-gathers it first
//          (the solver's resharding of a split parameter to the replicated layout its dot wants,
//          or a dot strategy that consumes the split directly when cheaper). Expected:
//          all-gathers in the forward and backward passes, reduce-scatter of the gradients, no
//          all-gather after the update.
//
// With micro-batches (M > 1) a batch parameter stacks them along dimension 0, so its [S0,...] pin
// gives each device whole micro-batches rather than 1/N of each; the solver then moves rows
// between devices per micro-batch. Data parallelism with gradient accumulation is planned right
// only for M = 1 today.
#ifndef ALPA_SHARDING_PARALLEL_METHODS_H_
#define ALPA_SHARDING_PARALLEL_METHODS_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cost/memory_model.h"
#include "ir/computation.h"
#include "sharding/strategy.h"
#include "support/status.h"

namespace alpa::sharding {

enum class ParallelMethod { kShard, kData, kZero2, kZero3 };

// "shard", "data", "zero2", "zero3".
std::string_view ParallelMethodName(ParallelMethod method);
// The inverse; an unknown name is an error listing the four.
Result<ParallelMethod> ParseParallelMethod(std::string_view name);

// One entry parameter of the step.
struct MethodParameter {
  std::string name;  // the parameter instruction's
  std::vector<int64_t> dims;
  cost::ParameterRole role = cost::ParameterRole::kOther;
  // The instruction computing the value that replaces this parameter in the next step (it gets
  // the parameter's pin); empty when the step does not update it.
  std::string next_value;
};

// The parameters of `entry` with `roles` (in parameter order; missing ones are kOther). With
// `output_of_parameter[i] = k >= 0`, parameter i's next value is element k of the root tuple
// (the instruction that produces it, looking through tuples and their get-tuple-elements).
// Errors: k out of range or a root that is not a tuple.
Result<std::vector<MethodParameter>> StepParameters(
    const ir::Computation& entry, const std::vector<cost::ParameterRole>& roles,
    const std::vector<int64_t>& output_of_parameter);

// The pins of `method` on a mesh of `mesh_shape` (the rules above). Errors: a method other than
// shard on a mesh that is not 1-D; a batch parameter whose dimension 0 does not divide among the
// devices; no batch parameter at all for data/zero2/zero3 (nothing to make data parallel).
Result<std::map<std::string, LeafSpecs>> MethodPins(ParallelMethod method,
                                                    const std::vector<int64_t>& mesh_shape,
                                                    const std::vector<MethodParameter>& parameters);

}  // namespace alpa::sharding

#endif  // ALPA_SHARDING_PARALLEL_METHODS_H_
