// Shape rules of ops that move data without computing: iota, broadcast, reshape, transpose,
// slice, dynamic-slice, dynamic-update-slice, concatenate, pad, reverse, and the dynamic-size
// queries.
#include "ir/shape_inference_internal.h"

namespace alpa::ir::shape_inference_internal {
namespace {

// The declared shape must be an array: it carries the dims these ops cannot derive.
Result<Shape> DeclaredArray(const Instruction& instruction) {
  if (instruction.shape().IsArray()) return instruction.shape();
  return RuleError(instruction, "declared shape {} must be an array", Str(instruction.shape()));
}

// The element types of operands `first`..`last` match operand 0's.
Status CheckSameDType(const Instruction& instruction, int64_t first, int64_t last) {
  const Shape& reference = OperandShape(instruction, 0);
  for (int64_t i = first; i <= last; ++i) {
    const Shape& shape = OperandShape(instruction, i);
    if (shape.dtype() != reference.dtype()) {
      return RuleError(instruction, "operand {} {} must have the element type of operand 0 {}", i,
                       Str(shape), Str(reference));
    }
  }
  return Status::Ok();
}

}  // namespace

Result<Shape> InferIotaShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, 0));
  ALPA_ASSIGN_OR_RETURN(Shape declared, DeclaredArray(instruction));
  const int64_t dimension = instruction.attributes().iota_dimension;
  if (dimension < 0 || dimension >= declared.rank()) {
    return RuleError(instruction, "iota_dimension {} is out of range [0, {})", dimension,
                     declared.rank());
  }
  return Shape::Array(declared.dtype(), declared.dims());
}

// broadcast: operand dimension i becomes output dimension dimensions[i], of equal size; the
// output dims are the declared ones.
Result<Shape> InferBroadcastShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, 1));
  ALPA_RETURN_IF_ERROR(CheckArrayOperand(instruction, 0));
  ALPA_ASSIGN_OR_RETURN(Shape declared, DeclaredArray(instruction));
  const Shape& operand = OperandShape(instruction, 0);
  const std::vector<int64_t>& dimensions = instruction.attributes().dimensions;
  if (static_cast<int64_t>(dimensions.size()) != operand.rank()) {
    return RuleError(instruction, "dimensions has {} entries but the operand {} has rank {}",
                     dimensions.size(), Str(operand), operand.rank());
  }
  ALPA_RETURN_IF_ERROR(CheckDimensionList(instruction, "dimensions", dimensions, declared.rank()));
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const int64_t out = dimensions[static_cast<size_t>(i)];
    if (operand.dim(i) != declared.dim(out)) {
      return RuleError(instruction,
                       "operand dimension {} has size {} but output dimension {} has size {}", i,
                       operand.dim(i), out, declared.dim(out));
    }
  }
  return Shape::Array(operand.dtype(), declared.dims());
}

Result<Shape> InferReshapeShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, 1));
  ALPA_RETURN_IF_ERROR(CheckArrayOperand(instruction, 0));
  ALPA_ASSIGN_OR_RETURN(Shape declared, DeclaredArray(instruction));
  const Shape& operand = OperandShape(instruction, 0);
  if (operand.ElementCount() != declared.ElementCount()) {
    return RuleError(instruction, "cannot reshape {} ({} elements) to {} ({} elements)",
                     Str(operand), operand.ElementCount(), Str(declared), declared.ElementCount());
  }
  return Shape::Array(operand.dtype(), declared.dims());
}

// transpose: output dimension i is operand dimension dimensions[i].
Result<Shape> InferTransposeShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, 1));
  ALPA_RETURN_IF_ERROR(CheckArrayOperand(instruction, 0));
  const Shape& operand = OperandShape(instruction, 0);
  const std::vector<int64_t>& permutation = instruction.attributes().dimensions;
  if (static_cast<int64_t>(permutation.size()) != operand.rank()) {
    return RuleError(instruction, "dimensions {{{}}} is not a permutation of the operand's {} dims",
                     fmt::join(permutation, ","), operand.rank());
  }
  ALPA_RETURN_IF_ERROR(CheckDimensionList(instruction, "dimensions", permutation, operand.rank()));
  std::vector<int64_t> dims;
  for (int64_t p : permutation) dims.push_back(operand.dim(p));
  return Shape::Array(operand.dtype(), std::move(dims));
}

