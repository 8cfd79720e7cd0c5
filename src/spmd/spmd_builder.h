// What every handler of the SPMD partitioner builds with: the computation under construction on
// a logical mesh, the device-dependent scalars (tile offsets, masks) read from partition-id, the
// collectives over mesh axes (replica groups from mesh_groups.h) and the copies of called
// computations. Internal to the spmd layer.
//
// Device-dependent values are constant tables indexed by partition-id (XLA's SPMD partitioner
// does the same with its offset tables): for a table v over the devices,
//   value = reshape(dynamic-slice(constant(v), convert<s32>(partition-id())), {})
// and a table whose entries are all equal (every one-device mesh) is a plain constant.
#ifndef ALPA_SPMD_SPMD_BUILDER_H_
#define ALPA_SPMD_SPMD_BUILDER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "support/status.h"

namespace alpa::spmd {

class SpmdBuilder {
 public:
  SpmdBuilder(ir::ModuleBuilder& module, ir::ComputationBuilder& builder,
              std::vector<int64_t> mesh_shape)
      : module_(module), b_(builder), mesh_shape_(std::move(mesh_shape)) {}

  ir::ComputationBuilder& b() { return b_; }
  ir::ModuleBuilder& module() { return module_; }
  const std::vector<int64_t>& mesh_shape() const { return mesh_shape_; }
  int64_t AxesSize(const std::vector<int64_t>& axes) const;

  // s32[]: per_device[d] on device d (one entry per device of the mesh).
  ir::Instruction* DeviceScalar(const std::vector<int64_t>& per_device);
  // s32[]: the offset of this device's tile along a dimension split over `axes` (in order) into
  // tiles of `tile_size`: IndexOverAxes(device, axes) * tile_size.
  ir::Instruction* TileOffset(const std::vector<int64_t>& axes, int64_t tile_size);
  // The tile of `x` of `sizes` at `starts` (nullptr: 0) by dynamic-slice.
  ir::Instruction* SliceTile(ir::Instruction* x, std::vector<ir::Instruction*> starts,
                             std::vector<int64_t> sizes);
  ir::Instruction* Zeros(const ir::Shape& shape);

  // Collectives over mesh axes (replica groups: AxesReplicaGroups(mesh, axes)). A null reducer
  // means add of x's element type.
  ir::Instruction* AllReduce(ir::Instruction* x, const std::vector<int64_t>& axes,
                             ir::Computation* reducer = nullptr);
  ir::Instruction* ReduceScatter(ir::Instruction* x, int64_t dimension,
                                 const std::vector<int64_t>& axes,
                                 ir::Computation* reducer = nullptr);
  ir::Instruction* AllGather(ir::Instruction* x, int64_t dimension,
                             const std::vector<int64_t>& axes);
  ir::Instruction* AllToAll(ir::Instruction* x, int64_t dimension,
                            const std::vector<int64_t>& axes);

  // `computation` of the input module copied into this one, once. A two-parameter scalar
  // computation applying one binary op becomes the module's shared reducer for it.
  Result<ir::Computation*> CopyComputation(const ir::Computation& computation);

 private:
  ir::Instruction* PartitionId();

  ir::ModuleBuilder& module_;
  ir::ComputationBuilder& b_;
  std::vector<int64_t> mesh_shape_;
  ir::Instruction* partition_id_ = nullptr;  // s32[]
  std::map<std::vector<int64_t>, ir::Instruction*> device_scalars_;
  std::map<const ir::Computation*, ir::Computation*> copies_;
};

}  // namespace alpa::spmd

#endif  // ALPA_SPMD_SPMD_BUILDER_H_
