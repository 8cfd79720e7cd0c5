// Strategies of convolution: a contraction (dot_strategies.h) over the iteration dimensions below,
// with the same enumeration, names, costs, partial variants and bounds.
//
//   iteration dim (in this order)  output      input (lhs)       kernel (rhs)      class
//   group                          feature     feature / batch   output feature    b
//   batch                          batch       batch             -                 i
//   pointwise spatial s            spatial s   spatial s         -                 i
//   output feature                 feature     -                 output feature    j
//   input feature                  -           feature           input feature     k
//
// On a (2, 4) mesh, dim_labels=bf01_io01->bf01 (letters in each tensor's dimension order):
//   SSRR = SRRR x RSRR @ {0,1}                   batch @ 0, output feature @ 1, no communication
//   SRRR = SSRR x SRRR @ {0,1} (allreduce @ 1)   batch @ 0, input feature @ 1
//   RSRR = RSRR x SSRR @ {1,0} (allreduce @ 0)   output feature @ 1, input feature @ 0
//   RRRR = RRRR x RRRR                           replicated
//
// What is allowed, and why:
//   - A spatial dimension splits only when its window is pointwise (size 1, stride 1, no padding,
//     no dilation, so the kernel's extent there is 1): each output element then reads the input
//     element at the same position, and tiles need no halo. Other spatial splits need halo
//     exchanges, which no strategy prices; they are not offered.
//   - feature_group_count G > 1 (groups are group-major blocks of the features):
//       depthwise (G = input features): batch, pointwise spatial, and the group dimension of size
//       G splitting the input feature, the kernel's output feature and the output feature
//       together (Alpa's depthwise "SS = SS x RS"); every tile holds whole groups because only
//       divisible splits of G are made. No contracting dimension: each group sums one feature.
//     other grouped convolutions: batch only.
//   - batch_group_count G > 1 (the input batch is G group-major blocks, one per block of output
//     features; the filter gradient of a grouped convolution): the input feature is still a
//     contracting dimension; the group dimension splits the input batch, the kernel's output
//     feature and the output feature together only for the depthwise case (G = output
//     features); the output batch never splits (it indexes within a block); pointwise spatial.
//   - Forcing the batch axis (dot_strategies.h) applies to the batch when it is the output's
//     dimension 0 and batch_group_count is 1 (a filter-gradient convolution's output is
//     kernel-shaped, its dimension 0 no batch).
#ifndef ALPA_SHARDING_CONVOLUTION_STRATEGIES_H_
#define ALPA_SHARDING_CONVOLUTION_STRATEGIES_H_

#include "ir/instruction.h"
#include "sharding/strategy.h"
#include "support/status.h"

namespace alpa::sharding {

// Errors: not a convolution, or one without dim_labels or window.
Result<StrategySet> ConvolutionStrategies(const ir::Instruction& instruction,
                                          const StrategyContext& ctx);

}  // namespace alpa::sharding

#endif  // ALPA_SHARDING_CONVOLUTION_STRATEGIES_H_
