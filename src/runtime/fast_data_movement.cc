// The data-movement kernels of the runtime's kernel choice: every op that only moves elements is
// one strided copy (kernels/strided_copy.h) from its operand's strides, as the interpreter's
// data_movement.cc defines them:
//   broadcast     stride 0 along the new dimensions
//   transpose     the operand's strides, permuted
//   slice         start offset, strides times the slice strides
//   dynamic-slice start offset from its s32 start indices, each clamped to [0, dim - size] as XLA
//                 clamps them
//   reverse       negative strides from the last element
//   concatenate   one copy per operand, at its offset along the dimension
//   pad           a fill with the padding value, then the operand at low + i * (interior + 1)
#include <algorithm>
#include <utility>

#include "ir/layer_boundary.h"
#include "kernels/elementwise.h"
#include "kernels/strided_copy.h"
#include "runtime/fast_kernels_internal.h"

namespace alpa::runtime::internal {
namespace {

int64_t ElementBytes(const Shape& shape) { return ir::DTypeByteSize(shape.dtype()); }

Result<Literal> RunIota(const ir::Instruction& instruction, const Operands&) {
  const Shape& shape = instruction.shape();
  const int64_t d = instruction.attributes().iota_dimension;
  Literal out = Literal::CreateUninitialized(shape);
  const int64_t stride = Strides(shape)[static_cast<size_t>(d)];
  if (shape.dtype() == DType::kS32) {
    kernels::IotaS32(out.typed_data<int32_t>(), out.element_count(), stride, shape.dim(d));
  } else {
    kernels::IotaF32(out.typed_data<float>(), out.element_count(), stride, shape.dim(d));
  }
  return out;
}

// A strided copy of operand 0 into a new result: in[in_offset + ...] over the result's indices.
Result<Literal> CopyInto(const ir::Instruction& instruction, const Literal& in,
                         std::vector<int64_t> in_strides, int64_t in_offset) {
  const Shape& shape = instruction.shape();
  Literal out = Literal::CreateUninitialized(shape);
  const kernels::StridedView view{shape.dims(), std::move(in_strides), Strides(shape)};
  const int64_t bytes = ElementBytes(shape);
  ALPA_RETURN_IF_ERROR(
      kernels::StridedCopy(bytes, view, in.data() + in_offset * bytes, out.data()));
  return out;
}

Result<Literal> RunBroadcast(const ir::Instruction& instruction, const Operands& operands) {
  const std::vector<int64_t> operand_strides = Strides(operands[0]->shape());
  std::vector<int64_t> strides(static_cast<size_t>(instruction.shape().rank()), 0);
  const std::vector<int64_t>& dimensions = instruction.attributes().dimensions;
  for (size_t i = 0; i < dimensions.size(); ++i) {
    strides[static_cast<size_t>(dimensions[i])] = operand_strides[i];
  }
  return CopyInto(instruction, *operands[0], std::move(strides), 0);
}

// Result dimension i is operand dimension dimensions[i].
Result<Literal> RunTranspose(const ir::Instruction& instruction, const Operands& operands) {
  const std::vector<int64_t> operand_strides = Strides(operands[0]->shape());
  std::vector<int64_t> strides;
  for (int64_t d : instruction.attributes().dimensions) {
    strides.push_back(operand_strides[static_cast<size_t>(d)]);
  }
  return CopyInto(instruction, *operands[0], std::move(strides), 0);
}

// reshape, bitcast, copy, and the identities (convert to the same type, a layer boundary).
Result<Literal> RunReshape(const ir::Instruction& instruction, const Operands& operands) {
  const int64_t n = instruction.shape().ElementCount();
  Literal out = Literal::CreateUninitialized(instruction.shape());
  ALPA_RETURN_IF_ERROR(kernels::StridedCopy(ElementBytes(instruction.shape()), {{n}, {1}, {1}},
                                            operands[0]->data(), out.data()));
  return out;
}

Result<Literal> RunSlice(const ir::Instruction& instruction, const Operands& operands) {
  std::vector<int64_t> strides = Strides(operands[0]->shape());
  int64_t offset = 0;
  const std::vector<ir::SliceDim>& slice = instruction.attributes().slice;
  for (size_t d = 0; d < strides.size(); ++d) {
    offset += slice[d].start * strides[d];
    strides[d] *= slice[d].stride;
  }
  return CopyInto(instruction, *operands[0], std::move(strides), offset);
}

Result<Literal> RunDynamicSlice(const ir::Instruction& instruction, const Operands& operands) {
  const Shape& operand = operands[0]->shape();
  const std::vector<int64_t> strides = Strides(operand);
  int64_t offset = 0;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    const int64_t start = operands[static_cast<size_t>(d + 1)]->typed_data<int32_t>()[0];
    offset += std::clamp<int64_t>(start, 0, operand.dim(d) - instruction.shape().dim(d)) *
              strides[static_cast<size_t>(d)];
  }
  return CopyInto(instruction, *operands[0], strides, offset);
}

// The reversed dimensions are walked backwards from their last element.
Result<Literal> RunReverse(const ir::Instruction& instruction, const Operands& operands) {
  std::vector<int64_t> strides = Strides(operands[0]->shape());
  int64_t offset = 0;
  for (int64_t d : instruction.attributes().dimensions) {
    const size_t u = static_cast<size_t>(d);
    offset += (operands[0]->shape().dim(d) - 1) * strides[u];
    strides[u] = -strides[u];
  }
  return CopyInto(instruction, *operands[0], std::move(strides), offset);
}

// Each operand lands at its running offset along the concatenated dimension.
Result<Literal> RunConcatenate(const ir::Instruction& instruction, const Operands& operands) {
  const Shape& shape = instruction.shape();
  const size_t dimension = static_cast<size_t>(instruction.attributes().dimensions[0]);
  const std::vector<int64_t> out_strides = Strides(shape);
  const int64_t bytes = ElementBytes(shape);
  Literal out = Literal::CreateUninitialized(shape);
  int64_t offset = 0;
  for (const Literal* operand : operands) {
    const kernels::StridedView view{operand->shape().dims(), Strides(operand->shape()),
                                    out_strides};
    ALPA_RETURN_IF_ERROR(kernels::StridedCopy(
        bytes, view, operand->data(), out.data() + offset * out_strides[dimension] * bytes));
    offset += operand->shape().dims()[dimension];
  }
  return out;
}

// The padding value everywhere, then operand element i at low + i * (interior + 1) per dimension.
Result<Literal> RunPad(const ir::Instruction& instruction, const Operands& operands) {
  const Shape& shape = instruction.shape();
  const int64_t bytes = ElementBytes(shape);
  Literal out = Literal::CreateUninitialized(shape);
  ALPA_RETURN_IF_ERROR(kernels::Fill(bytes, operands[1]->data(), out.data(), out.element_count()));
  std::vector<int64_t> out_strides = Strides(shape);
  int64_t offset = 0;
  const std::vector<ir::PaddingDim>& padding = instruction.attributes().padding;
  for (size_t d = 0; d < out_strides.size(); ++d) {
    offset += padding[d].low * out_strides[d];
    out_strides[d] *= padding[d].interior + 1;
  }
  const kernels::StridedView view{operands[0]->shape().dims(), Strides(operands[0]->shape()),
                                  std::move(out_strides)};
  ALPA_RETURN_IF_ERROR(
      kernels::StridedCopy(bytes, view, operands[0]->data(), out.data() + offset * bytes));
  return out;
}

// A data-movement op from operand 0 of the result's element type.
bool MovesElements(const ir::Instruction& instruction) {
  const Shape& shape = instruction.shape();
  return shape.IsArray() && instruction.operand_count() >= 1 &&
         IsArrayOf(instruction.operand(0)->shape(), shape.dtype()) &&
         ir::DTypeByteSize(shape.dtype()) > 0;
}

// One s32 scalar start index per operand dimension, and the result of the slice sizes (which
// fit the operand: the shape rule holds).
bool DynamicSlicesFast(const ir::Instruction& instruction) {
  const int64_t rank = instruction.operand(0)->shape().rank();
  if (instruction.operand_count() != rank + 1 ||
      instruction.shape().dims() != instruction.attributes().slice_sizes) {
    return false;
  }
  for (int64_t d = 1; d <= rank; ++d) {
    const Shape& index = instruction.operand(d)->shape();
    if (!IsArrayOf(index, DType::kS32) || index.rank() != 0) return false;
  }
  return true;
}

bool PadsFast(const ir::Instruction& instruction) {
  for (const ir::PaddingDim& p : instruction.attributes().padding) {
    if (p.low < 0 || p.high < 0 || p.interior < 0) return false;
  }
  return IsArrayOf(instruction.operand(1)->shape(), instruction.shape().dtype()) &&
         instruction.operand(1)->shape().rank() == 0;
}

}  // namespace

