// The partitioner's handlers, one file per op family (XLA's dot_handler.cc, ...): each builds the
// local op of one instruction from its operands' local tiles, already resharded to the layouts
// its chosen strategy requires. The driver (partitioner.cc) runs the strategy's own collectives
// after it. Internal to the spmd layer.
#ifndef ALPA_SPMD_HANDLERS_H_
#define ALPA_SPMD_HANDLERS_H_

#include <vector>

#include "ir/instruction.h"
#include "sharding/strategy.h"
#include "spmd/spmd_builder.h"
#include "support/status.h"

namespace alpa::spmd {

struct OpInput {
  const ir::Instruction& original;
  const sharding::Strategy& strategy;
  std::vector<ir::Instruction*> operands;  // local tiles, in strategy.operands' layouts
  // The layouts of the result the handler builds: strategy.output before its collectives (a sum
  // the strategy all-reduces itself is still partial here).
  sharding::LeafSpecs output;
  ir::Shape local_shape;  // of `output`
};

using Handler = Result<ir::Instruction*> (*)(SpmdBuilder&, const OpInput&);

// The handler of `opcode`, or nullptr when the partitioner does not handle it yet.
Handler FindHandler(ir::Opcode opcode);

// The original instruction again, on the local operands with the local shape (called
// computations copied): what a purely local op lowers to. Errors name the instruction.
Result<ir::Instruction*> EmitLocal(SpmdBuilder& s, const OpInput& input);
// The same with other operands or attributes (a local slice size, shifted indices).
Result<ir::Instruction*> EmitLocalWith(SpmdBuilder& s, const OpInput& input,
                                       std::vector<ir::Instruction*> operands,
                                       ir::Attributes attributes);

// source_handler.cc: parameter, constant, iota.
Result<ir::Instruction*> HandleSource(SpmdBuilder& s, const OpInput& input);
// elementwise_handler.cc: unary, binary, compare, select, clamp, convert.
Result<ir::Instruction*> HandleElementwise(SpmdBuilder& s, const OpInput& input);
// dot_handler.cc.
Result<ir::Instruction*> HandleDot(SpmdBuilder& s, const OpInput& input);
// reduce_handler.cc.
Result<ir::Instruction*> HandleReduce(SpmdBuilder& s, const OpInput& input);
// shape_handler.cc: broadcast, transpose, reverse, reshape.
Result<ir::Instruction*> HandleShape(SpmdBuilder& s, const OpInput& input);
// slice_handler.cc: slice, pad, concatenate, dynamic-slice, dynamic-update-slice.
Result<ir::Instruction*> HandleSlice(SpmdBuilder& s, const OpInput& input);
// window_handler.cc: convolution, reduce-window, select-and-scatter.
Result<ir::Instruction*> HandleWindow(SpmdBuilder& s, const OpInput& input);
// gather_scatter_handler.cc.
Result<ir::Instruction*> HandleGatherScatter(SpmdBuilder& s, const OpInput& input);
// misc_handler.cc: sort and top-k, their rows local.
Result<ir::Instruction*> HandleSort(SpmdBuilder& s, const OpInput& input);
// misc_handler.cc: batch-norm-training, -inference and -grad, their features local.
Result<ir::Instruction*> HandleBatchNorm(SpmdBuilder& s, const OpInput& input);
// misc_handler.cc: while, conditional, call, after-all, add-dependency and the rng ops, replicated.
Result<ir::Instruction*> HandleReplicated(SpmdBuilder& s, const OpInput& input);
// tuple_handler.cc: get-tuple-element of a node, identity and elementwise custom-calls
// (ir/known_custom_calls.h).
Result<ir::Instruction*> HandleTupleAndMarkers(SpmdBuilder& s, const OpInput& input);

}  // namespace alpa::spmd

#endif  // ALPA_SPMD_HANDLERS_H_
