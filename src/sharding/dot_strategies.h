// Strategies of dot, and of any contraction out[...] = sum_k lhs[...] * rhs[...] (convolution
// builds on the same enumeration): the paper's Table 3 view, generalised to N-D meshes and to
// several dimensions per class.
//
// The iteration space has four classes of dimensions: b (batch: in lhs, rhs and the output),
// i (lhs and output), j (rhs and output) and k (contracting: lhs and rhs). A strategy maps every
// mesh axis of size > 1 to one iteration dimension (EnumerateDimSplits with maximal_only: an axis
// is left unused only when no dimension can take it); the operand and output specs follow by
// splitting each tensor dimension over the axes of its iteration dimension. Axes mapped to k cut
// the sum: every device holds a partial sum over them, which the dot either all-reduces itself or,
// with options.allow_partial_outputs, leaves partial for its users' edges to all-reduce or
// reduce-scatter, or reduce-scatters itself onto one output dimension (strategy_util.h's
// ReduceScatterVariants: one collective however many users want the split). On a (2, 4) mesh,
// [I,K] x [K,J]:
//
//   name                                   out       lhs       rhs       comm per device
//   SS = SR x RS @ {0,1}                   [S0,S1]   [S0,R]    [R,S1]    0
//   SR = SS x SR @ {0,1} (allreduce @ 1)   [S0,R]    [S0,S1]   [S1,R]    AR(I/2*J*e, axis 1)
//   SR = SS x SR @ {0,1} (partial @ 1)     [S0,R] P1 [S0,S1]   [S1,R]    0 (the edge pays)
//   SR = SS x SR @ {0,1} (reducescatter @ 1 to dim 1)
//                                          [S0,S1]   [S0,S1]   [S1,R]    RS(I/2*J*e, axis 1)
//   RS = RS x SS @ {1,0} (allreduce @ 0)   [R,S1]    [R,S0]    [S0,S1]   AR(I*J/4*e, axis 0)
//   SR = SR x RR @ {01}                    [S01,R]   [S01,R]   [R,R]     0
//   RR = RS x SR @ {01} (allreduce @ {0,1}) [R,R]    [R,S01]   [S01,R]   AR(I*J*e, axes 0,1)
//   RR = RR x RR                           [R,R]     [R,R]     [R,R]     0, compute not divided
//
// Names: one letter per dimension of out, lhs and rhs ("S" split, "R" not; with a batch class,
// a split dimension also names its class: "SbSiR = SbSiR x SbRR"), then after "@" the axes of
// the split iteration dimensions in the order b, i, j, k (the axes of one dimension written
// together: "{01,2}"). For a plain matmul this is Alpa's notation; Alpa lists an RS strategy's
// axes k first ("RS = RS x SS @ {0,1}"), here it reads "@ {1,0}".
//
// Costs: compute = full / (product of the sizes of all mapped axes); the all-reduce runs on the
// output tile (bytes = TileBytes(out)); memory = the output tile.
//
// Bounds: with R mesh axes of size > 1, N non-contracting and K contracting iteration dimensions,
// contracting axes go to one contracting dimension at most, so (when every dimension is large
// enough to take every axis) there are N^R mappings without k, K((N+1)^R - N^R) with k, each of
// the latter 2 + D times with partial outputs (all-reduce, partial, a reduce-scatter onto each of
// the D output dimensions), plus RR:
//   1 + N^R + (2 + D)K((N+1)^R - N^R)
// e.g. on (2,4): matmul (N=2, K=1, D=2) 25. Small or indivisible dimensions only remove
// mappings and reduce-scatters (an axis no dimension can take stays unused).
#ifndef ALPA_SHARDING_DOT_STRATEGIES_H_
#define ALPA_SHARDING_DOT_STRATEGIES_H_

#include <cstdint>
#include <vector>

#include "ir/instruction.h"
#include "sharding/strategy.h"
#include "support/status.h"

namespace alpa::sharding {

// One iteration dimension of a contraction: its extent and the tensor dimension it indexes in
// the output, lhs (operand 0) and rhs (operand 1), -1 where absent. Its class follows: b (all
// three), i (output and lhs), j (output and rhs), k (lhs and rhs).
struct ContractionDim {
  int64_t size = 0;
  int64_t output_dim = -1;
  int64_t lhs_dim = -1;
  int64_t rhs_dim = -1;
};

// The strategies of `instruction` (an array result; operands 0 and 1 the contracted tensors)
// over the iteration dimensions `dims` listed in the order b, i, j, k; tensor dimensions no entry
// names stay whole. Errors: those of the compute cost model.
Result<StrategySet> ContractionStrategies(const ir::Instruction& instruction,
                                          const StrategyContext& ctx,
                                          const std::vector<ContractionDim>& dims);

// dot: b = the batch dimensions, i / j = the lhs / rhs free dimensions, k = the contracting
// ones. Errors: not a dot, a dot without dimension numbers.
Result<StrategySet> DotStrategies(const ir::Instruction& instruction, const StrategyContext& ctx);

}  // namespace alpa::sharding

#endif  // ALPA_SHARDING_DOT_STRATEGIES_H_