FastKernel SelectDataMovement(const ir::Instruction& instruction) {
  if (instruction.opcode() == Opcode::kIota) {
    const Shape& shape = instruction.shape();
    const int64_t d = instruction.attributes().iota_dimension;
    const bool fast = (IsArrayOf(shape, DType::kS32) || IsArrayOf(shape, DType::kF32)) && d >= 0 &&
                      d < shape.rank();
    return fast ? RunIota : nullptr;
  }
  if (!MovesElements(instruction)) return nullptr;
  const Shape& operand = instruction.operand(0)->shape();
  switch (instruction.opcode()) {
    case Opcode::kBroadcast:
      return RunBroadcast;
    case Opcode::kTranspose:
      return RunTranspose;
    case Opcode::kReshape:
    case Opcode::kBitcast:
    case Opcode::kCopy:
      return operand.ElementCount() == instruction.shape().ElementCount() ? RunReshape : nullptr;
    case Opcode::kConvert:  // to its own type
      return operand.dims() == instruction.shape().dims() ? RunReshape : nullptr;
    case Opcode::kCustomCall: {  // the identity that marks a layer's end
      const bool boundary =
          instruction.attributes().custom_call_target == ir::kLayerBoundaryTarget &&
          instruction.operand_count() == 1 && operand.dims() == instruction.shape().dims();
      return boundary ? RunReshape : nullptr;
    }
    case Opcode::kSlice:
      return RunSlice;
    case Opcode::kDynamicSlice:
      return DynamicSlicesFast(instruction) ? RunDynamicSlice : nullptr;
    case Opcode::kReverse:
      return RunReverse;
    case Opcode::kConcatenate: {
      for (const ir::Instruction* other : instruction.operands()) {
        if (!IsArrayOf(other->shape(), instruction.shape().dtype())) return nullptr;
      }
      return RunConcatenate;
    }
    case Opcode::kPad:
      return PadsFast(instruction) ? RunPad : nullptr;
    default:
      return nullptr;
  }
}

}  // namespace alpa::runtime::internal
