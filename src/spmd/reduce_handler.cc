// Reduce: the local reduce of the tile over the same dimensions. Where a reduced dimension is
// split over axes A, each device holds the reduction of its tile only: a pending reduction over
// A, which the strategy all-reduces with the reduce's own reducer (partitioner.cc) or, for an
// add, hands on as a partial sum. The init value must be the reducer's identity (0 for add, -inf
// for max), as in every reduce the autodiff and model layers build: it is applied once per tile.
#include "spmd/handlers.h"

namespace alpa::spmd {

Result<ir::Instruction*> HandleReduce(SpmdBuilder& s, const OpInput& input) {
  return EmitLocal(s, input);
}

}  // namespace alpa::spmd
