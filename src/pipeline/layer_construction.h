// Automatic layer construction on IR: the instructions of a forward computation cut into L
// contiguous layers by layer_clustering.h (Alpa's cluster_jaxpr_by_cost over jaxpr equations).
//
// Units are the instructions in Computation::MakePostOrder() order (deterministic, operands first):
//   cost   FLOPs of the instruction, its called computations included (cost/flop_count.h). Alpa
//          counts only the heavy ops' FLOPs; the other ops' FLOPs are small beside a dot's and
//          only ever move a cut by a few cheap instructions.
//   heavy  a dot or convolution, or an instruction whose called computations do one (a fusion, a
//          call, a loop), as Alpa's is_nontrivial.
//   edges  one per operand, the operand's bytes (all leaves of a tuple), except operands that are
//          parameters or constants: those are inputs of the whole step, handed to whichever stage
//          reads them, not sent between layers (Alpa counts only values its equations produce).
// Parameters and constants are units of cost 0 all the same, so every instruction has a layer.
#ifndef ALPA_PIPELINE_LAYER_CONSTRUCTION_H_
#define ALPA_PIPELINE_LAYER_CONSTRUCTION_H_

#include <cstdint>
#include <vector>

#include "ir/computation.h"
#include "pipeline/layer_clustering.h"
#include "support/status.h"

namespace alpa::pipeline {

struct ComputationUnits {
  std::vector<const ir::Instruction*> post_order;  // unit i is post_order[i]
  std::vector<ClusteringUnit> units;
  std::vector<ValueEdge> edges;  // value_id = the producer's position in post_order
};

// Errors: those of cost::CountFlops (a malformed loop trip count, a recursive call graph), naming
// the instruction.
Result<ComputationUnits> ComputationToUnits(const ir::Computation& computation);

// The layer (0..num_layers - 1) of every instruction of `forward`, indexed by position in
// forward.MakePostOrder(); nondecreasing along it, so each layer is a contiguous run of the post
// order. Errors: ComputationToUnits's and ClusterUnitsIntoLayers's (num_layers outside
// [1, #instructions], eps < 0). A partition that needed a relaxed bound is still returned; use
// the two calls above to see `relaxed`, the objective and the per-layer figures.
Result<std::vector<int64_t>> ClusterComputationIntoLayers(const ir::Computation& forward,
                                                          int64_t num_layers, double eps = 0.5);

}  // namespace alpa::pipeline

#endif  // ALPA_PIPELINE_LAYER_CONSTRUCTION_H_