// slice: output size = ceil((limit - start) / stride), with 0 <= start <= limit <= size.
Result<Shape> InferSliceShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, 1));
  ALPA_RETURN_IF_ERROR(CheckArrayOperand(instruction, 0));
  const Shape& operand = OperandShape(instruction, 0);
  const std::vector<SliceDim>& slice = instruction.attributes().slice;
  if (static_cast<int64_t>(slice.size()) != operand.rank()) {
    return RuleError(instruction, "slice has {} dimension(s) but the operand {} has rank {}",
                     slice.size(), Str(operand), operand.rank());
  }
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const SliceDim& s = slice[static_cast<size_t>(i)];
    if (s.start < 0 || s.start > s.limit || s.limit > operand.dim(i) || s.stride < 1) {
      return RuleError(instruction,
                       "slice dimension {} [{}:{}:{}] must have 0 <= start <= limit <= {} and "
                       "stride >= 1",
                       i, s.start, s.limit, s.stride, operand.dim(i));
    }
    dims.push_back((s.limit - s.start + s.stride - 1) / s.stride);
  }
  return Shape::Array(operand.dtype(), std::move(dims));
}

// dynamic-slice(operand, start_0, ..., start_{r-1}) with dynamic_slice_sizes.
Result<Shape> InferDynamicSliceShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckMinOperandCount(instruction, 1));
  ALPA_RETURN_IF_ERROR(CheckArrayOperand(instruction, 0));
  const Shape& operand = OperandShape(instruction, 0);
  ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, operand.rank() + 1));
  for (int64_t i = 1; i <= operand.rank(); ++i) {
    ALPA_RETURN_IF_ERROR(CheckScalarIndexOperand(instruction, i));
  }
  const std::vector<int64_t>& sizes = instruction.attributes().slice_sizes;
  if (static_cast<int64_t>(sizes.size()) != operand.rank()) {
    return RuleError(instruction,
                     "dynamic_slice_sizes has {} entries but the operand {} has rank {}",
                     sizes.size(), Str(operand), operand.rank());
  }
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const int64_t size = sizes[static_cast<size_t>(i)];
    if (size < 0 || size > operand.dim(i)) {
      return RuleError(instruction, "slice size {} of dimension {} is out of range [0, {}]", size,
                       i, operand.dim(i));
    }
  }
  return Shape::Array(operand.dtype(), sizes);
}

// dynamic-update-slice(operand, update, start_0, ..., start_{r-1}) -> operand's shape.
Result<Shape> InferDynamicUpdateSliceShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckMinOperandCount(instruction, 2));
  ALPA_RETURN_IF_ERROR(CheckArrayOperand(instruction, 0));
  ALPA_RETURN_IF_ERROR(CheckArrayOperand(instruction, 1));
  const Shape& operand = OperandShape(instruction, 0);
  const Shape& update = OperandShape(instruction, 1);
  ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, operand.rank() + 2));
  for (int64_t i = 2; i < instruction.operand_count(); ++i) {
    ALPA_RETURN_IF_ERROR(CheckScalarIndexOperand(instruction, i));
  }
  ALPA_RETURN_IF_ERROR(CheckSameDType(instruction, 1, 1));
  bool fits = update.rank() == operand.rank();
  for (int64_t i = 0; fits && i < operand.rank(); ++i) fits = update.dim(i) <= operand.dim(i);
  if (!fits) {
    return RuleError(instruction, "update {} does not fit in operand {}", Str(update),
                     Str(operand));
  }
  return operand;
}

