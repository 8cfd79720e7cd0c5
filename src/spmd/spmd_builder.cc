#include "spmd/spmd_builder.h"

#include <algorithm>

#include "spmd/mesh_groups.h"

namespace alpa::spmd {

int64_t SpmdBuilder::AxesSize(const std::vector<int64_t>& axes) const {
  int64_t size = 1;
  for (int64_t axis : axes) size *= mesh_shape_[static_cast<size_t>(axis)];
  return size;
}

ir::Instruction* SpmdBuilder::PartitionId() {
  if (partition_id_ == nullptr) {
    partition_id_ = b_.Convert(b_.AddInstruction(ir::Opcode::kPartitionId, {}), ir::DType::kS32);
  }
  return partition_id_;
}

ir::Instruction* SpmdBuilder::DeviceScalar(const std::vector<int64_t>& per_device) {
  ALPA_CHECK(static_cast<int64_t>(per_device.size()) == DeviceCount(mesh_shape_),
             "a device table of {} entries for {} devices", per_device.size(),
             DeviceCount(mesh_shape_));
  auto it = device_scalars_.find(per_device);
  if (it != device_scalars_.end()) return it->second;
  ir::Instruction* value = nullptr;
  if (std::all_of(per_device.begin(), per_device.end(),
                  [&](int64_t v) { return v == per_device.front(); })) {
    value = b_.ConstantScalar(ir::DType::kS32, static_cast<double>(per_device.front()));
  } else {
    const ir::Shape table_shape =
        ir::Shape::Array(ir::DType::kS32, {static_cast<int64_t>(per_device.size())});
    ir::Instruction* table = b_.Constant(ir::Literal::FromInts(table_shape, per_device));
    value = b_.Reshape(b_.DynamicSlice(table, {PartitionId()}, {1}), {});
  }
  device_scalars_[per_device] = value;
  return value;
}

ir::Instruction* SpmdBuilder::TileOffset(const std::vector<int64_t>& axes, int64_t tile_size) {
  std::vector<int64_t> offsets;
  for (int64_t device = 0; device < DeviceCount(mesh_shape_); ++device) {
    offsets.push_back(IndexOverAxes(mesh_shape_, device, axes) * tile_size);
  }
  return DeviceScalar(offsets);
}

ir::Instruction* SpmdBuilder::SliceTile(ir::Instruction* x, std::vector<ir::Instruction*> starts,
                                        std::vector<int64_t> sizes) {
  for (ir::Instruction*& start : starts) {
    if (start == nullptr)
      start = DeviceScalar(std::vector<int64_t>(static_cast<size_t>(DeviceCount(mesh_shape_)), 0));
  }
  return b_.DynamicSlice(x, std::move(starts), std::move(sizes));
}

ir::Instruction* SpmdBuilder::Zeros(const ir::Shape& shape) {
  return b_.Broadcast(b_.ConstantScalar(shape.dtype(), 0), shape.dims(), {});
}

ir::Instruction* SpmdBuilder::AllReduce(ir::Instruction* x, const std::vector<int64_t>& axes,
                                        ir::Computation* reducer) {
  if (x == nullptr) return nullptr;
  if (reducer == nullptr) reducer = module_.ScalarReducer(ir::Opcode::kAdd, x->shape().dtype());
  return b_.AllReduce(x, reducer, AxesReplicaGroups(mesh_shape_, axes));
}

ir::Instruction* SpmdBuilder::ReduceScatter(ir::Instruction* x, int64_t dimension,
                                            const std::vector<int64_t>& axes,
                                            ir::Computation* reducer) {
  if (x == nullptr) return nullptr;
  if (reducer == nullptr) reducer = module_.ScalarReducer(ir::Opcode::kAdd, x->shape().dtype());
  return b_.ReduceScatter(x, dimension, reducer, AxesReplicaGroups(mesh_shape_, axes));
}

ir::Instruction* SpmdBuilder::AllGather(ir::Instruction* x, int64_t dimension,
                                        const std::vector<int64_t>& axes) {
  return b_.AllGather(x, dimension, AxesReplicaGroups(mesh_shape_, axes));
}

ir::Instruction* SpmdBuilder::AllToAll(ir::Instruction* x, int64_t dimension,
                                       const std::vector<int64_t>& axes) {
  return b_.AllToAll(x, dimension, AxesReplicaGroups(mesh_shape_, axes));
}

namespace {

// The binary op of a reducer `(T[], T[]) -> T[]` whose root applies it to parameters 0 and 1.
std::optional<ir::Opcode> ScalarBinaryReducer(const ir::Computation& computation) {
  const ir::Instruction* root = computation.root();
  if (computation.parameter_count() != 2 || root == nullptr || root->operand_count() != 2 ||
      !ir::IsElementwiseBinary(root->opcode()) || !root->shape().IsArray() ||
      root->shape().rank() != 0) {
    return std::nullopt;
  }
  const std::vector<ir::Instruction*> parameters = computation.parameters();
  if (root->operand(0) != parameters[0] || root->operand(1) != parameters[1] ||
      !(parameters[0]->shape() == root->shape()) || !(parameters[1]->shape() == root->shape())) {
    return std::nullopt;
  }
  return root->opcode();
}

}  // namespace

Result<ir::Computation*> SpmdBuilder::CopyComputation(const ir::Computation& computation) {
  auto it = copies_.find(&computation);
  if (it != copies_.end()) return it->second;
  ir::Computation* copy = nullptr;
  if (std::optional<ir::Opcode> op = ScalarBinaryReducer(computation)) {
    copy = module_.ScalarReducer(*op, computation.root()->shape().dtype());
  }
  if (copy == nullptr) {
    ir::ComputationBuilder builder = module_.NewComputation(module_.UniqueName(computation.name()));
    std::map<const ir::Instruction*, ir::Instruction*> copied;
    for (const ir::Instruction* instruction : computation.MakePostOrder()) {
      std::vector<ir::Instruction*> operands;
      for (const ir::Instruction* operand : instruction->operands()) {
        operands.push_back(copied.at(operand));
      }
      std::vector<ir::Computation*> called;
      for (const ir::Computation* callee : instruction->called_computations()) {
        ALPA_ASSIGN_OR_RETURN(ir::Computation * callee_copy, CopyComputation(*callee));
        called.push_back(callee_copy);
      }
      copied[instruction] = builder.AddInstruction(instruction->opcode(), std::move(operands),
                                                   instruction->attributes(), std::move(called),
                                                   instruction->shape());
    }
    ALPA_ASSIGN_OR_RETURN(copy, builder.Build(copied.at(computation.root())));
  }
  copies_[&computation] = copy;
  return copy;
}

}  // namespace alpa::spmd
