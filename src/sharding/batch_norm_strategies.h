// Strategies of batch normalization (batch-norm-training, -inference and -grad). Its statistics
// are per feature (the dimension feature_index), so a device can normalise the features it holds
// alone: the strategies follow the data operand with only its feature dimension left split
// (other splits and partial sums are resolved on the edge), the per-feature operands and results
// ([C]: scale, offset, mean, variance and their gradients) split as that dimension is.
//
// PyTorch/XLA lowers LayerNorm over [B, S, H] to batch-norm-training on [1, B*S, H] with the rows
// as features (and its backward to batch-norm-grad): under data parallelism the rows are the
// split batch, so these stay local.
#ifndef ALPA_SHARDING_BATCH_NORM_STRATEGIES_H_
#define ALPA_SHARDING_BATCH_NORM_STRATEGIES_H_

#include "ir/instruction.h"
#include "ir/opcode.h"
#include "sharding/strategy.h"
#include "support/status.h"

namespace alpa::sharding {

bool IsBatchNormOpcode(ir::Opcode opcode);

// Requires IsBatchNormOpcode(instruction.opcode()). Errors: those of the compute cost model.
Result<StrategySet> BatchNormStrategies(const ir::Instruction& instruction,
                                        const StrategyContext& ctx);

}  // namespace alpa::sharding

#endif  // ALPA_SHARDING_BATCH_NORM_STRATEGIES_H_