// concatenate along dimensions={d}: other dims equal, dimension d sums.
Result<Shape> InferConcatenateShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckMinOperandCount(instruction, 1));
  ALPA_RETURN_IF_ERROR(CheckAllArrayOperands(instruction));
  const Shape& first = OperandShape(instruction, 0);
  const std::vector<int64_t>& dimensions = instruction.attributes().dimensions;
  if (dimensions.size() != 1) {
    return RuleError(instruction, "dimensions must have exactly one entry but has {}",
                     dimensions.size());
  }
  const int64_t d = dimensions[0];
  ALPA_RETURN_IF_ERROR(CheckDimensionList(instruction, "dimensions", dimensions, first.rank()));
  ALPA_RETURN_IF_ERROR(CheckSameDType(instruction, 1, instruction.operand_count() - 1));
  std::vector<int64_t> dims = first.dims();
  for (int64_t i = 1; i < instruction.operand_count(); ++i) {
    const Shape& operand = OperandShape(instruction, i);
    bool match = operand.rank() == first.rank();
    for (int64_t j = 0; match && j < first.rank(); ++j) match = j == d || operand.dim(j) == dims[j];
    if (!match) {
      return RuleError(instruction,
                       "operand {} {} must match operand 0 {} in every dimension but {}", i,
                       Str(operand), Str(first), d);
    }
    dims[static_cast<size_t>(d)] += operand.dim(d);
  }
  return Shape::Array(first.dtype(), std::move(dims));
}

// pad: output = low + high + size + max(size - 1, 0) * interior; low/high may be negative.
Result<Shape> InferPadShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, 2));
  ALPA_RETURN_IF_ERROR(CheckAllArrayOperands(instruction));
  const Shape& operand = OperandShape(instruction, 0);
  const Shape& value = OperandShape(instruction, 1);
  if (value.rank() != 0 || value.dtype() != operand.dtype()) {
    return RuleError(instruction, "padding value {} must be a scalar of the operand's type {}",
                     Str(value), DTypeName(operand.dtype()));
  }
  const std::vector<PaddingDim>& padding = instruction.attributes().padding;
  if (static_cast<int64_t>(padding.size()) != operand.rank()) {
    return RuleError(instruction, "padding has {} dimension(s) but the operand {} has rank {}",
                     padding.size(), Str(operand), operand.rank());
  }
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const PaddingDim& p = padding[static_cast<size_t>(i)];
    if (p.interior < 0) {
      return RuleError(instruction, "interior padding {} of dimension {} is negative", p.interior,
                       i);
    }
    const int64_t size = operand.dim(i);
    const int64_t out = p.low + p.high + size + std::max<int64_t>(size - 1, 0) * p.interior;
    if (out < 0) {
      return RuleError(instruction, "padding {}_{}_{} of dimension {} (size {}) gives size {}",
                       p.low, p.high, p.interior, i, size, out);
    }
    dims.push_back(out);
  }
  return Shape::Array(operand.dtype(), std::move(dims));
}

Result<Shape> InferReverseShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, 1));
  ALPA_RETURN_IF_ERROR(CheckArrayOperand(instruction, 0));
  const Shape& operand = OperandShape(instruction, 0);
  ALPA_RETURN_IF_ERROR(CheckDimensionList(instruction, "dimensions",
                                          instruction.attributes().dimensions, operand.rank()));
  return operand;
}

// get-dimension-size(operand), dimensions={d} -> s32[].
Result<Shape> InferGetDimensionSizeShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, 1));
  ALPA_RETURN_IF_ERROR(CheckArrayOperand(instruction, 0));
  const std::vector<int64_t>& dimensions = instruction.attributes().dimensions;
  if (dimensions.size() != 1) {
    return RuleError(instruction, "dimensions must have exactly one entry but has {}",
                     dimensions.size());
  }
  ALPA_RETURN_IF_ERROR(CheckDimensionList(instruction, "dimensions", dimensions,
                                          OperandShape(instruction, 0).rank()));
  return Shape::Scalar(DType::kS32);
}

// set-dimension-size(operand, s32[] size), dimensions={d}: the operand's shape, d dynamic.
Result<Shape> InferSetDimensionSizeShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, 2));
  ALPA_RETURN_IF_ERROR(CheckArrayOperand(instruction, 0));
  ALPA_RETURN_IF_ERROR(CheckScalarIndexOperand(instruction, 1));
  const std::vector<int64_t>& dimensions = instruction.attributes().dimensions;
  Shape result = OperandShape(instruction, 0);
  if (dimensions.size() != 1) {
    return RuleError(instruction, "dimensions must have exactly one entry but has {}",
                     dimensions.size());
  }
  ALPA_RETURN_IF_ERROR(CheckDimensionList(instruction, "dimensions", dimensions, result.rank()));
  result.set_dynamic_dim(dimensions[0], true);
  return result;
}

}  // namespace alpa::ir::shape_inference_internal
