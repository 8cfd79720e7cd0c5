// Host-side layout of values: the per-device local literals of a global array under a sharding
// spec, and the global array assembled back from them (for feeding a partitioned program's
// arguments and checking its results).
//
// Device d holds, along dimension i split over axes A_i, the tile t_i = IndexOverAxes(d, A_i) of
// n_i / T_i elements (T_i = prod of the sizes of A_i; uneven splits are refused, as by the
// partitioner for now). A spec partial over axes P is a pending sum over P: on splitting, the
// device at coordinate 0 along every axis of P holds the tile and the others hold zeros (the sum
// over P is the value); on assembling, the tiles are summed over P.
#ifndef ALPA_SPMD_LITERAL_SPLIT_H_
#define ALPA_SPMD_LITERAL_SPLIT_H_

#include <cstdint>
#include <vector>

#include "ir/literal.h"
#include "ir/shape.h"
#include "sharding/sharding_spec.h"
#include "support/status.h"

namespace alpa::spmd {

// The local shape of `global` (an array) under `spec`: each dimension divided by the product of
// its axes' sizes. Errors: a spec that does not fit the array or mesh (CheckSpec), or a dimension
// that its tiles do not divide; `what` names the value in the message.
Result<ir::Shape> LocalShape(const ir::Shape& global, const sharding::ShardingSpec& spec,
                             const std::vector<int64_t>& mesh_shape, const std::string& what);

// One local literal per device (device id = row-major position on the mesh).
Result<std::vector<ir::Literal>> SplitLiteral(const ir::Literal& global,
                                              const sharding::ShardingSpec& spec,
                                              const std::vector<int64_t>& mesh_shape);

// The global literal of shape `global_shape` from one local literal per device. Replicas are not
// compared: the copy at coordinate 0 of every replicating axis is read.
Result<ir::Literal> AssembleLiteral(const std::vector<ir::Literal>& locals,
                                    const sharding::ShardingSpec& spec,
                                    const std::vector<int64_t>& mesh_shape,
                                    const ir::Shape& global_shape);

}  // namespace alpa::spmd

#endif  // ALPA_SPMD_LITERAL_SPLIT_H_
