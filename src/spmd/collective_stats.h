// The collectives a (partitioned) computation runs, counted by kind with their sizes in the
// convention of cost/collective_cost.h, so that a program can be compared with what the cost
// model priced (ShardingEstimate::communication) and with what a runtime executed.
//   all-reduce: the operand; all-gather: the result; reduce-scatter: the operand;
//   all-to-all: the operand; collective-permute: the operand.
#ifndef ALPA_SPMD_COLLECTIVE_STATS_H_
#define ALPA_SPMD_COLLECTIVE_STATS_H_

#include <cstdint>
#include <map>
#include <string>

#include "cost/collective_cost.h"
#include "ir/computation.h"

namespace alpa::spmd {

struct CollectiveStats {
  std::map<cost::CollectiveKind, int64_t> count;
  int64_t bytes = 0;
  friend bool operator==(const CollectiveStats&, const CollectiveStats&) = default;
};

// Collectives of `computation` itself (called computations are reducers and are not walked).
CollectiveStats CountCollectives(const ir::Computation& computation);

// "all-reduce x2, all-gather x1; 4096 B".
std::string ToString(const CollectiveStats& stats);

}  // namespace alpa::spmd

#endif  // ALPA_SPMD_COLLECTIVE_STATS_H_
