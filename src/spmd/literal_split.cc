#include "spmd/literal_split.h"

#include <fmt/format.h>

#include <cstring>
#include <string>

#include "spmd/mesh_groups.h"

namespace alpa::spmd {
namespace {

using sharding::ShardingSpec;

// Element offset (in the global array) of the first element of device `device`'s tile, per dim.
std::vector<int64_t> TileStart(const ShardingSpec& spec, const std::vector<int64_t>& mesh_shape,
                               const std::vector<int64_t>& local_dims, int64_t device) {
  std::vector<int64_t> start(local_dims.size(), 0);
  for (size_t d = 0; d < local_dims.size(); ++d) {
    start[d] = IndexOverAxes(mesh_shape, device, spec.dim_axes[d]) * local_dims[d];
  }
  return start;
}

// Calls copy(global_offset, local_offset, count) for every row (run along the last dimension) of
// the tile at `start` with `local_dims`; offsets in elements.
template <typename Fn>
void ForEachRow(const std::vector<int64_t>& global_dims, const std::vector<int64_t>& local_dims,
                const std::vector<int64_t>& start, Fn copy) {
  const size_t rank = local_dims.size();
  if (rank == 0) {
    copy(0, 0, 1);
    return;
  }
  for (int64_t n : local_dims) {
    if (n == 0) return;
  }
  const std::vector<int64_t> global_strides = ir::RowMajorStrides(global_dims);
  std::vector<int64_t> index(rank, 0);  // over the local dims but the last
  int64_t local_offset = 0;
  for (;;) {
    int64_t global_offset = start[rank - 1];
    for (size_t d = 0; d + 1 < rank; ++d)
      global_offset += (start[d] + index[d]) * global_strides[d];
    copy(global_offset, local_offset, local_dims[rank - 1]);
    local_offset += local_dims[rank - 1];
    size_t d = rank - 1;
    while (d > 0) {
      --d;
      if (++index[d] < local_dims[d]) break;
      index[d] = 0;
      if (d == 0) return;
    }
    if (rank == 1) return;
  }
}

bool AtZeroAlong(const std::vector<int64_t>& mesh_shape, int64_t device,
                 const std::vector<int64_t>& axes) {
  const std::vector<int64_t> coordinates = DeviceCoordinates(mesh_shape, device);
  for (int64_t axis : axes) {
    if (coordinates[static_cast<size_t>(axis)] != 0) return false;
  }
  return true;
}

}  // namespace

Result<ir::Shape> LocalShape(const ir::Shape& global, const ShardingSpec& spec,
                             const std::vector<int64_t>& mesh_shape, const std::string& what) {
  if (!global.IsArray()) {
    return InvalidArgument("{}: a sharding spec lays out arrays, not {}", what, global.ToString());
  }
  Status valid = sharding::CheckSpec(spec, mesh_shape, global.dims());
  if (!valid.ok()) return valid.WithContext(what);
  std::vector<int64_t> dims = global.dims();
  for (int64_t d = 0; d < global.rank(); ++d) {
    const int64_t tiles = sharding::TileCount(spec, mesh_shape, d);
    if (dims[static_cast<size_t>(d)] % tiles != 0) {
      return Unimplemented(
          "{}: dimension {} of {} is split into {} tiles ({}), which do not divide it; uneven "
          "splits (padded tiles) are not supported by the SPMD partitioner yet",
          what, d, global.ToString(false), tiles, sharding::ToString(spec));
    }
    dims[static_cast<size_t>(d)] /= tiles;
  }
  return ir::Shape::Array(global.dtype(), std::move(dims));
}

Result<std::vector<ir::Literal>> SplitLiteral(const ir::Literal& global, const ShardingSpec& spec,
                                              const std::vector<int64_t>& mesh_shape) {
  if (global.is_elided()) return InvalidArgument("split: the literal's value was elided");
  ALPA_ASSIGN_OR_RETURN(const ir::Shape local,
                        LocalShape(global.shape(), spec, mesh_shape, "split literal"));
  const int64_t element_bytes = ir::DTypeByteSize(local.dtype());
  std::vector<ir::Literal> locals;
  for (int64_t device = 0; device < DeviceCount(mesh_shape); ++device) {
    ir::Literal tile = ir::Literal::CreateZeros(local);
    if (AtZeroAlong(mesh_shape, device, spec.partial_axes)) {
      ForEachRow(global.shape().dims(), local.dims(),
                 TileStart(spec, mesh_shape, local.dims(), device),
                 [&](int64_t global_offset, int64_t local_offset, int64_t count) {
                   std::memcpy(tile.data() + local_offset * element_bytes,
                               global.data() + global_offset * element_bytes,
                               static_cast<size_t>(count * element_bytes));
                 });
    }
    locals.push_back(std::move(tile));
  }
  return locals;
}

Result<ir::Literal> AssembleLiteral(const std::vector<ir::Literal>& locals,
                                    const ShardingSpec& spec,
                                    const std::vector<int64_t>& mesh_shape,
                                    const ir::Shape& global_shape) {
  if (static_cast<int64_t>(locals.size()) != DeviceCount(mesh_shape)) {
    return InvalidArgument("assemble: {} local literals for a mesh of {} devices", locals.size(),
                           DeviceCount(mesh_shape));
  }
  ALPA_ASSIGN_OR_RETURN(const ir::Shape local,
                        LocalShape(global_shape, spec, mesh_shape, "assemble literal"));
  const std::vector<int64_t> replicated =
      spec.ReplicatedAxes(static_cast<int64_t>(mesh_shape.size()));
  const int64_t element_bytes = ir::DTypeByteSize(local.dtype());
  const bool sum = !spec.partial_axes.empty();
  ir::Literal global = ir::Literal::CreateZeros(global_shape);
  for (int64_t device = 0; device < DeviceCount(mesh_shape); ++device) {
    const ir::Literal& tile = locals[static_cast<size_t>(device)];
    if (!tile.shape().Compatible(local)) {
      return InvalidArgument("assemble: device {} holds {} where the layout {} gives {}", device,
                             tile.shape().ToString(false), sharding::ToString(spec),
                             local.ToString(false));
    }
    // One copy per tile: the devices at coordinate 0 of every replicating axis (all devices
    // along the partial axes contribute to the sum).
    if (!AtZeroAlong(mesh_shape, device, replicated)) continue;
    ForEachRow(global_shape.dims(), local.dims(), TileStart(spec, mesh_shape, local.dims(), device),
               [&](int64_t global_offset, int64_t local_offset, int64_t count) {
                 if (!sum) {
                   std::memcpy(global.data() + global_offset * element_bytes,
                               tile.data() + local_offset * element_bytes,
                               static_cast<size_t>(count * element_bytes));
                   return;
                 }
                 for (int64_t k = 0; k < count; ++k) {
                   global.SetDouble(global_offset + k, global.GetDouble(global_offset + k) +
                                                           tile.GetDouble(local_offset + k));
                 }
               });
  }
  return global;
}

}  // namespace alpa::spmd
